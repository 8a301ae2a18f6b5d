"""The acceptance checker: the acceptance jobs' results, read in their tools' own formats,
judged against the bars the plan predicted."""
