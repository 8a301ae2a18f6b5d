"""One model of a switch's configuration, shared by every Ethernet fabric and every dialect.

compile/plan_switches.py fills ``Plan.switch_configs`` (switch name -> SwitchConfig) for the
switches of each Ethernet fabric (compute ``technology: roce``, storage ``technology:
ethernet``); each writer (emit/frr.py for FRR and ifupdown2; an Arista AVD writer, the
management network's access switches later) turns a SwitchConfig into its own syntax and
decides nothing itself. What a writer needs and does not find here belongs here, not in the
writer: so two dialects of one switch can never disagree.

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
  leaf, its host links).

Records are named tuples (as plan/physical.py's rows: a 100,000-GPU RoCE fabric has some
half a million switch ports) and tuples of them, so a config is plain, ordered data that a
template can loop over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from cluster_iac.base.errors import SpecPath

FABRIC_MTU = 9216  # every switch-to-switch port: the largest frame NVIDIA Spectrum and
# Arista EOS switches carry (SN5600 user manual, "MTU"; EOS "l2 mtu" maximum 9214 + 2 tags)

ROLES = {"leaf": "leaf", "spine": "spine", "core": "super-spine"}  # plan tier -> role name


class SwitchInterface(NamedTuple):
    """One cabled port of a switch."""

    name: str  # the plan's port name: 'p57', a breakout leg 'p1s2'
    kind: str  # 'host' | 'fabric' (down to a switch) | 'uplink' (up to a switch)
    peer: str  # far device
    peer_port: str  # far device's port
    cable_id: str  # the cable table's id (its label)
    speed_gbps: int
    mtu: int  # FABRIC_MTU between switches, the underlay's host_mtu on host ports
    address: str  # this end's '10.254.0.0/31' on a numbered link or a host port, else ''
    peer_address: str  # the far end's address on that /31 (no prefix length), else ''

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


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class SwitchConfig:
    """Everything one Ethernet fabric switch is configured with."""

    name: str
    fabric: str  # 'compute' | 'storage' (later 'management')
    model: str  # catalog switch key ('sn5600')
    role: str  # 'leaf' | 'spine' | 'super-spine' (later 'access' | 'aggregation')
    rack: str
    asn: int
    loopback: str  # IPv4 address, /32 on the loopback interface; the BGP router-id
    interfaces: tuple[SwitchInterface, ...]
    bgp: BgpConfig
    spec_path: SpecPath
    p2p_block: str = ""  # first address of the /31s it numbers below it ('' when none)
    qos: Any = None  # the RoCE QoS pass's per-switch record, a reference; None: no QoS

    @property
    def uplinks(self) -> tuple[SwitchInterface, ...]:
        return tuple(i for i in self.interfaces if i.kind == "uplink")

    @property
    def host_ports(self) -> tuple[SwitchInterface, ...]:
        return tuple(i for i in self.interfaces if i.kind == "host")
