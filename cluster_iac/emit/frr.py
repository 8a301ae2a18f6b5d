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

A bridged switch's file is written by bridge_text in Python, a port's stanza one text: a 100,000-GPU
design has some 7,000 of these switches and 100,000 ports, and Jinja's per-attribute lookups
were most of the family's time. templates/switches/bridge.j2 prints the same file from
bridged()'s context and is its oracle: tests/test_management_switches.py renders every
example's switches both ways and compares the bytes. A line added to one is added to both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.plan import Plan
from cluster_iac.plan.switching import FABRIC_MTU, PEER_VLAN, Bond, SwitchConfig

FOLDER = "switches"


def render(plan: Plan) -> dict[str, str]:
    files = {}
    for name, config in sorted(plan.switch_configs.items()):
        files[f"{FOLDER}/{name}/frr.conf"] = ROUTED_FRR_WRITER(config)
        files[f"{FOLDER}/{name}/interfaces"] = ROUTED_INTERFACES_WRITER(config)
    bonds: dict[tuple[Bond, str], tuple[str, str]] = {}  # shared by every bridged switch
    for name, config in sorted(plan.management_configs.items()):
        files[f"{FOLDER}/{name}/interfaces"] = BRIDGE_WRITER(config, bonds)
    return files


# The words of every bridged switch's file that name nothing of it, and of every bond's stanza
_BRIDGE_NOTES = [
    "# host ports untagged (access), LACP bonds to other switches tagged (trunk), the "
    "bridge's MTU",
    "# its ports'; a bridge-ports line per port (ifupdown2 joins them), so a new host "
    "changes only",
    "# lines that name it; no BGP, no frr.conf"]
_LACP = ("    bond-mode 802.3ad\n    bond-lacp-rate fast\n    bond-miimon 100\n"
         "    bond-xmit-hash-policy layer3+4\n")


def bridge_text(config: SwitchConfig,
                bonds: dict[tuple[Bond, str], tuple[str, str]] | None = None) -> str:
    """A bridged switch's ifupdown2 interfaces, the bytes bridge.j2 prints (bridge_template):
    its host ports (access), its bonds (trunks), the bridge over both. ``bonds``: each bond's
    stanza and bridge line by (bond, VLAN ids), kept across the switches of one render: the
    access switches below one pair have the same uplink bond, written once."""
    vids = " ".join(str(v.vid) for v in config.vlans)
    vlans = ", ".join(f"VLAN {v.vid} ({v.name}, MTU {v.mtu})" for v in config.vlans)
    lines = [
        f"# {GENERATED_BY}",
        f"# ifupdown2 interfaces of {config.name} ({config.role} switch of the "
        f"{config.fabric} network, {config.model}, rack {config.rack}):",
        f"# one VLAN-aware bridge; {vlans};", *_BRIDGE_NOTES]
    mlag = config.mlag
    if mlag:
        lines += [
            f"# MLAG (Cumulus CLAG) pair {mlag.domain} with {mlag.peer}: peer link bond "
            f"'peerlink', clagd on",
            f"# peerlink.{PEER_VLAN} (IPv6 link-local peer address), system MAC "
            f"{mlag.system_mac} on both; each bond to a",
            "# switch below is dual-homed, clag-id the same on both switches"]
    bridge: list[str] = []  # the bridge's ports under their descriptions: host ports, bonds
    for port in config.interfaces:  # a port's stanza as one text, its blank line ending it
        # the port's description (SwitchInterface.description), written out: 100,000 ports
        name, alias = port.name, f"{port.peer}:{port.peer_port} {port.cable_id}"
        if port.vlan:
            lines.append(f"auto {name}\niface {name}\n    alias {alias}\n"
                         f"    mtu {port.mtu}\n    bridge-access {port.vlan}\n")
        else:
            lines.append(f"auto {name}\niface {name}\n    alias {alias}\n    mtu {port.mtu}\n")
        if not port.bond:
            bridge.append(f"    # {alias}\n    bridge-ports {name}")
    known = {} if bonds is None else bonds
    for bond in config.bonds:
        found = known.get((bond, vids))
        if found is None:
            found = known[bond, vids] = _bond_text(bond, vids)
        lines.append(found[0])
        bridge.append(found[1])
    if mlag:
        lines += [f"auto peerlink.{PEER_VLAN}", f"iface peerlink.{PEER_VLAN}",
                  f"    alias clagd {mlag.domain} {mlag.peer}", "    clagd-peer-ip linklocal",
                  f"    clagd-sys-mac {mlag.system_mac}", ""]
    lines += ["auto bridge", "iface bridge", "    bridge-vlan-aware yes", f"    bridge-vids {vids}",
              *bridge]
    return "\n".join(lines) + "\n"


