"""Lossless RoCE QoS files: each RoCE node type's host script, the systemd unit that runs it at
boot, and each Ethernet fabric's switch QoS.

``qos/<node type>.roce-host.sh`` sets every RoCE port of the node type, on each Ethernet fabric
(plan/qos.py FabricQos.host_ports: the compute HCAs, the storage network's interfaces), to the
classes that fabric's switches use (trust DSCP, PFC on the RoCE priority, ECN/CNP, the RDMA
traffic class), and checks each port's MTU is the fabric's host MTU, which the OS network
configuration sets (cloud-init network-config, DHCP option 26: one owner, no race between
two writers at boot); ``qos/<fabric>.yaml`` is the
switches' QoS as data (DSCP -> priority, PFC, ECN per port speed, each value's source), the
table both switch dialects apply. The values are the plan's (plan/qos.py), never computed here.

``qos/cluster-iac-roce-qos.service`` runs the installed script once at every boot (mlnx_qos
and the sysfs values last until the next driver load), a oneshot that stays active
(systemd.service(5): Type=oneshot, RemainAfterExit=yes). Its order (systemd.unit(5) After=,
Before=; systemd.special(7)):

- after ``openibd.service``, MLNX_OFED's unit that loads the mlx5 driver and creates the
  HCAs' netdevs the script walks (an ordering only: a host without it is not held up);
- before ``network-online.target`` (and wanted by it): what waits for the network, such as
  Lustre's ``_netdev`` mounts over LNet o2ib, starts on lossless NICs;
- before ``slurmd.service``: no job is started on a NIC still lossy.

Every line is a constant of this module (no spec string reaches the unit).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.formats.shell import shell_word
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.qos import FabricQos

SCRIPT_DEST = "/usr/local/sbin/cluster-iac-roce-qos.sh"  # where the playbook installs it
# How long the script waits for a port's MTU to be the fabric's before it reports it: the OS
# network configuration (systemd-networkd, ifupdown) may still be configuring the port when
# the unit runs (it is ordered before network-online.target, not after the configuration).
MTU_WAIT_S = 30
UNIT_NAME = "cluster-iac-roce-qos.service"
UNIT_PATH = f"qos/{UNIT_NAME}"  # in the rendered tree
UNIT_DEST = f"/etc/systemd/system/{UNIT_NAME}"  # systemd.unit(5): the local administrator's
UNIT = {  # section -> (key, value), in order
    "Unit": (("Description", "Lossless RoCE QoS of the RoCE NICs (cluster-iac)"),
             ("After", "openibd.service"),
             ("Before", "network-online.target slurmd.service")),
    "Service": (("Type", "oneshot"), ("RemainAfterExit", "yes"),
                ("ExecStart", SCRIPT_DEST)),
    "Install": (("WantedBy", "multi-user.target network-online.target"),),
}


def render(plan: Plan) -> dict[str, str]:
    files = {f"qos/{network}.yaml": yaml_text(switch_qos(qos), [GENERATED_BY])
             for network, qos in sorted(plan.qos.items())}
    node_type = {n.hostname: n.node_type for n in plan.nodes}
    railed = {network: {node_type[h] for h in plan.rails.get(network, ())} for network in plan.qos}
    for name in roce_node_types(plan):
        files[host_script_path(name)] = host_script(name, [
            qos for _network, qos in sorted(plan.qos.items()) if name in qos.host_ports],
            {network for network, types in railed.items() if name in types})
    if any(path.endswith(".roce-host.sh") for path in files):
        files[UNIT_PATH] = boot_unit()
    return files


def boot_unit() -> str:
    """The systemd unit that runs the host script at boot (the module docstring's order)."""
    lines = [f"# {GENERATED_BY}", f"# Runs {SCRIPT_DEST} once at every boot; docs/roce-qos.md."]
    for section, keys in UNIT.items():
        lines += ["", f"[{section}]", *(f"{key}={value}" for key, value in keys)]
    return "\n".join(lines) + "\n"


def host_script_path(node_type: str) -> str:
    """Where the tree holds a node type's host QoS script."""
    return f"qos/{node_type}.roce-host.sh"


def roce_node_types(plan: Plan) -> list[str]:
    """The node types with a RoCE port on some Ethernet fabric: each gets a host script."""
    return sorted({name for qos in plan.qos.values() for name in qos.host_ports})


def host_script(node_type: str, fabrics: list[FabricQos],
                railed: AbstractSet[str] = frozenset()) -> str:
    """The script that sets one node type's RoCE ports, on each fabric in ``fabrics``, to that
    fabric's QoS, and checks each port's MTU where the OS network configuration owns it: a
    storage network's interfaces, and a compute fabric's RoCE NICs on the fabrics in
    ``railed`` (the node's netplan rails file sets them, plan/host_rails.py, emit/playbook.py);
    it sets the MTU of the other ports it walks by RDMA device. The
    priorities are the same constants on every fabric (plan/qos.py); the DSCPs, and so the
    ToS, each fabric's own."""
    first = fabrics[0]
    variables = [("ROCE_PRIORITY", first.roce_priority), ("CNP_PRIORITY", first.cnp_priority)]
    checked = {q.network for q in fabrics if q.port_kind != "device" or q.network in railed}
    if checked:
        variables.append(("MTU_WAIT_S", MTU_WAIT_S))
    assert all((q.roce_priority, q.cnp_priority) == (first.roce_priority, first.cnp_priority)
               for q in fabrics)
    return render_template(
        "qos/roce-host.sh.j2", node_type=node_type, generated_by=GENERATED_BY,
        switch_mtu=first.switch_mtu,
        variables=[(name, shell_word(value)) for name, value in variables],
        fabrics=[{"network": q.network, "dscp": q.roce_dscp, "kind": q.port_kind,
                  "ports": shell_word(" ".join(q.host_ports[node_type])),
                  "pfc": shell_word(q.pfc), "tos": shell_word(q.traffic_class),
                  "cnp_dscp": shell_word(q.cnp_dscp), "mtu": shell_word(q.host_mtu),
                  "check_mtu": q.network in checked}
                 for q in fabrics])


def switch_qos(qos: FabricQos) -> dict[str, object]:
    """The switches' QoS of one fabric as plain data."""
    return {
        "fabric": qos.network,
        "trust": "dscp",
        "classes": [
            {"name": "roce", "dscp": qos.roce_dscp, "priority": qos.roce_priority,
             "traffic_class": qos.roce_priority, "pfc": True, "scheduling": "wrr 50%"},
            {"name": "cnp", "dscp": qos.cnp_dscp, "priority": qos.cnp_priority,
             "traffic_class": qos.cnp_priority, "pfc": False, "scheduling": "strict"},
            {"name": "default", "dscp": "other", "priority": 0, "traffic_class": 0,
             "pfc": False, "scheduling": "wrr 50%"}],
        "ecn": [{"speed_gbps": e.speed_gbps, "min_bytes": e.min_bytes,
                 "max_bytes": e.max_bytes, "probability_pct": e.probability_pct,
                 "source": e.source} for e in qos.ecn],
        "host": {"traffic_class": qos.traffic_class, "gid_index": qos.gid_index,
                 "mtu": qos.host_mtu},
        "switch_port_mtu": qos.switch_mtu,
    }
