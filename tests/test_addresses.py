"""IP plan: deterministic, unique, inside the subnet, reserved addresses skipped."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.compile.assign_addresses import allocate, members
from tests.conftest import example_build


def test_addresses_unique_and_inside_subnet(example: str) -> None:
    plan = example_build(example).plan
    for network, hosts in plan.addresses.items():
        cidr = getattr(plan.settings.networks, network).cidr
        values = list(hosts.values())
        assert len(values) == len(set(values)), network
        assert all(ip_address(v) in cidr for v in values)


def test_every_host_has_management_and_bmc_address(example: str) -> None:
    plan = example_build(example).plan
    for network in ("management", "bmc"):
        if getattr(plan.settings.networks, network) is not None:
            assert {n.hostname for n in plan.nodes} <= set(plan.addresses[network])


def test_controllers_first_after_reserved() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    mgmt = plan.addresses["management"]
    # 10.0.0.0/22 with 10 reserved: .1-.10 kept, the first controller gets .11.
    assert mgmt["head-01"] == "10.0.0.11"
    assert mgmt["login-01"] == "10.0.0.13"
    order = members(plan, "management")
    roles = [next(n.role for n in plan.nodes if n.hostname == h)
             for h in order if h in {n.hostname for n in plan.nodes}]
    assert roles.index("compute") > roles.index("lustre_oss") > roles.index("controller")


def test_bmc_carries_switch_and_pdu_management_ports() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    bmc = plan.addresses["bmc"]
    assert "su1-r1-pdu-a" in bmc and "su1-r1-pdu-c" in bmc
    assert all(s.name in bmc for s in plan.switches if s.network != "management")
    assert "su1-r1-pdu-a" not in plan.addresses["management"]


def test_addresses_stable_across_builds() -> None:
    from cluster_iac.render import build
    from tests.conftest import ROOT

    again = build(ROOT / "examples" / "seed-64gpu-h100.yaml", emit=False).plan
    assert again.addresses == example_build("seed-64gpu-h100").plan.addresses


def test_too_small_subnet_gives_counts() -> None:
    with pytest.raises(ValueError, match=r"needs 16 addresses \(10 reserved \+ 6 devices\) but "
                                         r"has 14 usable"):
        allocate(IPv4Network("10.0.0.0/28"), 10, [f"h{i}" for i in range(6)])


@given(prefix=st.integers(min_value=20, max_value=30), reserved=st.integers(1, 40),
       count=st.integers(0, 600), base=st.integers(0, 2**24 - 1))
def test_allocation_properties(prefix: int, reserved: int, count: int, base: int) -> None:
    cidr = IPv4Network((IPv4Address(0x0A000000 + (base << 8) % 2**24), prefix), strict=False)
    devices = [f"dev{i:04d}" for i in range(count)]
    usable = cidr.num_addresses - 2
    if reserved + count > usable:
        with pytest.raises(ValueError):
            allocate(cidr, reserved, devices)
        return
    first = allocate(cidr, reserved, devices)
    assert first == allocate(cidr, reserved, list(devices))  # stable under reruns
    values = [ip_address(v) for v in first.values()]
    assert len(set(values)) == count
    assert all(v in cidr and v not in (cidr.network_address, cidr.broadcast_address)
               for v in values)
    assert all(int(v) - int(cidr.network_address) > reserved for v in values)
    assert list(first) == devices  # order of devices kept
