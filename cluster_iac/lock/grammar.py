"""The lock file's grammar: every identity the compile allocated, kept beside the spec.

The compile passes allocate identities from the spec's order (addresses from pools, rack
units from the bottom and the top, Lustre target indices); on a cluster that is already
cabled and formatted none of them may move because another device was added, removed or
reordered. The lock records them, one per line, sorted, so a pull request shows each new
allocation as one added line:

    address <network> <device> <IPv4>     an address on management, bmc, ipoib or storage
    place <device> <rack> <U> <height>    a racked device's rack, lowest U and height in U
    lustre <mdt|ost> <index> <server>     a Lustre target index and the server holding it
    fabric <fabric> <host> <position> <ports> <switch> <port>
                                          a host's position on the compute or storage
                                          fabric (its leaves and ports follow from it), the
                                          ports it takes there and its first cable's end
    links <fabric> <switch> <port>:<peer>:<port>,...
                                          a fabric switch's cables to the switches above
                                          it (a leaf's to spines, a spine's to cores): its
                                          port, the switch above and that switch's port,
                                          in its cables' order (compile/fabric_links.py)
    access <network> <device> <rack> <position> <switch> <port>
                                          a device's place among its rack's management
                                          or BMC access ports, and that port
    uplink <network> <switch> <level> <position>
                                          a management switch's place under the
                                          aggregation (agg1) or core (cor2...) pairs of
                                          its level: the pair's port
    peerlink <network> <switch> <port> <port>
                                          the ports of an aggregation or core pair's MLAG
                                          peer link (the same on both; 'switch' is the
                                          pair's first)
    outlet <device> <PSUn> <pdu> <outlet>  a power cord's PDU outlet (its circuit and
                                          line follow from the PDU profile's wiring)
    bgp <fabric> <switch> <asn> <loopback>
                                          an Ethernet fabric switch's BGP ASN and loopback
                                          (router-id) (compile/plan_switches.py)
    p2p <fabric> <switch> <IPv4>          the first address of the block of /31s a switch
                                          numbers its links below it from
    mac <network> <device> <MAC>          the MAC of a device's NIC on the management or BMC
                                          network, a fact imported by `cluster-iac macs
                                          import` or `cluster-iac reconcile --accept` (never
                                          allocated): DHCP reserves its address
    serial <device> <serial>              a delivered device's chassis serial number, a fact
                                          accepted from its Redfish ComputerSystem (NetBox's
                                          devices.csv carries it)
    guid <device> <port> <0xGUID>         an InfiniBand GUID, a fact accepted from
                                          ibnetdiscover: a host adapter's port GUID ('port' is
                                          the plan's port name, as in cabling/cables.csv) or a
                                          switch's node GUID ('port' is 'node'); OpenSM's
                                          partitions.conf and root-guids are written from them
    row <row> <position>                  a row's place on the floor (0 first): cable lengths
                                          between rows follow from it, so a row listed
                                          before an existing one in the spec is laid at the
                                          end of the floor and moves no row in service
    zone <zone> <serial> <digest>         a DNS zone's SOA serial and the SHA-256 of the
                                          records it was served with (plan/zones.py): the
                                          same records keep the serial, changed ones take
                                          the next (RFC 1982), so secondaries transfer them

A device named in the lock keeps what it records whatever else changed; a device the lock
does not name takes free identities by the passes' own rules (a first render writes the
lock). A line whose device is gone becomes ``retired <line>``: its identity stays reserved,
given to no other device, until ``--reallocate`` frees it (README, "The lock file").

The lock is input too: a person pins or moves an identity by editing it, and every line is
validated like the spec, errors located at its file:line:col.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address
from typing import Any

VERSION = 2  # 2: the lock ends in its integrity trailer (trailer.py)
HEADER = f"# cluster-iac lock {VERSION}"
OLD_HEADER = "# cluster-iac lock 1"  # before the trailer: read once without it, rewritten
MAX_BYTES = 512 * 1024 * 1024
NETWORKS = ("management", "bmc", "ipoib", "storage")
TARGET_KINDS = ("mdt", "ost")
# What each kind of line holds after its kind word, and what each field must be.
FIELDS: dict[str, tuple[str, ...]] = {
    "address": ("network", "device", "ipv4"),
    "place": ("device", "rack", "unit", "height"),
    "lustre": ("target", "index", "device"),
    "fabric": ("fabric", "device", "position", "ports", "switch", "port"),
    "links": ("fabric", "device", "uplinks"),
    "access": ("network", "device", "rack", "position", "switch", "port"),
    "outlet": ("device", "psu", "pdu", "outlet"),
    "uplink": ("network", "device", "level", "position"),
    "peerlink": ("network", "device", "port", "port"),
    "bgp": ("fabric", "device", "asn", "ipv4"),
    "p2p": ("fabric", "device", "ipv4"),
    "mac": ("network", "device", "mac"),
    "serial": ("device", "serial"),
    "guid": ("device", "port", "guid"),
    "zone": ("zone", "soa", "digest"),
    "row": ("row", "position"),
}
MAX_ASN = 4_294_967_294  # 4-byte ASNs (RFC 6793); 4294967295 is reserved (RFC 7300)
FABRICS = ("compute", "storage")
# Names in a lock: what the spec allows in host, rack and switch names (no blank, quote,
# control character or shell metacharacter can reach an output through the lock).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_INT = re.compile(r"0|[1-9][0-9]{0,8}")
_ASN = re.compile(r"[1-9][0-9]{0,9}")
# A MAC as the lock holds it: lower case, ':'-separated, unicast (the first octet even)
MAC = re.compile(r"[0-9a-f][02468ace](?::[0-9a-f]{2}){5}")
ZERO_MAC = "00:00:00:00:00:00"
# A serial number as the lock holds it (and the MAC manifest reads it): letters, digits, '.',
# '_' and '-', at most 64
SERIAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# A GUID as the lock holds it: '0x' and 16 lower-case hex digits, not zero (IBA vol. 1,
# 4.1.1: an EUI-64; 0 is no GUID)
GUID = re.compile(r"0x[0-9a-f]{16}")
ZERO_GUID = "0x0000000000000000"
# A zone name as the lock holds it: dot-separated labels of letters, digits and '-' (the
# cluster's domain, an in-addr.arpa zone), at most 253 characters (RFC 1035 2.3.4)
ZONE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*")
ZONE_MAX = 253
SOA_MAX = 2**32 - 1  # an SOA serial: 32 bits (RFC 1982), never 0 here (plan/zones.py)
_SOA = re.compile(r"[1-9][0-9]{0,9}")
DIGEST = re.compile(r"[0-9a-f]{64}")  # a SHA-256, lower-case hex
# A switch's cables up, as a links line holds them: 'port:peer:port' joined by ',', each
# part a name; at most 4096 cables (a switch of the catalog has 144 ports)
_UPLINK = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}:[A-Za-z0-9][A-Za-z0-9._-]{0,127}:" \
          r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
UPLINKS = re.compile(rf"{_UPLINK}(?:,{_UPLINK}){{0,4095}}")


def field_value(name: str, word: str) -> Any:
    """The field's value, or '!why' when ``word`` is not one."""
    if name == "network":
        return word if word in NETWORKS else f"!not a network ({', '.join(NETWORKS)})"
    if name == "fabric":
        return word if word in FABRICS else f"!not a fabric ({', '.join(FABRICS)})"
    if name == "target":
        return word if word in TARGET_KINDS else f"!not a target kind ({', '.join(TARGET_KINDS)})"
    if name == "psu":
        return word if re.fullmatch(r"PSU[1-9][0-9]?", word) else "!not a PSU (PSU1, PSU2, ...)"
    if name in ("device", "rack", "switch", "port", "pdu", "level", "row"):
        return word if _NAME.fullmatch(word) else \
            "!not a name (letters, digits, '.', '_', '-'; at most 128)"
    if name == "mac":
        return word if MAC.fullmatch(word) and word != ZERO_MAC else \
            "!not a unicast MAC (six lower-case hex pairs joined by ':')"
    if name == "serial":
        return word if SERIAL.fullmatch(word) else \
            "!not a serial number (letters, digits, '.', '_', '-'; at most 64)"
    if name == "guid":
        return word if GUID.fullmatch(word) and word != ZERO_GUID else \
            "!not a GUID ('0x' and 16 lower-case hex digits, not zero)"
    if name == "zone":
        return word if ZONE.fullmatch(word) and len(word) <= ZONE_MAX else \
            "!not a zone name (labels of letters, digits and '-' joined by '.'; at most 253)"
    if name == "soa":
        return int(word) if _SOA.fullmatch(word) and int(word) <= SOA_MAX else \
            f"!not an SOA serial (1-{SOA_MAX})"
    if name == "digest":
        return word if DIGEST.fullmatch(word) else \
            "!not a SHA-256 (64 lower-case hex digits)"
    if name == "uplinks":
        return word if UPLINKS.fullmatch(word) else \
            "!not a switch's cables up ('port:switch:port' joined by ',')"
    if name == "ipv4":
        try:
            return str(IPv4Address(word))
        except ValueError:
            return "!not an IPv4 address"
    if name == "asn":
        return int(word) if _ASN.fullmatch(word) and 0 < int(word) <= MAX_ASN else \
            f"!not an ASN (1-{MAX_ASN})"
    if _INT.fullmatch(word) is None:
        return "!not a whole number"
    number = int(word)
    if name in ("unit", "height") and not 0 < number <= 100:
        return "!out of range (1-100)"
    if name == "outlet" and not 0 < number <= 1000:
        return "!out of range (1-1000)"
    if name == "position" and number > 100_000:
        return "!out of range (0-100000)"
    if name == "ports" and not 0 < number <= 64:
        return "!out of range (1-64)"
    return number
