"""Emitters: each family renders the plan into {relative path: text}."""

from __future__ import annotations

from collections.abc import Callable

from cluster_iac.emit import (
    ansible,
    cabling,
    facility,
    healthcheck,
    lustre,
    monitoring,
    nccl,
    netbox,
    report,
    slurm,
    slurmdbd,
    terraform,
)
from cluster_iac.emit.parallel import Made, Sink, WorkerUsage, render_two, split
from cluster_iac.plan import Plan

Emitter = Callable[[Plan], dict[str, str]]

# One entry per artifact family; grep here to find who writes a file.
EMITTERS: dict[str, Emitter] = {
    "slurm": slurm.render,
    "slurmdbd": slurmdbd.render,
    "healthcheck": healthcheck.render,
    "ansible": ansible.render,
    "terraform": terraform.render,
    "cabling": cabling.render,
    "netbox": netbox.render,
    "facility": facility.render,
    "nccl": nccl.render,
    "lustre": lustre.render,
    "monitoring": monitoring.render,
    "report": report.render,
}


# CPU seconds of each family at 100,000 GPUs, writing its files included (about 4 ms per
# MiB; tests/benchmarks/bench_scale.py --stages, 23 Nov 2026 23:10 UTC): only to split the
# families between two processes about evenly.
COST: dict[str, float] = {
    "cabling": 1.4, "netbox": 1.0, "facility": 0.65, "ansible": 0.6, "monitoring": 0.4,
    "report": 0.33, "terraform": 0.3, "slurm": 0.22,
}
TOGETHER = (("cabling", "netbox"),)
"""Families rendered by the same process: the two that took by far the most memory while they
were made (at 100,000 GPUs about 210 and 90 MiB over the plan; since their formats were
streamlined, 140 and 60, beside Ansible's 60). Together, one process peaks with the larger and
the other with neither; and together they are about half of the emitters' CPU time."""


def worker_families() -> list[str]:
    """The families a forked worker renders (``jobs`` 2 or more)."""
    return split({family: COST.get(family, 0.01) for family in EMITTERS}, TOGETHER)[1]


def render_all(plan: Plan, jobs: int = 1) -> dict[str, str]:
    """Every output file, keyed by its path under the output directory, sorted."""
    return render_files(plan, jobs)[0]


def render_files(plan: Plan, jobs: int = 1) -> tuple[dict[str, str], tuple[WorkerUsage, ...]]:
    """render_all, and the forked worker's usage: with ``jobs`` 2 or more a worker renders
    about half of the families (emit/parallel.py); the files are the same."""
    made, workers = render_each(plan, jobs, _pairs)
    return dict(sorted(made.items())), workers


def render_each(plan: Plan, jobs: int, sink: Sink[list[tuple[str, Made]]],
                ) -> tuple[dict[str, Made], tuple[WorkerUsage, ...]]:
    """Each family's files handed to ``sink`` as soon as the family is made, in this process
    or (``jobs`` 2 or more) in the forked worker, which renders about half of the families;
    path -> what the sink made of it, for every path (each written by one family only)."""
    workers: tuple[WorkerUsage, ...] = ()
    if jobs > 1:
        made, usage = render_two(plan, EMITTERS, worker_families(), sink)
        by_family = [(family, made[family]) for family in EMITTERS]
        workers = (usage,)
    else:
        by_family = [(family, sink(emitter(plan))) for family, emitter in EMITTERS.items()]
    every: dict[str, Made] = {}
    for family, pairs in by_family:
        for path, value in pairs:
            if path in every:
                raise ValueError(f"emitter {family!r} writes {path!r} twice")
            every[path] = value
    return every, workers


def _pairs(files: dict[str, str]) -> list[tuple[str, str]]:
    return list(files.items())
