"""How many processes a render may use: the CPUs this process may run on, and the plan size
below which a forked emitter worker costs more than it saves. A module of its own so that the
command line states PARALLEL_NODES in --jobs' help without importing the pipeline (render.py)."""

from __future__ import annotations

import os

PARALLEL_NODES = 1000


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
