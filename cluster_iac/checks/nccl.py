"""NCCL checks: the targeted NCCL release knows the GPUs it runs on."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic
from cluster_iac.catalog.nccl_vars import Version, parse_version
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan

FIRST_NCCL: dict[str, tuple[Version, str]] = {
    # NCCL 2.25.1-1 release notes: "Add Blackwell/SM100 support: add compilation for sm100,
    # graph search speeds for Blackwell, ... extra checks for IMEX setup, needed for MNNVL";
    # earlier libraries carry no sm_100 kernels and fail on B200/GB200 ("named symbol not
    # found", aws-samples/aws-parallelcluster-post-install-scripts#56)
    "blackwell": ((2, 25), "NCCL 2.25.1 release notes: Add Blackwell/SM100 support"),
}


@check("nccl.gpu_generation")
def gpu_generation(plan: Plan) -> Iterator[Diagnostic]:
    """cluster.nccl_version is at least the first NCCL release with kernels and tuning for
    each GPU architecture the compute nodes have."""
    target = parse_version(plan.cluster.nccl_version)
    used = {n.node_type for n in plan.compute_nodes}
    for name in sorted(used):
        nt = plan.node_types[name]
        first = FIRST_NCCL.get(nt.gpu_architecture or "")
        if first is None or target >= first[0]:
            continue
        need = ".".join(map(str, first[0]))
        yield Diagnostic(
            "NCCL-GPU-GENERATION",
            f"node type {name} has {nt.gpu_architecture} GPUs ({nt.gpu_model}), which NCCL "
            f"supports from {need}; cluster.nccl_version is {plan.cluster.nccl_version} "
            f"({first[1]})",
            ("cluster", "nccl_version"), hint=f"cluster: {{nccl_version: \"{need}\"}} or later",
            details={"measured": plan.cluster.nccl_version, "limit": need, "unit": "release"})
