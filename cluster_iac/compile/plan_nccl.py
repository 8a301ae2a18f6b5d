"""Derive each GPU node type's NCCL environment from its fabric, NICs and PCIe layout."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.catalog.nccl_vars import Version, nccl_variables, parse_version
from cluster_iac.plan import NodeTypePlan, Plan
from cluster_iac.plan.nccl import NcclNodeType, NcclSetting, compute_hcas, topo_path
from cluster_iac.spec import ClusterSpec

# Before 2.21 NCCL used GID index 0 (RoCE v1, link-local); the fabric's QoS plan gives the
# RoCE v2/IPv4 index (3 on MLNX_OFED, plan/qos.py). 2.21 selects a RoCE v2 GID itself.
GID_AUTO_SINCE: Version = (2, 21)
MAX_VALUE_CHARS = 1023  # src/misc/param.cc reads names and values up to 1023 characters


def plan_nccl(spec: ClusterSpec, plan: Plan) -> Plan:
    """Check the spec's NCCL variables, then build the environment of every GPU node type."""
    target = parse_version(plan.cluster.nccl_version)
    problems = list(_spec_problems(spec, plan, target))
    if problems:
        raise CompileError(problems)
    used = {node.node_type for node in plan.compute_nodes}
    return replace(plan, nccl={
        name: _node_type_env(spec, plan, nt, target)
        for name, nt in sorted(plan.node_types.items()) if nt.gpu_count and name in used
    })


def _spec_problems(spec: ClusterSpec, plan: Plan, target: Version) -> Iterator[Diagnostic]:
    yield from _variable_problems(spec.nccl.env, ("nccl", "env"), target)
    for nt in sorted(plan.node_types.values(), key=lambda nt: nt.name):
        if nt.pcie is not None:
            yield from _layout_problems(spec, nt)
    for type_name, env in sorted(spec.nccl.node_types.items()):
        path: SpecPath = ("nccl", "node_types", type_name)
        if type_name not in plan.node_types:
            yield Diagnostic("NCCL-NODE-TYPE", f"nccl.node_types names node type "
                             f"'{type_name}', which the spec does not declare", path,
                             hint=did_you_mean(type_name, plan.node_types))
        yield from _variable_problems(env, path, target)


def _variable_problems(env: Mapping[str, str | int], path: SpecPath,
                       target: Version) -> Iterator[Diagnostic]:
    known = nccl_variables()
    version = ".".join(map(str, target))
    for name, value in sorted(env.items()):
        where = (*path, name)
        variable = known.get(name)
        if variable is None:
            yield Diagnostic("NCCL-UNKNOWN-VAR", f"NCCL does not read '{name}'", where,
                             hint=did_you_mean(name, known))
            continue
        status = variable.status(target)
        if status is not None:
            code, reason = status
            hint = f"use {variable.replacement}" if variable.replacement else None
            yield Diagnostic(f"NCCL-{code}-VAR", f"{name} {reason}; cluster.nccl_version "
                             f"is {version}", where, hint=hint)
        text = str(value)
        if text != text.strip() or "\n" in text or len(text) > MAX_VALUE_CHARS:
            yield Diagnostic("NCCL-VALUE", f"{name}'s value must be one line of at most "
                             f"{MAX_VALUE_CHARS} characters without surrounding spaces "
                             "(NCCL reads nccl.conf values verbatim)", where)


def _layout_problems(spec: ClusterSpec, nt: NodeTypePlan) -> Iterator[Diagnostic]:
    """A PCIe layout must place each GPU once, on a NUMA node the sockets have."""
    layout = nt.pcie
    path: SpecPath = (("catalog", "platforms", nt.platform, "pcie")
                      if nt.platform in spec.catalog.platforms else nt.spec_path)
    devices = [dev for numa in layout.numa_nodes for sw in numa.switches for dev in sw.devices]
    gpus = sorted(dev.index for dev in devices if dev.kind == "gpu")
    if gpus != list(range(nt.gpu_count)):
        yield Diagnostic("NCCL-LAYOUT", f"the PCIe layout of platform '{nt.platform}' places "
                         f"GPUs {gpus}, node type '{nt.name}' has {nt.gpu_count}", path)
    numa_total = nt.sockets * layout.numa_per_socket
    for numa in layout.numa_nodes:
        if numa.numaid >= numa_total:
            yield Diagnostic("NCCL-LAYOUT", f"the PCIe layout of platform '{nt.platform}' uses "
                             f"NUMA node {numa.numaid}, but {nt.sockets} socket(s) x "
                             f"{layout.numa_per_socket} have {numa_total}", path)
    busids = [dev.busid for dev in devices] + [sw.busid for numa in layout.numa_nodes
                                               for sw in numa.switches if sw.busid]
    if len(busids) != len(set(busids)):
        yield Diagnostic("NCCL-LAYOUT", f"the PCIe layout of platform '{nt.platform}' gives "
                         "one bus id to two devices", path)
    yield from _netdev_problems(nt, path)


