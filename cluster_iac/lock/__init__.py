"""The lock file beside the spec: its kinds of line and their fields (grammar.py), read
(read.py; fast.py for a lock as render writes it; collisions.py) into the identities the
passes keep (plan/kept.py), and written again from the plan (text.py), with every line
located."""
