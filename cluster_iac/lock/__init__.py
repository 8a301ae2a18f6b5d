"""The lock file beside the spec: read (read.py) into the identities the passes keep
(plan/kept.py), and written again from the plan (text.py), with every line located."""
