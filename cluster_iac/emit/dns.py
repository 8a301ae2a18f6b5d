"""dns/: BIND zone files for every address the plan holds, the forward zone of the cluster's
domain and one reverse zone per /24 (RFC 1035 master file syntax), and named.conf.zones, the
zone statements a primary includes.

Names (plan/boot.py): a host is '<host>' on the management network, '<host>-bmc', '<host>-ib'
and '<host>-stor' on the others; switches and PDUs by their own name. Every name was checked
as an RFC 1123 label by compile/plan_boot.py and every address comes from ``ipaddress``, so no
spec string can add a record or a line.

The SOA serial is a function of the zone's records: the first 31 bits of the SHA-256 of its
records (SOA excluded), never 0. The same plan gives the same serial, and a changed zone a
different one (2^-31 odds of a clash). RFC 1982 serial arithmetic: a secondary takes a new
serial only when it is 'greater', (new - old) mod 2^32 in 1 .. 2^31 - 1, which a hash gives half
the time; so the change plan (catalog/slurm_actions.py) says to transfer a changed zone to the
secondaries in full (``rndc retransfer``), which ignores the serial, after ``rndc reload`` on
the primary.
"""

from __future__ import annotations

import hashlib
from ipaddress import IPv4Address, IPv4Network

from cluster_iac.emit.base import render_template
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import BootPlan

TTL = 3600
# SOA timers (RFC 1912 2.2's advice for refresh/retry/expire; negative TTL RFC 2308)
REFRESH, RETRY, EXPIRE, NEGATIVE = 3600, 900, 1209600, 300
ZONE_DIR = "/var/lib/bind/cluster-iac"  # where named.conf.zones says the zone files are


def render(plan: Plan) -> dict[str, str]:
    boot: BootPlan | None = plan.boot
    if boot is None or not boot.records or boot.server is None:
        return {}
    files = {f"dns/{zone}.zone": zone_text(boot, zone, records)
             for zone, records in zones(boot).items()}
    statements = [(path[4:-5], f"{ZONE_DIR}/{path[4:]}") for path in sorted(files)]
    files["dns/named.conf.zones"] = render_template(
        "dns/named.conf.j2", zones=statements,
        comment="named.conf include: the cluster's zones, primary on the boot server")
    return files


def zones(boot: BootPlan) -> dict[str, list[tuple[str, str, str]]]:
    """Zone name -> its records (owner relative to the zone, type, data), in name order: the
    forward zone, then every reverse zone of every subnet (reverse_zones), empty ones too, so
    that a grown cluster adds records, never zones."""
    out: dict[str, list[tuple[str, str, str]]] = {boot.domain: []}
    prefixes: dict[str, int] = {}
    for subnet in boot.subnets:
        for zone, prefix in reverse_zones(IPv4Network(subnet.cidr)):
            out.setdefault(zone, [])
            prefixes[zone] = prefix
    for record in boot.records:
        out[boot.domain].append((record.name, "A", record.address))
        zone, owner = reverse_name(record.address, prefixes)
        out[zone].append((owner, "PTR", f"{record.name}.{boot.domain}."))
    for zone, records in out.items():
        if zone != boot.domain:
            records.sort(key=lambda r: [int(x) for x in reversed(r[0].split("."))])
    return dict(sorted(out.items()))


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


def reverse_name(address: str, prefixes: dict[str, int]) -> tuple[str, str]:
    """The reverse zone holding an address and its owner name there: 10.0.1.7 in
    '1.0.10.in-addr.arpa' is '7'."""
    octets = str(IPv4Address(address)).split(".")
    for size in (3, 2, 1):
        zone = ".".join(reversed(octets[:size])) + ".in-addr.arpa"
        if zone in prefixes:
            return zone, ".".join(reversed(octets[size:]))
    raise ValueError(f"{address} is in no subnet's reverse zone")


def serial(records: list[tuple[str, str, str]]) -> int:
    """31 bits of the records' SHA-256, never 0 (module docstring)."""
    digest = hashlib.sha256("\n".join(" ".join(r) for r in records).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1 or 1


def zone_text(boot: BootPlan, zone: str, records: list[tuple[str, str, str]]) -> str:
    primary = f"{boot.server}.{boot.domain}"
    return render_template(
        "dns/zone.j2", comment=f"zone {zone}", origin=zone, ttl=TTL, primary=primary,
        contact=f"hostmaster.{boot.domain}", serial=serial(records),
        serial_note="31 bits of the SHA-256 of the records (emit/dns.py)",
        refresh=REFRESH, retry=RETRY, expire=EXPIRE, negative=NEGATIVE, records=records)
