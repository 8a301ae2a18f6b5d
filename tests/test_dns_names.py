"""DNS names and reverse zones made many at a time, held to the one-at-a-time definitions:
hostnames_valid (one scan of all the names) against hostname_problem name by name, the
DNS-NAME-CLASH findings of dns_records either way, and zone_records (reverse zones filled in
address order, no sort per zone) against the records sorted zone by zone."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.compile.plan_boot import dns_records
from cluster_iac.plan.boot import DnsRecord
from cluster_iac.plan.zones import reverse_name, reverse_zones, zone_records
from cluster_iac.spec.strings import hostname_problem, hostnames_valid

LABELS = st.text(alphabet="ab9-\n.A_", max_size=6) | st.sampled_from(
    ["a" * 63, "a" * 64, "a" + "-" * 61 + "b", "-a", "a-", "", "\n", "a\nb", "g0001-bmc"])


@given(st.lists(LABELS, max_size=6))
def test_hostnames_valid_is_hostname_problem_of_each(names: list[str]) -> None:
    assert hostnames_valid(names) == all(hostname_problem(n) is None for n in names)


def _plan(hosts: list[str], addresses: dict[str, dict[str, str]]) -> SimpleNamespace:
    return SimpleNamespace(nodes=[SimpleNamespace(hostname=h) for h in hosts],
                           addresses=addresses)


def test_dns_records_without_problems_are_the_names_in_natural_order() -> None:
    plan = _plan(["g10", "g9"], {"management": {"g10": "10.0.0.2", "g9": "10.0.0.1",
                                                "sw1": "10.0.0.3"},
                                 "bmc": {"g9": "10.1.0.1"}})
    records, problems = dns_records(plan)  # type: ignore[arg-type]
    assert problems == []
    assert [r.name for r in records] == ["g9", "g9-bmc", "g10", "sw1"]


def test_dns_records_report_each_clash_and_bad_name_in_order() -> None:
    long = "a" * 60
    plan = _plan(["x", "x-bmc", long], {
        "management": {"x": "10.0.0.1", "x-bmc": "10.0.0.2", long: "10.0.0.3"},
        "bmc": {"x": "10.1.0.1", long: "10.1.0.2"}})
    records, problems = dns_records(plan)  # type: ignore[arg-type]
    assert [p.code for p in problems] == ["DNS-NAME-CLASH"] * 2
    assert "x on the bmc network and x-bmc on the management network" in problems[0].message
    assert f"'{long}-bmc'" in problems[1].message and "at most 63" in problems[1].message
    assert [r.name for r in records] == [long, f"{long}-bmc", "x", "x-bmc"]


def _sorted_zones(domain: str, cidrs: list[str], records: list[DnsRecord]
                  ) -> dict[str, list[tuple[str, str, str]]]:
    """The plain version: each record into its zone in name order, then each reverse zone
    sorted by its owners' octets as numbers."""
    out: dict[str, list[tuple[str, str, str]]] = {domain: []}
    for cidr in cidrs:
        for zone, _prefix in reverse_zones(IPv4Network(cidr)):
            out.setdefault(zone, [])
    for record in records:
        out[domain].append((record.name, "A", record.address))
        octets = record.address.split(".")
        zone = next(z for z in (".".join(reversed(octets[:size])) + ".in-addr.arpa"
                                for size in (3, 2, 1)) if z in out)
        owner = ".".join(reversed(octets[len(zone.split(".")) - 2:]))
        out[zone].append((owner, "PTR", f"{record.name}.{domain}."))
    for zone, held in out.items():
        if zone != domain:
            held.sort(key=lambda r: [int(x) for x in reversed(r[0].split("."))])
    return dict(sorted(out.items()))


CIDRS = ["10.0.0.0/16", "10.2.0.0/21", "10.3.4.0/26", "10.3.4.64/26", "12.0.0.0/8"]


@given(st.lists(st.tuples(st.sampled_from(CIDRS), st.integers(0, 2**24 - 1)), max_size=40,
                unique_by=lambda t: t[1]))
def test_reverse_zones_filled_in_address_order_are_the_sorted_zones(
        picks: list[tuple[str, int]]) -> None:
    records = []
    for index, (cidr, offset) in enumerate(picks):
        network = IPv4Network(cidr)
        address = str(IPv4Address(int(network.network_address) + offset % network.num_addresses))
        records.append(DnsRecord(f"h{index}", address, "management", f"h{index}"))
    assert zone_records("c.internal", CIDRS, records) == _sorted_zones("c.internal", CIDRS,
                                                                       records)


def test_reverse_name_cuts_the_address_at_its_zone() -> None:
    heads = {"10.0.1": "1.0.10.in-addr.arpa", "10.2": "2.10.in-addr.arpa", "12": "12.in-addr.arpa"}
    assert reverse_name("10.0.1.7", heads) == ("1.0.10.in-addr.arpa", "7")
    assert reverse_name("10.2.3.4", heads) == ("2.10.in-addr.arpa", "4.3")
    assert reverse_name("12.5.6.7", heads) == ("12.in-addr.arpa", "7.6.5")
