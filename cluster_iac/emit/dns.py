"""dns/: BIND zone files for every address the plan holds, the forward zone of the cluster's
domain and one reverse zone per /24 (RFC 1035 master file syntax), and named.conf.zones, the
zone statements a primary includes.

Names (plan/boot.py): a host is '<host>' on the management network, '<host>-bmc', '<host>-ib'
and '<host>-stor' on the others; switches and PDUs by their own name. Every name was checked
as an RFC 1123 label by compile/plan_boot.py and every address comes from ``ipaddress``, so no
spec string can add a record or a line.

The SOA serial is the lock's (plan/zones.py, computed with the plan in the main process):
kept while the zone's records are the same, raised by one in RFC 1982 serial arithmetic when
they change, so a secondary NOTIFYed by the primary after ``rndc reload`` transfers the zone;
a zone the lock has not seen starts at 31 bits of the SHA-256 of its records.
"""

from __future__ import annotations

from cluster_iac.emit.base import render_template
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import BootPlan
from cluster_iac.plan.zones import Zone

TTL = 3600
# SOA timers (RFC 1912 2.2's advice for refresh/retry/expire; negative TTL RFC 2308)
REFRESH, RETRY, EXPIRE, NEGATIVE = 3600, 900, 1209600, 300
ZONE_DIR = "/var/lib/bind/cluster-iac"  # where named.conf.zones says the zone files are


def render(plan: Plan) -> dict[str, str]:
    boot: BootPlan | None = plan.boot
    if boot is None or not boot.records or boot.server is None:
        return {}
    files = {f"dns/{name}.zone": zone_text(boot, name, zone) for name, zone in boot.zones.items()}
    statements = [(path[4:-5], f"{ZONE_DIR}/{path[4:]}") for path in sorted(files)]
    files["dns/named.conf.zones"] = render_template(
        "dns/named.conf.j2", zones=statements,
        comment="named.conf include: the cluster's zones, primary on the boot server")
    return files


def zone_text(boot: BootPlan, name: str, zone: Zone) -> str:
    primary = f"{boot.server}.{boot.domain}"
    return render_template(
        "dns/zone.j2", comment=f"zone {name}", origin=name, ttl=TTL, primary=primary,
        contact=f"hostmaster.{boot.domain}", serial=zone.serial,
        serial_note="kept by the lock's zone line, raised by 1 when the records change",
        refresh=REFRESH, retry=RETRY, expire=EXPIRE, negative=NEGATIVE, records=zone.records)
