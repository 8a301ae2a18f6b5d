"""One model of a switch's configuration, shared by every Ethernet fabric and every dialect.

compile/plan_switches.py fills ``Plan.switch_configs`` (switch name -> SwitchConfig) for the
switches of each Ethernet fabric (compute ``technology: roce``, storage ``technology:
ethernet``), routed; compile/plan_access.py fills ``Plan.management_configs`` with the same
records for the management and BMC networks' access, aggregation and core switches, bridged
(a VLAN, LACP bonds, no BGP). Each writer (emit/frr.py for FRR and ifupdown2, emit/avd.py for
Arista AVD) turns a SwitchConfig into its own syntax and decides nothing itself. What a
writer needs and does not find here belongs here, not in the writer: so two dialects of one
switch can never disagree.

The records:

- ``SwitchConfig``: the switch (name, fabric, catalog model, role, rack), its routing
  identity (ASN, loopback = router-id) kept by the lock, its ports (``interfaces``, in port
  order), its BGP process (``bgp``) and ``qos``, an optional reference the RoCE QoS pass
  fills (None until then; a writer prints no QoS without it).
- ``SwitchInterface``: one cabled port, named as the plan's cable table names it (``p57``;
  a breakout leg ``p1s2``, leg 2 of cage 1), with its kind (``host``: down to a host NIC;
  ``fabric``: down to a lower switch; ``uplink``: up to a higher one), the far end and the
  cable's label (``description``), speed, MTU and, on a numbered link, its /31 address and
  the far end's.
- ``BgpConfig`` and ``BgpNeighbor``: eBGP sessions, one per fabric cable (on the port for
  BGP unnumbered, on the far end's /31 address when numbered), maximum-paths at least the
  switch's uplink count, and the prefixes the switch announces (its loopback and, on a
  leaf, its host links). A bridged switch has none (``bgp`` None).
- ``Vlan`` and ``Bond``: a bridged switch's VLAN (id from ``VLANS``, the network's MTU) and
  its LACP bonds: ``uplink`` over its uplinks to the pair above it, ``bond<port>`` over the
  cables from one switch below it; each bond a trunk tagged with the switch's VLANs. A
  host port is an access port of the VLAN (``SwitchInterface.vlan``).
- ``Mlag``: an aggregation or core pair's MLAG (Cumulus CLAG, Arista MLAG): the peer, the
  pair's name (its domain), the peer link's ports (bonded as ``peerlink``, kind
  ``peerlink``) and the system MAC both switches present to LACP partners
  (``mlag_system_mac``). Each bond of the pair down to a switch below is dual-homed (that
  switch's ``uplink`` bond has one member on each peer): an MLAG bond, its ``clag_id`` the
  same on both peers (the bond's number, the child's port, which the plan makes the same
  on both switches of the pair).

Records are named tuples (as plan/physical.py's rows: a 100,000-GPU RoCE fabric has some
half a million switch ports) and tuples of them, so a config is plain, ordered data that a
template can loop over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, NamedTuple

from cluster_iac.base.errors import SpecPath

FABRIC_MTU = 9216  # every switch-to-switch port: the largest frame NVIDIA Spectrum and
# Arista EOS switches carry (SN5600 user manual, "MTU"; EOS "l2 mtu" maximum 9214 + 2 tags)

ROLES = {"leaf": "leaf", "spine": "spine", "core": "super-spine"}  # plan tier -> role name

# The VLAN of each bridged network, the same on every switch and every cluster: fixed, so a
# switch's config never depends on which other networks a spec has. Not VLAN 1 (the
# default VLAN every port of a switch joins untagged: IEEE 802.1Q-2018 section 9.6 gives
# it as the default PVID; Cisco and NVIDIA Cumulus guides keep user traffic off it), and
# tens apart so a site can add its own between them. 'storage' is reserved for a storage
# network on Ethernet access switches; the plan cables none today (an Ethernet storage
# fabric is routed, compile/plan_switches.py).
VLANS = {"management": 10, "bmc": 20, "storage": 30}
# A bridged network's MTU when the spec sets none (networks.<name>.mtu): Ethernet's 1500
# (IEEE 802.3 maximum payload; RFC 894), which hosts, BMCs and PDUs use by default.
DEFAULT_MTU = 1500
# An MLAG pair's peer link: this many cables between its two switches, bonded; the control
# VLAN on it is 4094, the highest usable id (IEEE 802.1Q-2018 9.6: 4095 is reserved), as
# Cumulus Linux's MLAG guide (peerlink.4094) and Arista AVD (mlag_peer_vlan) default to.
PEER_LINK_PORTS = 2
PEER_VLAN = 4094
# The first two octets of every MLAG system MAC: 0x02 sets the locally administered bit and
# clears the group bit (IEEE 802-2014 8.2.2: a unicast address no vendor's OUI assigns);
# 0x4d ('M') marks it as this tool's MLAG address.
MLAG_MAC_PREFIX = (0x02, 0x4D)
_ACCESS_PORT = re.compile(r"swp(\d+)")


@cache  # some 50 names (swp1-swp48) on 200,000 cable ends at 100,000 GPUs
def port_number(port: str) -> int:
    """A management switch port's number: 'swp47' -> 47 (compile/build_management.py)."""
    match = _ACCESS_PORT.fullmatch(port)
    if match is None:
        raise ValueError(f"not a management switch port name: {port!r}")
    return int(match[1])


