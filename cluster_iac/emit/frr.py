"""switches/<name>/frr.conf and switches/<name>/interfaces: each Ethernet fabric switch's FRR
configuration and its ifupdown2 interfaces, as Cumulus Linux and SONiC hosts run them; each
management and BMC network switch's ifupdown2 interfaces (bridged: it runs no BGP, so no
frr.conf).

Both come from the switch model (plan/switching.py) and decide nothing: frr.conf holds the
BGP process (eBGP, one session per fabric cable on its port for BGP unnumbered, on the far
end's /31 when numbered, the remote ASN the far switch holds, maximum-paths, the announced
prefixes) and each port's description; interfaces holds the loopback, each port's alias
(description), address and MTU. A bridged switch's interfaces holds one VLAN-aware bridge
with its VLAN, each host port an access port of it, each LACP bond a trunk of it. FRR's and
ifupdown2's syntax is line-oriented: every word comes from the plan's names (validated
identifiers: switch, host and port names, cable ids), numbers and addresses, so no spec
string can add a line.
"""

from __future__ import annotations

from typing import Any

from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.plan import Plan
from cluster_iac.plan.switching import FABRIC_MTU, PEER_VLAN, SwitchConfig

FOLDER = "switches"


def render(plan: Plan) -> dict[str, str]:
    files = {}
    for name, config in sorted(plan.switch_configs.items()):
        context = _context(config)
        files[f"{FOLDER}/{name}/frr.conf"] = render_template("switches/frr.conf.j2", **context)
        files[f"{FOLDER}/{name}/interfaces"] = render_template("switches/interfaces.j2",
                                                               **context)
    for name, config in sorted(plan.management_configs.items()):
        files[f"{FOLDER}/{name}/interfaces"] = render_template("switches/bridge.j2",
                                                               **bridged(config))
    return files


def bridged(config: SwitchConfig) -> dict[str, Any]:
    """A bridged switch's ports, bonds and VLANs: the bridge takes the host ports and the
    bonds (a bond's members are its own)."""
    return {
        "generated_by": GENERATED_BY, "switch": config.name, "role": config.role,
        "fabric": config.fabric, "model": config.model, "rack": config.rack,
        "vlans": config.vlans, "vids": " ".join(str(v.vid) for v in config.vlans),
        "mtu": max(v.mtu for v in config.vlans), "bonds": config.bonds,
        "mlag": config.mlag, "peer_vlan": PEER_VLAN,
        "interfaces": [{"name": i.name, "description": i.description, "mtu": i.mtu,
                        "vlan": i.vlan} for i in config.interfaces],
        "bridge_ports": [*({"name": i.name, "description": i.description}
                           for i in config.interfaces if not i.bond),
                         *({"name": b.name, "description": b.description}
                           for b in config.bonds)],
    }


def _context(config: SwitchConfig) -> dict[str, Any]:
    bgp = config.routing
    return {
        "generated_by": GENERATED_BY, "switch": config.name, "role": config.role,
        "fabric": config.fabric, "model": config.model, "rack": config.rack,
        "asn": config.asn, "router_id": bgp.router_id, "loopback": config.loopback,
        "fabric_mtu": FABRIC_MTU, "maximum_paths": bgp.maximum_paths,
        "networks": list(bgp.networks),
        "interfaces": [{"name": i.name, "description": i.description, "address": i.address,
                        "mtu": i.mtu} for i in config.interfaces],
        "neighbors": [{"name": n.interface if bgp.unnumbered else n.address,
                       "define": f"{n.interface} interface" if bgp.unnumbered else n.address,
                       "remote_asn": n.remote_asn, "peer": n.peer, "direction": n.direction}
                      for n in bgp.neighbors],
    }
