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
from collections import defaultdict
from ipaddress import IPv4Address

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
    """Zone name -> its records (owner relative to the zone, type, data), in name order."""
    out: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    forward = out[boot.domain]
    for record in boot.records:
        forward.append((record.name, "A", record.address))
        zone, owner = reverse_zone(record.address)
        out[zone].append((owner, "PTR", f"{record.name}.{boot.domain}."))
    for zone, records in out.items():
        if zone != boot.domain:
            records.sort(key=lambda r: int(r[0]))
    return dict(out)


def reverse_zone(address: str) -> tuple[str, str]:
    """The /24 reverse zone of an address and the owner name in it: 10.0.1.7 -> 
    ('1.0.10.in-addr.arpa', '7')."""
    a, b, c, d = str(IPv4Address(address)).split(".")
    return f"{c}.{b}.{a}.in-addr.arpa", d


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