def mlag_system_mac(network: str, level: int, pair: int) -> str:
    """The MLAG system MAC of a pair, derived from where the pair is, so that it is the same
    on every render and differs between every two pairs of a cluster: MLAG_MAC_PREFIX, then
    the network's VLAN id (VLANS: management 10, bmc 20), the pair's level (1: aggregation,
    2 and up: core) and its number within the level (1, 2, ...; 16 bits).
    'oob-agg1-1'/'oob-agg1-2' (bmc, level 1, pair 1) -> 02:4d:14:01:00:01."""
    if not 0 < pair < 2**16 or not 0 < level < 256:
        raise ValueError(f"no MLAG system MAC for pair {pair} of level {level}")
    octets = (*MLAG_MAC_PREFIX, VLANS[network], level, pair >> 8, pair & 0xFF)
    return ":".join(f"{octet:02x}" for octet in octets)


class SwitchInterface(NamedTuple):
    """One cabled port of a switch."""

    name: str  # the plan's port name: 'p57', a breakout leg 'p1s2'
    kind: str  # 'host' | 'fabric' (down to a switch) | 'uplink' (up to a switch) |
    # 'peerlink' (to the other switch of an MLAG pair)
    peer: str  # far device
    peer_port: str  # far device's port
    cable_id: str  # the cable table's id (its label)
    speed_gbps: int
    mtu: int  # FABRIC_MTU between switches, the underlay's host_mtu on host ports
    address: str  # this end's '10.254.0.0/31' on a numbered link or a host port, else ''
    peer_address: str  # the far end's address on that /31 (no prefix length), else ''
    vlan: int = 0  # a bridged switch's host port: its VLAN, untagged (access); 0: none
    bond: str = ""  # a bridged switch's port to a switch: the LACP bond it is a member of

    @property
    def description(self) -> str:
        """'<far device>:<far port> <cable label>', as the cable table prints them."""
        return f"{self.peer}:{self.peer_port} {self.cable_id}"


class BgpNeighbor(NamedTuple):
    """One eBGP session, over one cable."""

    peer: str  # far switch
    interface: str  # this switch's port: the session's own for BGP unnumbered
    address: str  # numbered: the far end's /31 address; unnumbered: ''
    remote_asn: int
    direction: str  # 'uplink' | 'downlink'


class BgpConfig(NamedTuple):
    """A switch's BGP process."""

    asn: int
    router_id: str  # the loopback address
    unnumbered: bool
    neighbors: tuple[BgpNeighbor, ...]  # in port order
    maximum_paths: int  # ECMP width: at least the uplinks (and the cables to one switch below)
    networks: tuple[str, ...]  # prefixes announced: the loopback /32, a leaf's host /31s


