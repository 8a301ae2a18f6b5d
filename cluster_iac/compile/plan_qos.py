"""Plan the lossless RoCE QoS of every Ethernet fabric; refuse a setting that disagrees with it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import Plan
from cluster_iac.plan.qos import FabricQos, ecn_threshold
from cluster_iac.spec import ClusterSpec

ETHERNET = ("roce", "ethernet")


def plan_qos(spec: ClusterSpec, plan: Plan) -> Plan:
    """One FabricQos per Ethernet fabric; a DSCP or NCCL setting that breaks it is an error."""
    qos = {network: _fabric_qos(plan, network) for network, built in sorted(plan.fabrics.items())
           if built.technology in ETHERNET}
    problems = [*(p for q in qos.values() for p in _fabric_problems(q)),
                *_nccl_problems(spec, qos.get("compute"))]
    if problems:
        raise CompileError(problems)
    # each switch of the fabric points at its fabric's record (plan/switching.py SwitchConfig.qos)
    configs = {name: replace(config, qos=qos[config.fabric]) if config.fabric in qos else config
               for name, config in plan.switch_configs.items()}
    return replace(plan, qos=qos, switch_configs=configs)


def _fabric_qos(plan: Plan, network: str) -> FabricQos:
    declared = getattr(plan.settings.fabric, network)
    built = plan.fabrics[network]
    wiring = plan.fabric_wiring.get(network)
    speeds = {built.link_speed_gbps} | {speed for speed, _count in
                                        (wiring.uplinks.values() if wiring else ())}
    return FabricQos(network=network, roce_dscp=declared.qos.dscp,
                     cnp_dscp=declared.qos.cnp_dscp, host_mtu=declared.underlay.host_mtu,
                     ecn=tuple(ecn_threshold(s) for s in sorted(speeds)),
                     spec_path=("fabric", network, "qos"))


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
