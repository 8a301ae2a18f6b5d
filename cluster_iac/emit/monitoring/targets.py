"""Scrape targets: every exporter the plan implies, each labelled with where it sits."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from cluster_iac.base.sorting import natural_sorted
from cluster_iac.plan import Plan
from cluster_iac.plan.model import FabricPlan, Node

# Each exporter's own default listen port (also Prometheus' "default port allocations" page).
NODE_EXPORTER_PORT = 9100  # node_exporter --web.listen-address=":9100"
DCGM_EXPORTER_PORT = 9400  # dcgm-exporter --address=":9400"
INFINIBAND_EXPORTER_PORT = 9315  # treydock/infiniband_exporter (README: docker run -p 9315:9315)
# snmp_exporter runs beside Prometheus and polls the PDUs for it (its README's relabel recipe).
SNMP_EXPORTER_ADDRESS = "127.0.0.1:9116"  # snmp_exporter --web.listen-address=":9116"
# The node that runs a fabric's InfiniBand exporter: the first role with a port on the fabric.
FABRIC_EXPORTER_ROLES = ("controller", "service", "login", "lustre_mds", "lustre_oss", "compute")
# treydock/infiniband_exporter's README: "109 switches each having around 36 ports ... ~10
# seconds", about 0.1 s per switch: the scrape timeout grows with the fabric.
SECONDS_PER_SWITCH = 10 / 109


class Target(NamedTuple):
    """One scrape target: the address Prometheus (or the SNMP exporter) polls, its labels."""

    address: str
    labels: dict[str, str]


@dataclass(frozen=True)
class FabricExporter:
    """The InfiniBand exporter of one fabric: the host it runs on and the switches it walks."""

    fabric: str
    host: str
    switches: int


def host_address(plan: Plan, host: str) -> str:
    """The host OS's address: its management IP, or its name where the plan has no such
    network (node_exporter and dcgm-exporter listen on the OS, never on the BMC)."""
    return plan.addresses.get("management", {}).get(host, host)


def pdu_address(plan: Plan, pdu: str) -> str:
    """A PDU's network card: on the BMC network, else the management one (assign_addresses)."""
    for network in ("bmc", "management"):
        address = plan.addresses.get(network, {}).get(pdu)
        if address:
            return address
    return pdu


class HostLabels:
    """Where a host sits and what it is: the labels every series of its exporters carries
    (rack, row, role, node type, scalable unit, partitions), the lookups built once."""

    def __init__(self, plan: Plan):
        self.hosts = natural_hosts(plan)
        self.rows = _rows(plan)
        self.units = _scalable_units(plan)
        self.partitions = _partitions(plan)
        self.made: dict[str, dict[str, str]] = {}  # node_exporter's and dcgm's share them

    def __call__(self, node: Node) -> dict[str, str]:
        labels = self.made.get(node.hostname)
        if labels is None:
            labels = self.made[node.hostname] = self._labels(node)
        return labels

    def _labels(self, node: Node) -> dict[str, str]:
        labels = {"instance": node.hostname, "rack": node.rack, "row": self.rows[node.rack],
                  "role": node.role, "node_type": node.node_type}
        unit = self.units.get(node.hostname)
        if unit:
            labels["su"] = unit
        partitions = self.partitions.get(node.hostname)
        if partitions:
            labels["partition"] = ",".join(partitions)
        return labels


def node_targets(plan: Plan, labels: HostLabels) -> list[Target]:
    """node_exporter on every host."""
    os_address = plan.addresses.get("management", {})  # as host_address, looked up at once
    return [Target(f"{os_address.get(n.hostname, n.hostname)}:{NODE_EXPORTER_PORT}",
                   labels(n)) for n in labels.hosts]


def dcgm_targets(plan: Plan, labels: HostLabels) -> list[Target]:
    """dcgm-exporter on every host whose node type has GPUs."""
    os_address = plan.addresses.get("management", {})
    gpus = {name for name, nt in plan.node_types.items() if nt.gpu_count > 0}
    return [Target(f"{os_address.get(n.hostname, n.hostname)}:{DCGM_EXPORTER_PORT}",
                   labels(n)) for n in labels.hosts if n.node_type in gpus]


