"""Slurm: what the Slurm pass noticed but did not refuse (slurm.extra keys it cannot vouch for)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan


@check("slurm.extra")
def extra_keys(plan: Plan) -> Iterator[Diagnostic]:
    """slurm.extra keys whose support in the targeted release the key table cannot confirm,
    and keys written in another case than slurm.conf(5)'s."""
    if plan.slurm is not None:
        yield from plan.slurm.findings
