"""A small plan with hand-made links and cords, so the inventory emitters are tested before
(and independently of) the fabric and power passes."""

from __future__ import annotations

import dataclasses

from cluster_iac.compile.plan_cabling import plan_cabling
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Placement, PowerCord, PowerDevice, Switch
from cluster_iac.plan.physical import LinkBuilder
from tests.conftest import example_build


def _switch(name: str, model: str, network: str, tier: str, rack: str, speed: int) -> Switch:
    return Switch(name=name, model=model, network=network, tier=tier, rack=rack, ports=40,
                  port_speed_gbps=speed, height_u=1, max_power_w=640, psu_count=2,
                  psu_required=1, weight_kg=11.1, spec_path=())


def wired_plan() -> Plan:
    """The seed example (8 GPU nodes in r01, a head node in r02, Lustre servers in s01) with
    one HDR leaf in r01, a management switch in r02, and two power cords from one PDU in r02."""
    plan = example_build("seed-64gpu-h100").plan
    leaf = _switch("ib-leaf1", "qm8700", "compute", "leaf", "r01", 200)
    mgmt = _switch("mgmt-sw1", "sn2201", "management", "access", "r02", 1)
    # r01's GPU nodes 5U apart from U1; the head node and Lustre servers 3U apart from U10
    placements = {n.hostname: Placement(n.rack, 1 + 5 * i if n.rack == "r01" else 10 + 3 * i,
                                        plan.node_types[n.node_type].height_u)
                  for i, n in enumerate(plan.nodes)}
    placements.update({"ib-leaf1": Placement("r01", 48, 1), "mgmt-sw1": Placement("r02", 42, 1),
                       "r02-pdu-a": Placement("r02", 0, 0)})
    links = LinkBuilder()
    port = 0
    graph = plan.fabric_wiring["compute"].graph
    for node in plan.nodes:  # the GPU nodes' HCA, then the Lustre servers' two each
        cabled = sum(d["links"] for _u, _v, d in graph.edges(node.hostname, data=True)) \
            if node.hostname in graph else 0
        for hca in range(cabled):
            port += 1
            links.add("compute", "node-leaf", node.hostname, f"ib{hca}", "ib-leaf1",
                      f"1/{port}", 200, "infiniband")
    for i, node in enumerate(plan.nodes):
        links.add("management", "link", node.hostname, "eth0", "mgmt-sw1", f"swp{i + 1}", 1,
                  "ethernet")
    pdu = PowerDevice("r02-pdu-a", "pdu", "r02", "mgmt-208v", "A")
    cords = tuple(PowerCord("r02", "r02-pdu-a", "CB1", "L1", psu, "slurm-head1", psu, 1200,
                            "inlet", "A", 250.0, 500.0) for psu in (1, 2))
    addresses = {"management": {n.hostname: f"10.0.1.{11 + i}" for i, n in enumerate(plan.nodes)}}
    wired = dataclasses.replace(
        plan, switches=(leaf, mgmt), placements=placements, addresses=addresses,
        links=links.freeze(), power_devices=(pdu,), power_cords=cords,
        power_feeds=tuple(f for f in plan.power_feeds if f.pdu == pdu.name))
    return plan_cabling(None, wired)  # type: ignore[arg-type]  # the pass reads no spec
