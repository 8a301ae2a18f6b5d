"""NCCL checks: the targeted NCCL release knows the GPUs it runs on, and the device names
the NCCL files give are declared, not guessed."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.catalog.nccl_vars import Version, parse_version
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.nccl import layout_describes_nics, layout_nics

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


@check("nccl.guessed_names")
def guessed_names(plan: Plan) -> Iterator[Diagnostic]:
    """Device names the NCCL files guess rather than know: NCCL_SOCKET_IFNAME from the
    default management interface (eth0, which a bare-metal host with predictable interface
    names does not have: NCCL then finds no socket interface and the job fails to start),
    and NCCL_IB_HCA as mlx5_0, mlx5_1, ... where the platform's catalog entry has no PCIe
    layout naming its compute NICs (another adapter enumerating first shifts them all).
    Not where the spec sets the variable itself (nccl.env, nccl.node_types)."""
    management = plan.settings.networks.management
    # (node type, variable) the spec sets itself (plan_nccl's reason for those)
    spec_set = {(name, s.name) for name, env in plan.nccl.items() for s in env.settings
                if s.reason.startswith("set by the spec")}
    ifname = [name for name, env in sorted(plan.nccl.items())
              if "NCCL_SOCKET_IFNAME" in env.env()
              and (name, "NCCL_SOCKET_IFNAME") not in spec_set]
    if management is not None and ifname and "interface" not in management.model_fields_set:
        yield Diagnostic(
            "NCCL-GUESSED-IFNAME",
            f"NCCL_SOCKET_IFNAME is ={management.interface} for node type(s) "
            f"{', '.join(ifname)}: the default of networks.management.interface, not a name "
            f"the spec declares; a host with predictable interface names (eno1, enp170s0f0) "
            f"has no {management.interface}, and NCCL finds no socket interface to bootstrap",
            ("networks", "management"), Severity.WARNING,
            hint="declare the in-band interface as the nodes name it (`ip -br link` on one): "
                 "networks: {management: {interface: enp170s0f0}}",
            details={"measured": management.interface, "limit": "declared", "unit": "name"})
    for name, env in sorted(plan.nccl.items()):
        nt = plan.node_types[name]
        hca = env.env().get("NCCL_IB_HCA")
        if hca is None or (name, "NCCL_IB_HCA") in spec_set or (
                layout_describes_nics(nt) and all(dev.name for dev in layout_nics(nt))):
            continue
        why = ("has no PCIe layout in the catalog" if nt.pcie is None else
               "has a PCIe layout that does not describe its compute NICs (the spec changed "
               "them)" if not layout_describes_nics(nt) else
               "has a PCIe layout without the NICs' RDMA names")
        yield Diagnostic(
            "NCCL-GUESSED-HCA",
            f"node type {name}: NCCL_IB_HCA{hca} is a guess: its platform {nt.platform} {why}, "
            f"so the compute HCAs are taken to enumerate first as mlx5_0, mlx5_1, ...; an "
            f"adapter that enumerates before them (a storage or in-band ConnectX) shifts the "
            f"names and NCCL runs on the wrong ports or none",
            nt.spec_path, Severity.WARNING,
            hint=f"declare the names `ibdev2netdev` prints on a node, in rail order: nccl: "
                 f"{{node_types: {{{name}: {{NCCL_IB_HCA: \"=mlx5_0,...\"}}}}}}, or give "
                 f"the platform a pcie layout with each NIC's name (catalog.platforms)",
            details={"measured": hca.lstrip("="), "limit": "declared", "unit": "names"})