def _netdev_problems(nt: NodeTypePlan, path: SpecPath) -> Iterator[Diagnostic]:
    """Each compute NIC's ``netdev`` names one NIC (plan/host_rails.py renames the NIC it
    matches to its rail's name: two rails matching one name leave one rail unconfigured),
    and only a NIC has one. Located at the field where the spec's own catalog holds the
    layout, else at the layout's platform."""
    taken: dict[str, int] = {}
    for n, numa in enumerate(nt.pcie.numa_nodes):
        for w, switch in enumerate(numa.switches):
            for d, dev in enumerate(switch.devices):
                if dev.netdev is None:
                    continue
                where: SpecPath = (*path, "numa_nodes", n, "switches", w, "devices", d,
                                   "netdev") if path[0] == "catalog" else path
                if dev.kind != "nic":
                    yield Diagnostic("ROCE-NIC-NAME", f"GPU {dev.index} of platform "
                                     f"'{nt.platform}' has a netdev '{dev.netdev}': only a "
                                     "NIC has a network interface", where,
                                     hint="remove netdev from the GPU")
                elif dev.netdev in taken:
                    yield Diagnostic("ROCE-NIC-NAME", f"NICs {taken[dev.netdev]} and "
                                     f"{dev.index} of platform '{nt.platform}' have the same "
                                     f"netdev '{dev.netdev}': one interface cannot be both "
                                     "rails", where,
                                     hint="give each NIC the name `ip -br link` shows for "
                                          "its bus id, or remove netdev to use its systemd "
                                          "path name")
                else:
                    taken[dev.netdev] = dev.index


def _node_type_env(spec: ClusterSpec, plan: Plan, nt: NodeTypePlan,
                   target: Version) -> NcclNodeType:
    hcas = compute_hcas(nt)
    settings = {s.name: s for s in _generated(spec, plan, nt, hcas, target)
                if nccl_variables()[s.name].status(target) is None}
    for source, env in (("nccl.env", spec.nccl.env),
                        (f"nccl.node_types.{nt.name}", spec.nccl.node_types.get(nt.name, {}))):
        for name, value in env.items():
            settings[name] = NcclSetting(name, str(value), f"set by the spec ({source})")
    return NcclNodeType(
        node_type=nt.name,
        settings=tuple(settings[name] for name in sorted(settings)),
        hcas=hcas,
        topo_file=topo_path(nt.name) if nt.pcie is not None else None,
        spec_path=nt.spec_path,
    )


def _generated(spec: ClusterSpec, plan: Plan, nt: NodeTypePlan, hcas: tuple[str, ...],
               target: Version) -> Iterator[NcclSetting]:
    management = plan.settings.networks.management
    if management is not None:
        yield NcclSetting("NCCL_SOCKET_IFNAME", f"={management.interface}",
                          "bootstrap and socket traffic on the management interface, "
                          "exact name ('=' so eth0 does not also match eth01)")
    technology = fabric_technology(plan)
    if technology in ("infiniband", "roce") and hcas:
        yield NcclSetting("NCCL_IB_HCA", "=" + ",".join(hcas),
                          "the compute-fabric HCAs only, exact names ('=' so mlx5_1 does "
                          "not also match mlx5_10); storage and management ports stay out")
    if technology == "roce" and hcas:
        yield from _roce(spec, plan, target)
    compute = plan.settings.fabric.compute
    if technology == "infiniband" and compute is not None and compute.sharp:
        yield NcclSetting("NCCL_COLLNET_ENABLE", "1", "the compute fabric reduces in its "
                          "switches (fabric.compute.sharp): CollNet and NVLS across nodes; "
                          "needs the NCCL SHARP plugin (nccl-rdma-sharp-plugins) on the hosts")
    if nt.pcie is not None:
        yield NcclSetting("NCCL_TOPO_FILE", topo_path(nt.name),
                          f"PCIe/NUMA layout of {nt.platform_name} from the catalog")
    if nt.nvlink_domain == "rack":
        yield NcclSetting("NCCL_MNNVL_ENABLE", "1", "rack-scale NVLink domain: fail loudly "
                          "rather than fall back to the NICs when multi-node NVLink (IMEX) is "
                          "not set up (OCI's GB200 preset sets 1)")
        yield NcclSetting("NCCL_CUMEM_ENABLE", "1", "multi-node NVLink needs cuMem buffers")


def _roce(spec: ClusterSpec, plan: Plan, target: Version) -> Iterator[NcclSetting]:
    qos = plan.qos["compute"]
    given = spec.nccl.traffic_class
    yield NcclSetting("NCCL_IB_TC", str(qos.traffic_class if given is None else given),
                      "traffic class of the fabric's lossless RDMA queue: DSCP "
                      f"{qos.roce_dscp} (fabric.compute.qos.dscp) << 2 | ECN-capable 2"
                      + (" (nccl.traffic_class)" if given is not None else ""))
    if target < GID_AUTO_SINCE:
        yield NcclSetting("NCCL_IB_GID_INDEX", str(qos.gid_index),
                          "NCCL before 2.21 defaults to GID 0 (RoCE v1); "
                          f"{qos.gid_index} is RoCE v2/IPv4, as the hosts are set up")


def fabric_technology(plan: Plan) -> str | None:
    """'infiniband' or 'roce' for the compute fabric, None without one."""
    built = plan.fabrics.get("compute")
    if built is not None:
        return str(built.technology)
    declared = plan.settings.fabric.compute
    return str(declared.technology) if declared is not None else None
