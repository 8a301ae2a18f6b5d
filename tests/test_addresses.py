"""IP plan: deterministic, unique, inside the subnet, reserved addresses skipped."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.compile.assign_addresses import PoolOverflow, allocate, layout, pools
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
    # compute nodes from the compute pool, the second half of the /22; switches after it
    assert mgmt["dgx-001"] == "10.0.0.64" and mgmt["dgx-127"] == "10.0.0.190"
    assert mgmt["mgmt-agg1-1"] == "10.0.2.64"
    found = pools(plan, "management")
    assert set(found) == {"infrastructure", "compute", "switches"}  # fabric ports: on bmc
    assert found["infrastructure"][:3] == ["head-01", "head-02", "login-01"]


def test_pools_keep_their_block_and_name_order() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    bmc = plan.addresses["bmc"]
    # /22: infrastructure 1/16, compute 1/2, switches 1/16, fabric 1/8, NVLink 1/8, PDUs 1/8
    assert bmc["head-01"] == "10.1.0.11" and bmc["dgx-001"] == "10.1.0.64"
    assert bmc["oob-agg1-1"] == "10.1.2.64"  # switches: 10.1.2.64/26, upper tiers first
    assert bmc["ib-spine-01"] == "10.1.2.128"  # fabric: 10.1.2.128/25, spines before leaves
    assert bmc["mgmt-r1-pdu-a"] == "10.1.3.128"  # PDUs: 10.1.3.128/25
    fabric = pools(plan, "bmc")["fabric"]
    assert fabric.index("seth-spine-01") < fabric.index("ib-leaf-su1-r1") < fabric.index(
        "ib-leaf-su4-r8") < fabric.index("seth-leaf-01")
    assert pools(plan, "bmc")["pdus"][:3] == ["mgmt-r1-pdu-a", "mgmt-r1-pdu-b", "mgmt-r2-pdu-a"]


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


def test_too_small_pool_names_its_range_and_counts() -> None:
    with pytest.raises(PoolOverflow, match=r"pool 'infrastructure' \(10.0.0.11-10.0.0.31, 21 "
                                           r"addresses after 10 reserved\) is too small for its "
                                           r"22 devices"):
        allocate(IPv4Network("10.0.0.0/24"), 10,
                 {"infrastructure": [f"h{i}" for i in range(22)]}, layout("ipoib"))


@given(prefix=st.integers(min_value=20, max_value=30), reserved=st.integers(1, 40),
       count=st.integers(0, 600), base=st.integers(0, 2**24 - 1))
def test_allocation_properties(prefix: int, reserved: int, count: int, base: int) -> None:
    cidr = IPv4Network((IPv4Address(0x0A000000 + (base << 8) % 2**24), prefix), strict=False)
    devices = [f"dev{i:04d}" for i in range(count)]
    # the compute pool: the last 7/8 of the subnet, less the broadcast address
    capacity = cidr.num_addresses * 7 // 8 - 1
    shares = layout("ipoib")
    if count > capacity or reserved >= cidr.num_addresses // 8:
        if count > capacity:
            with pytest.raises(PoolOverflow):
                allocate(cidr, reserved, {"compute": devices}, shares)
        return
    first = allocate(cidr, reserved, {"compute": devices}, shares)
    assert first == allocate(cidr, reserved, {"compute": list(devices)}, shares)
    # one more device takes the next address and moves none
    more = allocate(cidr, reserved, {"compute": [*devices, "zz"]}, shares) \
        if count < capacity else first
    assert all(more[d] == first[d] for d in devices)
    values = [ip_address(v) for v in first.values()]
    assert len(set(values)) == count
    assert all(v in cidr and v not in (cidr.network_address, cidr.broadcast_address)
               for v in values)
    assert all(int(v) - int(cidr.network_address) > reserved for v in values)
    assert list(first) == devices  # order of devices kept
