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


def render_all(plan: Plan) -> dict[str, str]:
    """Every output file, keyed by its path under the output directory, sorted."""
    files: dict[str, str] = {}
    for family, emitter in EMITTERS.items():
        for path, text in emitter(plan).items():
            if path in files:
                raise ValueError(f"emitter {family!r} writes {path!r} twice")
            files[path] = text
    return dict(sorted(files.items()))
