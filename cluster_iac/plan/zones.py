"""The DNS zones of the plan: each zone's records (the forward zone of the cluster's domain and
one reverse zone per octet-aligned block of every subnet) and its SOA serial, kept by the lock.

The serial is the lock's: a zone line, ``zone <name> <serial> <digest>``, records the serial
last served and the SHA-256 of the records it was served with. A render whose records have
the same digest keeps the serial; a changed zone takes the next serial in RFC 1982 serial
arithmetic (next_serial), which a secondary always takes as 'greater', so ``rndc reload`` on
the primary and the NOTIFY it sends are enough. A zone the lock has never seen (a first
render, a new subnet, a lock written before zone lines) starts at 31 bits of its digest
(hash_serial): the serial every earlier version served for those records, so a zone that
did not change keeps its serial on the upgrade, and no clock is read (a date-based
YYYYMMDD01 start would make two renders of one spec differ by the day they ran).

compile/plan_boot.py computes them in the main process, where the lock is read and written
(lock/text.py writes the zone lines); emit/dns.py only writes them out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from ipaddress import IPv4Network
from socket import inet_aton
from typing import Any, NamedTuple

Record = tuple[str, str, str]  # owner relative to the zone, type, data
SERIAL_MAX = 2**32 - 1  # RFC 1982: a serial is an unsigned 32-bit number (SERIAL_BITS 32)


class Zone(NamedTuple):
    """One zone: its records in name order, its SOA serial and the records' SHA-256 (hex)."""

    records: list[Record]
    serial: int
    digest: str


def zone_records(domain: str, cidrs: Iterable[str],
                 records: Iterable[Any]) -> dict[str, list[Record]]:
    """Zone name -> its records, in name order: the forward zone, then every reverse zone of
    every subnet (reverse_zones), empty ones too, so that a grown cluster adds records, never
    zones. ``records`` are the plan's DnsRecords (name, address)."""
    out: dict[str, list[Record]] = {domain: []}
    heads: dict[str, str] = {}  # '10.0.1' -> '1.0.10.in-addr.arpa'
    for cidr in cidrs:
        for zone, prefix in reverse_zones(IPv4Network(cidr)):
            out.setdefault(zone, [])
            heads[".".join(reversed(zone.split(".")[:prefix // 8]))] = zone
    records = list(records)
    out[domain] += [(record.name, "A", record.address) for record in records]
    # each reverse zone's records in address order (a zone's addresses share their first
    # octets, so its owners' order is theirs): the records taken by address, as the four
    # bytes inet_aton makes (big-endian, so compared as numbers), fill each zone in order;
    # each /24 block's zone and owner tail are found once, not once per address
    blocks: dict[str, tuple[str, str]] = {}  # '10.0.1' -> its zone, its owners' tail
    keys = list(map(inet_aton, [record.address for record in records]))
    tail = f".{domain}."
    for at in sorted(range(len(records)), key=keys.__getitem__):  # by address, stable
        record = records[at]
        block, _, host = record.address.rpartition(".")
        found = blocks.get(block)
        if found is None:
            found = blocks[block] = _block_zone(block, heads)
        out[found[0]].append((host + found[1], "PTR", record.name + tail))
    return dict(sorted(out.items()))


def _block_zone(block: str, heads: dict[str, str]) -> tuple[str, str]:
    """The reverse zone of a /24 block ('10.0.1') and what its addresses' owner names there
    end with after their last octet: '' in '1.0.10.in-addr.arpa', '.1' in
    '0.10.in-addr.arpa' (reverse_name of the block's address 0, less its '0')."""
    zone, owner = reverse_name(f"{block}.0", heads)
    return zone, owner.removeprefix("0")


def reverse_zones(network: IPv4Network) -> list[tuple[str, int]]:
    """The in-addr.arpa zones that cover a subnet on octet boundaries (RFC 1035 3.5): the
    subnet's own zone when its prefix is a multiple of 8, else one zone per block of the next
    boundary (a /21 is eight /24 zones); a subnet smaller than a /24 shares its /24's zone."""
    boundary = min(24, -(-network.prefixlen // 8) * 8)
    blocks = [network] if network.prefixlen == boundary else \
        list(network.subnets(new_prefix=boundary)) if network.prefixlen < boundary else \
        [network.supernet(new_prefix=boundary)]
    return [(_zone_name(block), boundary) for block in blocks]


def _zone_name(block: IPv4Network) -> str:
    octets = str(block.network_address).split(".")[: block.prefixlen // 8]
    return ".".join(reversed(octets)) + ".in-addr.arpa"


def reverse_name(address: str, heads: dict[str, str]) -> tuple[str, str]:
    """The reverse zone holding an address and its owner name there: 10.0.1.7 in
    '1.0.10.in-addr.arpa' is '7'. ``heads``: each reverse zone by its octets in forward order
    ('10.0.1'). ``address`` is as the plan holds it, written by ``ipaddress`` (dotted quad, no
    leading zeros), so it is cut, not parsed again (parsing took 0.3 s of the 0.5 s of a
    100,000-GPU plan's 60,000 records)."""
    for cut in (1, 2, 3):  # a /24 zone's first, then a /16's, then a /8's
        head, *owner = address.rsplit(".", cut)
        zone = heads.get(head)
        if zone is not None:
            return zone, ".".join(reversed(owner))
    raise ValueError(f"{address} is in no subnet's reverse zone")


def digest(records: list[Record]) -> str:
    """The SHA-256 (hex) of a zone's records, one per line, SOA excluded."""
    return hashlib.sha256("\n".join(map(" ".join, records)).encode()).hexdigest()


def hash_serial(hex_digest: str) -> int:
    """The first serial of a zone the lock has not seen: the digest's first 31 bits, never 0
    (what emit/dns.py served before the lock kept serials)."""
    return int(hex_digest[:8], 16) >> 1 or 1


def next_serial(serial: int) -> int:
    """The serial after ``serial`` (RFC 1982 3.1: add 1 modulo 2^32), 0 skipped so that a
    serial is never 0: 4294967295 is followed by 1, (1 - 4294967295) mod 2^32 = 2, which is
    in 1 .. 2^31 - 1, so a secondary still takes it as greater (RFC 1982 3.2)."""
    return serial % SERIAL_MAX + 1


def kept_zones(domain: str, cidrs: Iterable[str], records: Iterable[Any],
               lock: Any) -> dict[str, Zone]:
    """Every zone with its serial: the lock's when its digest is the records', the lock's
    next when the records changed, hash_serial when the lock has no line for the zone."""
    out: dict[str, Zone] = {}
    for name, held in zone_records(domain, cidrs, records).items():
        now = digest(held)
        entry = lock.get("zone", "", name)
        if entry is None:
            serial = hash_serial(now)
        else:
            serial = entry.value[0] if entry.value[1] == now else next_serial(entry.value[0])
        out[name] = Zone(held, serial, now)
    return out