class Vlan(NamedTuple):
    """One VLAN of a bridged switch: one network."""

    vid: int  # VLANS[network]
    name: str  # the network: 'management', 'bmc'
    mtu: int  # networks.<name>.mtu, else DEFAULT_MTU


class Bond(NamedTuple):
    """One LACP (IEEE 802.1AX) bond of a bridged switch: a trunk of its VLANs, tagged."""

    name: str  # 'uplink', 'peerlink', or 'bond<n>': n the number of its first member port
    kind: str  # 'uplink' (to the pair above) | 'fabric' (from one switch below) |
    # 'peerlink' (an MLAG pair's peer link)
    members: tuple[str, ...]  # ports, in port order
    peers: tuple[str, ...]  # far switches, one per member
    mtu: int  # the largest of its VLANs' MTUs
    clag_id: int = 0  # an MLAG pair's bond down to a switch below: its MLAG id; 0: none

    @property
    def description(self) -> str:
        """'uplink to <pair>' or '<switch below>', what the bond leads to."""
        far = ",".join(dict.fromkeys(self.peers))
        return f"uplink {far}" if self.kind == "uplink" else \
            f"peerlink {far}" if self.kind == "peerlink" else far


class Mlag(NamedTuple):
    """An aggregation or core pair's MLAG, as one of its two switches sees it."""

    domain: str  # the pair's name: its level's and its number ('oob-agg1-pair1')
    peer: str  # the other switch of the pair
    ports: tuple[str, ...]  # the peer link's ports (the same on both switches)
    system_mac: str  # mlag_system_mac(network, level, pair): the same on both switches
    primary: bool  # the pair's first switch (Cumulus clagd-priority, AVD's mlag primary)


class MlagPair(NamedTuple):
    """An aggregation or core pair of a management network, as compile/build_management.py
    places it: where it is, so no reader parses it back out of the switches' names."""

    network: str  # 'management' | 'bmc'
    first: str  # the pair's first switch ('oob-agg1-1'), the MLAG primary
    second: str  # its second ('oob-agg1-2')
    level: int  # 1: aggregation, 2 and up: core
    number: int  # the pair's number within its level, from 1
    domain: str  # the pair's name ('oob-agg1-pair1')
    ports: tuple[str, ...]  # the peer link's ports (the same on both switches)


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class SwitchConfig:
    """Everything one Ethernet switch is configured with: routed (a fabric's) or bridged
    (a management network's)."""

    name: str
    fabric: str  # 'compute' | 'storage' | 'management' | 'bmc'
    model: str  # catalog switch key ('sn5600')
    role: str  # 'leaf' | 'spine' | 'super-spine' | 'access' | 'aggregation' | 'core'
    rack: str
    asn: int  # 0 on a bridged switch
    loopback: str  # IPv4 address, /32 on the loopback interface; the BGP router-id ('': none)
    interfaces: tuple[SwitchInterface, ...]
    bgp: BgpConfig | None  # None: a bridged switch
    spec_path: SpecPath
    p2p_block: str = ""  # first address of the /31s it numbers below it ('' when none)
    qos: Any = None  # the RoCE QoS pass's per-switch record, a reference; None: no QoS
    vlans: tuple[Vlan, ...] = ()  # a bridged switch's VLANs
    bonds: tuple[Bond, ...] = ()  # a bridged switch's LACP bonds, uplink first
    mlag: Mlag | None = None  # a switch of an aggregation or core pair: its MLAG

    @property
    def routing(self) -> BgpConfig:
        """The BGP process of a routed switch (a bridged switch has none: an error)."""
        if self.bgp is None:
            raise ValueError(f"{self.name} is a bridged switch: it runs no BGP")
        return self.bgp

    # each found once per switch (the writers ask several times; 300,000 ports at 100,000
    # GPUs), kept beside the fields (cached_property writes the instance's __dict__)
    @cached_property
    def uplinks(self) -> tuple[SwitchInterface, ...]:
        return tuple(i for i in self.interfaces if i.kind == "uplink")

    @cached_property
    def host_ports(self) -> tuple[SwitchInterface, ...]:
        return tuple(i for i in self.interfaces if i.kind == "host")
