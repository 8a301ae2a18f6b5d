"""What every stage shares: diagnostics and the source positions they cite, hostlists,
natural order, 'did you mean', the characters a spec string may hold, and where templates/
and schemas/ are."""
