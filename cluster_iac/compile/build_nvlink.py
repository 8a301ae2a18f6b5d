"""NVLink domains: each HGX/DGX board, and rack-scale domains with their NVLink switch trays."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.plan import NvlinkDomain, Plan
from cluster_iac.plan.model import Switch
from cluster_iac.spec import ClusterSpec

# GB200 NVL72: 72 GPUs, each with 18 NVLink 5 links, two to each of 9 NVLink switch trays
# (NVIDIA GB200 NVL72 product brief); the trays ride in the rack, fed by its busbar.
SWITCH_TRAY = "nvlink5-switch-tray"
TRAYS_PER_RACK_DOMAIN = 9
LINKS_PER_GPU_PER_TRAY = 2


def build_nvlink(spec: ClusterSpec, plan: Plan) -> Plan:
    """One domain per board node; one per rack of rack-scale nodes, with its switch trays."""
    domains: list[NvlinkDomain] = []
    by_rack: dict[str, list[tuple[str, str]]] = {}  # rack -> (hostname, node type)
    for node in plan.nodes:
        node_type = plan.node_types[node.node_type]
        if node_type.nvlink_domain == "board":
            domains.append(NvlinkDomain(node.hostname, "board", (node.hostname,),
                                        node_type.gpu_count, node_type.gpu_nvlink_gbs))
        elif node_type.nvlink_domain == "rack":
            by_rack.setdefault(node.rack, []).append((node.hostname, node.node_type))
    if not by_rack:
        return replace(plan, nvlink_domains=tuple(domains))
    import networkx as nx  # only for rack-scale domains: a board-only spec starts without it

    graph = nx.Graph()
    switches = list(plan.switches)
    model = plan.catalog.switches[SWITCH_TRAY]
    racks = [r.name for r in plan.racks if r.name in by_rack]  # rack order of the spec
    for rack in racks:
        members = by_rack[rack]
        node_type = plan.node_types[members[0][1]]
        trays = tuple(f"{rack}-nvsw{i}" for i in range(1, TRAYS_PER_RACK_DOMAIN + 1))
        gpus = sum(plan.node_types[t].gpu_count for _h, t in members)
        domains.append(NvlinkDomain(rack, "rack", tuple(h for h, _t in members), gpus,
                                    node_type.gpu_nvlink_gbs, trays))
        for tray in trays:
            graph.add_node(tray, kind="switch", tier="nvswitch-tray", domain=rack)
            switches.append(Switch(tray, SWITCH_TRAY, "nvlink", "nvswitch-tray", rack,
                                   *Switch.figures(model, node_type.spec_path)))
        for host, type_name in members:
            graph.add_node(host, kind="node", domain=rack)
            links = plan.node_types[type_name].gpu_count * LINKS_PER_GPU_PER_TRAY
            for tray in trays:
                graph.add_edge(host, tray, links=links)
    graphs = dict(plan.graphs, nvlink=graph)
    return replace(plan, nvlink_domains=tuple(domains), switches=tuple(switches), graphs=graphs)

