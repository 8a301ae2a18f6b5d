"""The last stage, write: the rendered tree written atomically as a whole (tree.py), or
compared with what is on disk (`render --check`, compare.py); the manifest that says which
files are the tool's (manifest.py); one file's bytes, digest and mode (files.py)."""
