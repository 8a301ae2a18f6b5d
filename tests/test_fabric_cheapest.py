"""The cheapest fabric that meets the policy: hosts' ports that fit one switch are one switch
(counted port by port, not as every host's most), and a spec that forces a larger fabric
gets an info finding naming the cheaper one. NVIDIA's SuperPOD tables stay as they are
(tests/test_fabric.py)."""

from __future__ import annotations

from typing import Any

from cluster_iac.base.errors import Severity
from cluster_iac.checks import run_checks
from tests.facility_fixtures import compile_data, example_data


def _seed_with_four_port_servers() -> dict[str, Any]:
    """The seed cluster with four HDR ports on each of its four Lustre OSS: 8 compute hosts
    x 1 + 1 MDS x 2 + 4 OSS x 4 = 26 ports on a 40-port QM8700, where 13 hosts x 4 (the
    most any host has) = 52 would not fit."""
    data = example_data("seed-64gpu-h100")
    data["node_types"]["oss"]["nics"][0]["count"] = 4
    return data


def test_mixed_port_counts_that_fit_one_switch_are_one_switch() -> None:
    plan = compile_data(_seed_with_four_port_servers())
    fabric = plan.fabrics["compute"]
    # before: 3 leaves and 2 spines with 60 leaf-spine cables for 26 host ports
    assert (fabric.design, fabric.tiers, fabric.switch_counts) == ("single-switch", 1,
                                                                   {"leaf": 1})
    assert fabric.link_counts == {"node-leaf": 26}
    assert fabric.spare_ports == 40 - 26
    assert not [d for d in run_checks(plan) if d.code == "FABRIC-OVERBUILT"]


def test_a_forced_second_tier_gets_a_finding_naming_the_single_switch() -> None:
    data = example_data("seed-64gpu-h100")
    data["fabric"]["compute"]["tiers"] = 2
    plan = compile_data(data)
    assert plan.fabrics["compute"].tiers == 2
    (finding,) = [d for d in run_checks(plan) if d.code == "FABRIC-OVERBUILT"]
    assert finding.severity is Severity.INFO
    assert finding.path == ("fabric", "compute", "tiers")
    leaves = plan.fabrics["compute"].switch_counts["leaf"]
    cables = plan.fabrics["compute"].link_counts["leaf-spine"]
    assert (f"its 18 host ports fit one qm8700 (40 ports), but it is built as {leaves} leaves "
            f"and 1 upper-tier switches with {cables} switch-to-switch cables") in finding.message
    assert "22 spare ports" in finding.message


def test_planned_growth_is_not_over_building() -> None:
    data = example_data("seed-64gpu-h100")
    data["fabric"]["compute"]["planned_scalable_units"] = 2
    plan = compile_data(data)
    assert plan.fabrics["compute"].tiers == 2
    assert not [d for d in run_checks(plan) if d.code == "FABRIC-OVERBUILT"]


def test_a_fabric_s_hosts_are_counted_once_a_plan_and_let_go_with_it() -> None:
    """The cost and growth checks read one count of a fabric's hosts (at 100,000 GPUs each
    count reads 300,000 links); the count is the uncached one, and a plan let go takes it
    with it."""
    import gc
    import weakref

    from cluster_iac.checks import fabric_cost

    plan = compile_data(example_data("seed-64gpu-h100"))
    first = fabric_cost.fabric_hosts(plan, "compute")
    assert first == fabric_cost._fabric_hosts(plan, "compute")
    run_checks(plan)
    assert fabric_cost.fabric_hosts(plan, "compute") is first
    gone = weakref.ref(plan)
    del plan, first
    gc.collect()
    assert gone() is None
