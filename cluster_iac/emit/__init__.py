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
from cluster_iac.emit.parallel import WorkerUsage, render_two, split
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


# CPU seconds of each family at 100,000 GPUs (tests/benchmarks/bench_scale.py --stages,
# November 2026): only to split the families between two processes about evenly.
COST: dict[str, float] = {
    "cabling": 2.0, "ansible": 1.4, "netbox": 1.2, "facility": 0.5, "monitoring": 0.45,
    "terraform": 0.4, "report": 0.35, "slurm": 0.15,
}


def render_all(plan: Plan, jobs: int = 1) -> dict[str, str]:
    """Every output file, keyed by its path under the output directory, sorted."""
    return render_files(plan, jobs)[0]


def render_files(plan: Plan, jobs: int = 1) -> tuple[dict[str, str], tuple[WorkerUsage, ...]]:
    """render_all, and the forked worker's usage: with ``jobs`` 2 or more a worker renders
    about half of the families (emit/parallel.py); the files are the same."""
    workers: tuple[WorkerUsage, ...] = ()
    if jobs > 1:
        _ours, theirs = split({family: COST.get(family, 0.01) for family in EMITTERS})
        rendered, usage = render_two(plan, EMITTERS, theirs)
        by_family = [(family, rendered[family]) for family in EMITTERS]
        workers = (usage,)
    else:
        by_family = [(family, list(emitter(plan).items())) for family, emitter in EMITTERS.items()]
    files: dict[str, str] = {}
    for family, pairs in by_family:
        for path, text in pairs:
            if path in files:
                raise ValueError(f"emitter {family!r} writes {path!r} twice")
            files[path] = text
    return dict(sorted(files.items())), workers