def pdu_targets(plan: Plan) -> list[Target]:
    """Every rack PDU, polled over SNMP: its address is the SNMP exporter's 'target' parameter."""
    rows = _rows(plan)
    pdus = natural_sorted((d for d in plan.power_devices if d.kind == "pdu"),
                          attrgetter("name"))
    bmc, management = (plan.addresses.get(network, {}) for network in ("bmc", "management"))
    # pdu_address, its lookups made once
    return [Target(bmc.get(d.name) or management.get(d.name) or d.name,
                   {"instance": d.name, "pdu": d.name, "rack": d.rack, "row": rows[d.rack],
                    "feed_side": d.side, "pdu_profile": d.model})
            for d in pdus]


def natural_hosts(plan: Plan) -> list[Node]:
    """The plan's nodes in natural order of their names (r2 before r10)."""
    return natural_sorted(plan.nodes, attrgetter("hostname"))


def fabric_exporters(plan: Plan, hosts: list[Node] | None = None) -> list[FabricExporter]:
    """One InfiniBand exporter per InfiniBand fabric, on the first host (in natural order) of
    the most management-like role cabled to it (it walks every switch of its fabric from
    there). ``hosts``: natural_hosts(plan), where the caller has it already."""
    ordered = natural_hosts(plan) if hosts is None else hosts
    by_role = {role: k for k, role in enumerate(FABRIC_EXPORTER_ROLES)}
    found = []
    for name, fabric in exporter_fabrics(plan):
        wiring = plan.fabric_wiring[name]
        cabled = [n for n in ordered if n.hostname in wiring]
        rank = min(by_role.get(n.role, len(by_role)) for n in cabled)
        host = next(n for n in cabled if by_role.get(n.role, len(by_role)) == rank)
        found.append(FabricExporter(name, host.hostname, sum(fabric.switch_counts.values())))
    return found


def exporter_fabrics(plan: Plan) -> list[tuple[str, FabricPlan]]:
    """The fabrics that get an InfiniBand exporter: InfiniBand, with a host cabled to them."""
    return [(name, fabric) for name, fabric in sorted(plan.fabrics.items())
            if fabric.technology == "infiniband" and name in plan.fabric_wiring
            and any(n.hostname in plan.fabric_wiring[name] for n in plan.nodes)]


def fabric_targets(plan: Plan, labels: HostLabels) -> list[Target]:
    """The InfiniBand exporter of each InfiniBand fabric."""
    nodes = {n.hostname: n for n in plan.nodes}
    return [Target(f"{host_address(plan, f.host)}:{INFINIBAND_EXPORTER_PORT}",
                   {**labels(nodes[f.host]), "fabric": f.fabric})
            for f in fabric_exporters(plan, labels.hosts)]


def fabric_scrape_seconds(plan: Plan) -> tuple[int, int]:
    """(interval, timeout) for the InfiniBand job: 1.5 x the estimated walk of the largest
    fabric, at least 30 s, and the interval the next whole minute above it."""
    walk = max((sum(fabric.switch_counts.values()) * SECONDS_PER_SWITCH
                for _, fabric in exporter_fabrics(plan)), default=0.0)
    timeout = max(30, math.ceil(1.5 * walk))
    return 60 * math.ceil(timeout / 60), timeout


def _rows(plan: Plan) -> dict[str, str]:
    return {r.name: r.row for r in plan.racks}


def _partitions(plan: Plan) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for part in sorted(plan.partitions, key=lambda p: p.name):
        for host in part.nodes:
            found[host].append(part.name)
    return found


def _scalable_units(plan: Plan) -> dict[str, str]:
    """Host -> its scalable unit of the compute fabric (the fabric pass's wiring)."""
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None:
        return {}
    return {host: str(wiring.su[host]) for host in wiring.hosts()}
