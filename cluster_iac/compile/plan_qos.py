"""Plan the lossless RoCE QoS of every Ethernet fabric and the hosts' RoCE ports on it; refuse a
setting that disagrees with it (NCCL's traffic class and GID index on the compute fabric, the
MTU the spec gives a network an Ethernet fabric carries)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import Plan
from cluster_iac.plan.nccl import compute_hcas
from cluster_iac.plan.qos import FabricQos, ecn_threshold
from cluster_iac.spec import ClusterSpec

ETHERNET = ("roce", "ethernet")


def plan_qos(spec: ClusterSpec, plan: Plan) -> Plan:
    """One FabricQos per Ethernet fabric; a DSCP or NCCL setting that breaks it is an error."""
    qos = {network: _fabric_qos(spec, plan, network)
           for network, built in sorted(plan.fabrics.items()) if built.technology in ETHERNET}
    problems = [*(p for q in qos.values() for p in _fabric_problems(q)),
                *_nccl_problems(spec, qos.get("compute")),
                *_mtu_problems(spec, qos.get("storage"))]
    if problems:
        raise CompileError(problems)
    # each switch of the fabric points at its fabric's record (plan/switching.py SwitchConfig.qos)
    configs = {name: replace(config, qos=qos[config.fabric]) if config.fabric in qos else config
               for name, config in plan.switch_configs.items()}
    return replace(plan, qos=qos, switch_configs=configs)


def _fabric_qos(spec: ClusterSpec, plan: Plan, network: str) -> FabricQos:
    declared = getattr(plan.settings.fabric, network)
    built = plan.fabrics[network]
    wiring = plan.fabric_wiring.get(network)
    speeds = {built.link_speed_gbps} | {speed for speed, _count in
                                        (wiring.uplinks.values() if wiring else ())}
    ports, kind = (_compute_ports(plan) if network == "compute"
                   else (_storage_ports(spec, plan), "interface"))
    return FabricQos(network=network, roce_dscp=declared.qos.dscp,
                     cnp_dscp=declared.qos.cnp_dscp, host_mtu=declared.underlay.host_mtu,
                     ecn=tuple(ecn_threshold(s) for s in sorted(speeds)),
                     spec_path=("fabric", network, "qos"), host_ports=ports, port_kind=kind)


def _compute_ports(plan: Plan) -> tuple[dict[str, tuple[str, ...]], str]:
    """Each node type's compute RDMA devices, as NCCL_IB_HCA names them (plan/nccl.py)."""
    used = {node.node_type for node in plan.nodes}
    return {name: compute_hcas(nt) for name, nt in sorted(plan.node_types.items())
            if name in used and nt.nic_count("compute")}, "device"


def _storage_ports(spec: ClusterSpec, plan: Plan) -> dict[str, tuple[str, ...]]:
    """Each node type's interfaces on the storage network: the network's ``interface`` on
    the types of the hosts it addresses, and the interfaces LNet is given there (several:
    multi-rail), in that order, each once."""
    hosts = plan.addresses.get("storage", {})
    types = {node.node_type for node in plan.nodes if node.hostname in hosts}
    declared = spec.networks.storage
    ports = {name: [declared.interface] if declared is not None else [] for name in types}
    lustre = spec.storage.lustre
    if lustre is not None and lustre.lnet.network in (None, "storage"):
        for name, interfaces in lustre.lnet.interfaces.items():
            if name in types:
                ports[name] += interfaces
    return {name: tuple(dict.fromkeys(found)) for name, found in sorted(ports.items())
            if found}


def _fabric_problems(qos: FabricQos) -> Iterator[Diagnostic]:
    if qos.roce_dscp == qos.cnp_dscp:
        yield Diagnostic("QOS-DSCP-CLASH", f"fabric.{qos.network}.qos gives RoCE and CNP the "
                         f"same DSCP {qos.roce_dscp}: CNPs would queue behind the RDMA traffic "
                         "they are to slow down", (*qos.spec_path, "cnp_dscp"),
                         hint="leave cnp_dscp at 48 (its own strict priority 6), or choose "
                              f"a DSCP other than {qos.roce_dscp}")


def _nccl_problems(spec: ClusterSpec, qos: FabricQos | None) -> Iterator[Diagnostic]:
    """NCCL's traffic class and GID index, where the spec sets them, must be the fabric's."""
    if qos is None or spec.fabric.compute is None or spec.fabric.compute.technology != "roce":
        return
    if spec.nccl.traffic_class is not None:
        yield from _tc_problem(qos, spec.nccl.traffic_class, ("nccl", "traffic_class"))
    scopes: list[tuple[SpecPath, Mapping[str, object]]] = [(("nccl", "env"), spec.nccl.env)]
    scopes += [(("nccl", "node_types", name), env)
               for name, env in sorted(spec.nccl.node_types.items())]
    for path, env in scopes:
        if "NCCL_IB_TC" in env:
            yield from _tc_problem(qos, env["NCCL_IB_TC"], (*path, "NCCL_IB_TC"))
        if "NCCL_IB_GID_INDEX" in env:
            yield from _gid_problem(qos, env["NCCL_IB_GID_INDEX"], (*path, "NCCL_IB_GID_INDEX"))


def _mtu_problems(spec: ClusterSpec, qos: FabricQos | None) -> Iterator[Diagnostic]:
    """The storage network's MTU, where the spec sets it, must be the storage fabric's host
    MTU: the OS network configuration sets that MTU on the hosts (plan/boot.py), the leaf
    ports facing them carry the fabric's, and the host script checks the two agree."""
    declared = spec.networks.storage
    if qos is None or declared is None or declared.mtu in (None, qos.host_mtu):
        return
    yield Diagnostic("QOS-HOST-MTU", f"networks.storage.mtu is {declared.mtu}, but the storage "
                     f"fabric's hosts and leaf ports are {qos.host_mtu} (fabric.storage."
                     "underlay.host_mtu): the hosts' RoCE ports would send or receive frames "
                     "of another size than the leaf ports facing them",
                     ("networks", "storage", "mtu"),
                     hint=f"remove it (the hosts then get {qos.host_mtu}), or set "
                          f"fabric.storage.underlay.host_mtu: {declared.mtu}")


def _tc_problem(qos: FabricQos, value: object, path: SpecPath) -> Iterator[Diagnostic]:
    tc = _integer(value)
    if tc is not None and 0 <= tc <= 255 and tc >> 2 == qos.roce_dscp:
        return
    shown = "" if tc is None else f" (DSCP {tc >> 2})"
    yield Diagnostic("QOS-NCCL-TC", f"{path[-1]} is {value}{shown}, but the fabric's RoCE class "
                     f"is DSCP {qos.roce_dscp} (fabric.{qos.network}.qos.dscp): NCCL's traffic "
                     "would miss the lossless priority", path,
                     hint=f"remove it (the generated value is {qos.traffic_class} = "
                          f"{qos.roce_dscp} << 2 | 2), or change fabric.{qos.network}.qos.dscp")


def _gid_problem(qos: FabricQos, value: object, path: SpecPath) -> Iterator[Diagnostic]:
    if _integer(value) == qos.gid_index:
        return
    yield Diagnostic("QOS-NCCL-GID", f"NCCL_IB_GID_INDEX is {value}, but the hosts are set up "
                     f"for RoCE v2 over IPv4, GID index {qos.gid_index}: another index is "
                     "RoCE v1 or a link-local address, which the routed fabric does not carry",
                     path, hint=f"remove it or set {qos.gid_index}")


def _integer(value: object) -> int | None:
    try:
        return int(str(value), 0)
    except ValueError:
        return None
