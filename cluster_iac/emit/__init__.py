"""Emitters: one module per artifact family, each ``render(plan) -> {relative path: text}``.

EMITTERS is the table: a new family is one module in this folder and one line below (and its
files' place in the playbook, emit/playbook_files.py). Emitters read only the plan, never the
spec nor another emitter's output; structured files come from cluster_iac/formats/'s
serializers, line-oriented ones from templates/ through emit/base.py. A family whose large
files are written piece by piece when rendering into a folder also has ``render_chunks``
(CHUNKED). Rendering on two processes is emit/parallel.py's, behind render_each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cluster_iac.emit import (
    acceptance,
    ansible,
    avd,
    cabling,
    cloud_init,
    dhcp,
    dns,
    drawings,
    facility,
    frr,
    healthcheck,
    imex,
    lustre,
    mig,
    monitoring,
    nccl,
    netbox,
    netbox_cables,
    netbox_types,
    parallel,
    playbook,
    qos,
    report,
    slurm,
    slurmdbd,
    subnet_manager,
    terraform,
)
from cluster_iac.emit.parallel import Made, Sink, WorkerUsage
from cluster_iac.plan import Plan

Emitter = Callable[[Plan], dict[str, Any]]

# One entry per artifact family, in the order their files are listed; grep here to find who
# writes a file (emit/<module>.py).
EMITTERS: dict[str, Emitter] = {
    "slurm": slurm.render,
    "slurmdbd": slurmdbd.render,
    "healthcheck": healthcheck.render,
    "ansible": ansible.render,
    "playbook": playbook.render,
    "terraform": terraform.render,
    "cabling": cabling.render,
    "netbox_cables": netbox_cables.render,
    "netbox_types": netbox_types.render,
    "netbox": netbox.render,
    "facility": facility.render,
    "nccl": nccl.render,
    "qos": qos.render,
    "lustre": lustre.render,
    "monitoring": monitoring.render,
    "subnet_manager": subnet_manager.render,
    "frr": frr.render,
    "avd": avd.render,
    "imex": imex.render,
    "mig": mig.render,
    "dns": dns.render,
    "dhcp": dhcp.render,
    "cloud_init": cloud_init.render,
    "drawings": drawings.render,
    "acceptance": acceptance.render,
    "report": report.render,
}

# The families whose largest files come as formats' Chunks when rendering into a folder, so
# they are written piece by piece as they are made instead of held whole.
CHUNKED: dict[str, Emitter] = {
    "ansible": ansible.render_chunks,
    "avd": avd.render_chunks,
    "cabling": cabling.render_chunks,
    "netbox_cables": netbox_cables.render_chunks,
    "subnet_manager": subnet_manager.render_chunks,
}


def render_all(plan: Plan, jobs: int = 1) -> dict[str, str]:
    """Every output file, keyed by its path under the output directory, sorted."""
    return render_files(plan, jobs)[0]


def render_files(plan: Plan, jobs: int = 1) -> tuple[dict[str, str], tuple[WorkerUsage, ...]]:
    """render_all, and the forked worker's usage (``jobs`` 2 or more); the files are the
    same either way."""
    made, workers = render_each(plan, jobs, _pairs)
    return dict(sorted(made.items())), workers


def render_each(plan: Plan, jobs: int, sink: Sink[list[tuple[str, Made]]], *,
                chunked: bool = False) -> tuple[dict[str, Made], tuple[WorkerUsage, ...]]:
    """Each family's files handed to ``sink`` as soon as the family is made (with ``jobs`` 2
    or more, about half of them in a forked worker); path -> what the sink made of it, for
    every path, each written by one family only. ``chunked``: the CHUNKED families' large
    files come as Chunks (for a sink that writes them, write/tree.py StagedTree.write_all)."""
    emitters = {family: CHUNKED[family] if chunked and family in CHUNKED else emitter
                for family, emitter in EMITTERS.items()}
    made, workers = parallel.render(plan, emitters, jobs, sink)
    every: dict[str, Made] = {}
    for family, files in made.items():
        for path, value in files:
            if path in every:
                raise ValueError(f"emitter {family!r} writes {path!r} twice")
            every[path] = value
    return every, workers


def _pairs(files: dict[str, str]) -> list[tuple[str, str]]:
    return list(files.items())