def _bond_text(bond: Bond, vids: str) -> tuple[str, str]:
    """A bond's stanza (its blank line ending it) and its line of the bridge."""
    alias = bond.description
    clag = f"    clag-id {bond.clag_id}\n" if bond.clag_id else ""
    return (f"auto {bond.name}\niface {bond.name}\n    alias {alias}\n"
            f"    bond-slaves {' '.join(bond.members)}\n{_LACP}{clag}"
            f"    mtu {bond.mtu}\n    bridge-vids {vids}\n",
            f"    # {alias}\n    bridge-ports {bond.name}")


def bridge_template(config: SwitchConfig) -> str:
    """The same file from templates/switches/bridge.j2: bridge_text's oracle."""
    return render_template("switches/bridge.j2", **bridged(config))


BRIDGE_WRITER: Callable[[SwitchConfig, dict[tuple[Bond, str], tuple[str, str]]], str] = \
    bridge_text
"""What render() writes a bridged switch's file with; the tests compare bridge_template."""


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


# A routed (fabric) switch's two files, written line by line in Python as bridge_text writes a
# bridged switch's: a 100,000-GPU RoCE fabric has some 4,000 of these switches and 300,000
# ports, and Jinja's per-attribute lookups were some 6 s of the family's 7. The templates
# (switches/frr.conf.j2, switches/interfaces.j2, from _context) print the same bytes and are
# their oracle: tests/test_switches.py renders every example's fabric switches both ways.
# A line added to one is added to both.


def routed_frr_text(config: SwitchConfig) -> str:
    """A fabric switch's frr.conf, the bytes frr.conf.j2 prints (routed_frr_template)."""
    bgp = config.routing
    switch, asn = config.name, config.asn
    lines = [
        f"! {GENERATED_BY}",
        f"! FRR configuration of {switch}: {config.role} of the {config.fabric} fabric "
        f"({config.model}, rack {config.rack})",
        f"! eBGP underlay, ASN {asn} (RFC 7938 section 5.2.1); ports and addresses: "
        "/etc/network/interfaces",
        "frr defaults datacenter", f"hostname {switch}", "log syslog informational",
        "service integrated-vtysh-config", "!"]
    lines += [f"interface {i.name}\n description {i.peer}:{i.peer_port} {i.cable_id}\nexit\n!"
              for i in config.interfaces]
    lines += [f"router bgp {asn}", f" bgp router-id {bgp.router_id}",
              " bgp bestpath as-path multipath-relax", " no bgp ebgp-requires-policy",
              " no bgp default ipv4-unicast"]
    if bgp.unnumbered:
        names = [n.interface for n in bgp.neighbors]
        lines += [f" neighbor {n.interface} interface remote-as {n.remote_asn}\n"
                  f" neighbor {n.interface} description {n.peer} {n.direction}"
                  for n in bgp.neighbors]
    else:
        names = [n.address for n in bgp.neighbors]
        lines += [f" neighbor {n.address} remote-as {n.remote_asn}\n"
                  f" neighbor {n.address} description {n.peer} {n.direction}"
                  for n in bgp.neighbors]
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {prefix}" for prefix in bgp.networks]
    lines += [f"  neighbor {name} activate" for name in names]
    lines += [f"  maximum-paths {bgp.maximum_paths}", " exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"


def routed_interfaces_text(config: SwitchConfig) -> str:
    """A fabric switch's ifupdown2 interfaces, the bytes interfaces.j2 prints
    (routed_interfaces_template): the loopback, then each port's stanza."""
    lines = [
        f"# {GENERATED_BY}",
        f"# ifupdown2 interfaces of {config.name} ({config.role}, {config.fabric} fabric): "
        "loopback and router-id",
        f"# {config.loopback}, MTU {FABRIC_MTU} between switches; BGP in frr.conf",
        "auto lo", "iface lo inet loopback", f"    address {config.loopback}/32", ""]
    # a port's stanza one f-string, with its address or without (300,000 ports)
    lines += [f"auto {i.name}\niface {i.name}\n    alias {i.peer}:{i.peer_port} {i.cable_id}\n"
              f"    address {i.address}\n    mtu {i.mtu}\n" if i.address else
              f"auto {i.name}\niface {i.name}\n    alias {i.peer}:{i.peer_port} {i.cable_id}\n"
              f"    mtu {i.mtu}\n" for i in config.interfaces]
    return "\n".join(lines) + "\n"


def routed_frr_template(config: SwitchConfig) -> str:
    """The same frr.conf from templates/switches/frr.conf.j2: routed_frr_text's oracle."""
    return render_template("switches/frr.conf.j2", **_context(config))


def routed_interfaces_template(config: SwitchConfig) -> str:
    """The same interfaces from templates/switches/interfaces.j2: routed_interfaces_text's
    oracle."""
    return render_template("switches/interfaces.j2", **_context(config))


ROUTED_FRR_WRITER: Callable[[SwitchConfig], str] = routed_frr_text
ROUTED_INTERFACES_WRITER: Callable[[SwitchConfig], str] = routed_interfaces_text
"""What render() writes a fabric switch's files with; the tests compare the templates'."""
