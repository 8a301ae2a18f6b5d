"""How many processes a render may use: the CPUs this process may run on, and the plan size
below which a forked emitter worker costs more than it saves. A module of its own so that the
command line states PARALLEL_NODES in --jobs' help without importing the pipeline (render.py)."""

from __future__ import annotations

import os

PARALLEL_NODES = 1000
"""Plans of fewer nodes render in one process unless ``jobs`` says otherwise: at 1,000 nodes
the emitters take about 0.45 s of CPU, at 250 nodes 0.2 s (tests/benchmarks/bench_scale.py
--stages), while the fork and the worker's first touches of the plan's pages cost some
0.05 s; below that the second core saves too little to be worth it."""


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
