"""The change plan: two plans compared by identity, the cabling work order, and what each
Slurm release needs run to apply the change."""
