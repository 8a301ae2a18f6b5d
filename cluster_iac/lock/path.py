"""Where a spec's lock is: beside it, the spec's name with SUFFIX. A module of its own, with no
import beyond pathlib, so that the commands that only look for the lock (render over a tree
already current, --check, changes: write/recall.py) do not load the lock's grammar and the
plan's model to find it (tests/test_startup.py)."""

from __future__ import annotations

from pathlib import Path

SUFFIX = ".lock"


def lock_path(spec_file: str | Path) -> Path:
    """``cluster.yaml`` -> ``cluster.lock`` in the same folder."""
    spec = Path(spec_file)
    return spec.with_name(spec.stem + SUFFIX)
