"""Power checks: breakers, A/B and three-PDU redundancy, phase balance, budgets, PSUs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.base.errors import Severity
from cluster_iac.cli.main import main
from tests.check_fixtures import errors_of, findings_of, messages
from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import compile_data, example_data


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_example_validates_without_error(name: str) -> None:
    build = example_build(name)  # build() raises PipelineError on any error finding
    assert not [f for f in build.findings if f.is_error]


# Each example's busiest line (highest share of its limit over every case), worked by hand.
# Every PDU is 415 V wye: a cord sits line to neutral at 415 / sqrt 3 = 239.6 V, and at PF 0.95
# a line carries P / (239.6 V x 0.95) = P / 227.62 W per A. Limits: 32 A x 80 % = 25.6 A,
# 63 A x 80 % = 50.4 A (NEC 210.20(A); none of these breakers is listed for 100 %).
BUSIEST_LINES = {
    # Two HGX H100 (10.2 kW, 6 PSUs 4+2) on three PDUs: 2 cords each per PDU, L1 holds one of
    # each. Normal 2 x 1,700 W = 3,400 W -> 14.94 A; PDU B down, 4 live PSUs: 2 x 2,550 W =
    # 5,100 W -> 22.41 A of 25.6 A.
    "minimal": ("r01-pdu-a", "CB1", "L1", 14.94, 22.41, 25.6, "PDU r01-pdu-b down"),
    # Two 5.6 kW nodes (6 PSUs, 5+1) per 32 A breaker, 2 cords each per line, plus the 150 W
    # management switch's cord (75 W, one of 2): 4 x 933.3 + 75 = 3,808.3 W -> 16.73 A. One
    # PSU of compute01 failed on another line: its 5 live carry 1,120 W each, 2 x 1,120 + 2 x
    # 933.3 + 75 = 4,181.7 W -> 18.37 A. A single PDU: no PDU-down case.
    "seed-64gpu-h100": ("r01-pdu-a", "CB1", "L1", 16.73, 18.37, 25.6, "compute01 PSU2 failed"),
    # A network rack's 32 A line: two 1,720 W QM9700 (2 PSUs, 1+1) and a 150 W management
    # switch, one cord each (the storage switches moved to net-r5 and net-r6 with the fabric's
    # move to Ethernet). Normal 2 x 860 + 75 = 1,795 W -> 7.89 A; PDU B down doubles every
    # cord: 3,590 W -> 15.77 A of 25.6 A.
    "dgx-h100-superpod-4su": ("net-r1-pdu-a", "CB1", "L1", 7.89, 15.77, 25.6,
                              "PDU net-r1-pdu-b down"),
    # NVL72: 8 power shelves of 6 PSUs share the 131.94 kW busbar, 2,748.75 W per PSU; L1 holds
    # 2 cords of shelf 5 and the switch's 75 W: 5,572.5 W -> 24.48 A. Feed B down: the 4 A
    # shelves carry the busbar, 5,497.5 W per PSU: 2 x 5,497.5 + 150 = 11,145 W -> 48.96 A of
    # 50.4 A (63 A x 80 %).
    "gb200-nvl72": ("nvl1-pdu-a", "CB1", "L1", 24.48, 48.96, 50.4, "PDU nvl1-pdu-b down"),
    # DGX A100 (6.5 kW, 6 PSUs 3+3) on A/B: 3 PSUs per side, 1,083.3 W each; L1 has one cord of
    # two A100s and the switch: 2 x 1,083.3 + 75 = 2,241.7 W -> 9.85 A; side B down, 3 live
    # PSUs carry 2,166.7 W each: 2 x 2,166.7 + 150 = 4,483.3 W -> 19.70 A of 25.6 A.
    "mixed-a100-h100": ("a01-pdu-a", "CB1", "L1", 9.85, 19.70, 25.6, "PDU a01-pdu-b down"),
}


@pytest.mark.parametrize("name", sorted(BUSIEST_LINES))
def test_each_examples_busiest_line(name: str) -> None:
    lines = example_build(name).plan.power_lines
    busiest = max(lines, key=lambda x: x.worst_a / x.limit_a)
    assert (busiest.pdu, busiest.circuit, busiest.line, round(busiest.normal_a, 2),
            round(busiest.worst_a, 2), busiest.limit_a, busiest.worst_case) == BUSIEST_LINES[name]


def test_seed_rack_accepted_at_415v_three_phase() -> None:
    """The seed guide: breakers A-D of 32 A, two 5.6 kW nodes on each, 415 V three-phase."""
    data = example_data("seed-64gpu-h100")
    assert data["power"]["pdu_profiles"]["seed-415v"]["voltage_v"] == 415
    # its feeds' ratings given (POWER-FEED-ASSUMED's hint), every line and feed within them
    for profile, inlet in (("seed-415v", 128), ("mgmt-208v", 30), ("storage-415v", 32)):
        data["power"]["pdu_profiles"][profile]["inlet_a"] = inlet
    assert not [f for f in findings_of(data) if f.code.startswith("POWER")]
    # Its busiest line, CB1 L1 of r01 (4 node cords and a switch cord): 3,808.3 W / (239.6 V x
    # 0.95) = 16.73 A normal, 4,181.7 W -> 18.37 A with a PSU of compute01 failed; 25.6 A limit.
    line = max(compile_data(data).power_lines, key=lambda x: x.worst_a)
    assert (line.pdu, line.circuit, line.line) == ("r01-pdu-a", "CB1", "L1")
    assert (round(line.normal_a, 2), round(line.worst_a, 2), line.limit_a) == (16.73, 18.37, 25.6)


def test_seed_rack_rejected_at_208v_single_phase() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    found = findings_of(data, "POWER-BREAKER")
    # Single phase: CB1 holds compute01, compute05 (5.6 kW each) and the rack's 150 W
    # management switch on its one line: 11,350 W / (208 V x 0.95) = 57.4 A, against
    # 32 A x 80 % = 25.6 A.
    assert [f.message for f in found] == [
        "rack r01 PDU r01-pdu-a breaker CB1 line L1 carries 57.4 A in normal operation, 224% "
        "of its 25.6 A limit (32 A breaker x 80 %, continuous load, NEC 210.20(A)): 11.35 kW "
        "/ (208.0 V x 0.95 PF); over by 31.8 A (and 3 more line(s) of PDU profile seed-415v)"]
    assert found[0].path == ("power", "pdu_profiles", "seed-415v", "breaker_a")
    assert found[0].details == {"measured": 57.4, "limit": 25.6, "unit": "A"}


def _four_dgx(**profile: object) -> dict:  # type: ignore[type-arg]
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(profile)
    return data


def test_three_100_percent_32a_pdus_with_four_dgx_rejected_at_the_line() -> None:
    """Issue 10's case: 8 cords per PDU on 3 lines; with one PDU down a 3-cord line carries
    3 x 2.55 kW = 7.65 kW / (239.6 V x 0.95) = 33.6 A on a 32 A (100 %-rated) breaker.
    The kW sum (20.6 kW of 21.9 kW, 94 %) would have passed."""
    found = errors_of(_four_dgx(breaker_a=32, rated_100_percent=True))
    assert [f.message for f in found] == [
        "rack su1-r1 PDU su1-r1-pdu-a breaker CB1 line L1 carries 33.6 A with PDU "
        "su1-r1-pdu-b down (or its feed su1-r1-feed-b, or panel su1-panel-b), 105% of its "
        "32.0 A limit (32 A breaker x 100 %, listed for 100 % continuous load): 7.65 kW / "
        "(239.6 V x 0.95 PF), line to neutral 415 V / sqrt 3 = 239.6 V; over by 1.6 A, so the "
        "rack is not redundant (and 185 more line(s) of PDU profile dgx-3pdu)"]
    assert found[0].code == "POWER-REDUNDANCY"
    assert found[0].path == ("power", "pdu_profiles", "dgx-3pdu", "breaker_a")
    assert found[0].details == {"measured": 33.6, "limit": 32.0, "unit": "A",
                                "case": "PDU su1-r1-pdu-b down"}
    # 186 lines: 31 racks of 4 DGX x 3 PDUs x 2 lines with 3 DGX cords. The 32nd rack holds 3
    # DGX: 6 cords per PDU, 2 per line; with PDU B down L1 also carries the 150 W management
    # switch alone: 2 x 2.55 kW + 0.15 kW = 5.25 kW / (239.6 V x 0.95) = 23.06 A.
    pdus = {p.pdu: p for p in compile_data(_four_dgx(breaker_a=32)).power_pdus}
    assert round(pdus["su1-r1-pdu-c"].worst_a, 2) == 33.61
    assert round(pdus["su4-r8-pdu-a"].worst_a, 2) == 23.06


def _busiest_dgx_line(data: dict) -> tuple[float, float, float]:  # type: ignore[type-arg]
    """(normal A, worst A, limit A) of su1-r1's PDU A, CB1 L1 (3 DGX cords)."""
    line = next(x for x in compile_data(data).power_lines
                if (x.pdu, x.circuit, x.line) == ("su1-r1-pdu-a", "CB1", "L1"))
    return round(line.normal_a, 2), round(line.worst_a, 2), line.limit_a


def test_larger_breakers_carry_the_same_line() -> None:
    # The line does not depend on the breaker: 3 x 1,700 W = 5,100 W / (239.6 V x 0.95) =
    # 22.41 A normal, 3 x 2,550 W = 7,650 W -> 33.61 A with a PDU down.
    # 33.6 A against 40 A x 100 % = 40 A, and against 63 A x 80 % = 50.4 A: both fit.
    data = _four_dgx(breaker_a=40, rated_100_percent=True)
    assert errors_of(data) == [] and _busiest_dgx_line(data) == (22.41, 33.61, 40.0)
    data = _four_dgx(breaker_a=63, rated_100_percent=False)
    assert errors_of(data) == [] and _busiest_dgx_line(data) == (22.41, 33.61, 50.4)
    # 40 A derated to 80 % = 32 A: the same 33.6 A line is over again, by 1.6 A.
    found = errors_of(_four_dgx(breaker_a=40, rated_100_percent=False))
    assert [(f.code, f.details["measured"], f.details["limit"]) for f in found] == [
        ("POWER-REDUNDANCY", 33.6, 32.0)]


def test_four_dgx_on_ab_feeds_go_down_with_a_feed() -> None:
    """A/B feeds give each DGX 3 of its 6 PSUs per side; it needs 4, so losing a feed takes
    every DGX down: one finding per node type, at the profile's layout."""
    data = _four_dgx(layout="ab", breaker_a=60, rated_100_percent=False)
    found = findings_of(data, "POWER-PSU-FAILOVER")
    assert [f.message for f in found] == [
        "dgx-001 and 126 more (dgx-h100): with PDU su1-r1-pdu-a down (or its feed "
        "su1-r1-feed-a, or panel su1-panel-a), 3 of its 6 PSUs stay live, fewer than the 4 it "
        "needs for 10.20 kW; the node goes down"]
    assert found[0].path == ("power", "pdu_profiles", "dgx-3pdu", "layout")
    # The lines carry the DGX only while they are up: normal 4 x 1,700 W + 75 W = 6,875 W
    # / (239.6 V x 0.95) = 30.20 A, within 60 A x 80 % = 48 A. Worst: dgx-001's PSU2 (on
    # L2) failed, its 5 live PSUs carry 2,040 W: 3 x 1,700 + 2,040 + 75 = 7,215 W -> 31.70 A.
    # (With PDU B down the DGX are off: L1 carries the switch alone, 150 W -> 0.66 A.)
    assert errors_of(data) == found
    assert _busiest_dgx_line(data) == (30.2, 31.7, 48.0)


def test_phase_imbalance_of_loaded_pdus_warns() -> None:
    found = findings_of(_four_dgx(breaker_a=32), "POWER-PHASE-IMBALANCE")
    # Four DGX x 2 cords per PDU = 8 cords on 3 lines: 3/3/2, each 1.7 kW: 5.1 kW / (239.6 V x
    # 0.95) = 22.4 A twice, and 2 x 1.7 kW + 75 W (a switch cord) = 15.3 A. Average 20.0 A;
    # the largest deviation |15.3 - 20.0| / 20.0 = 24 %. The PDU carries 13.68 kW of its
    # 21.85 kW limit (63 %), above the policy's 50 % floor.
    assert [f.message for f in found] == [
        "rack su1-r1 PDU su1-r1-pdu-b phase imbalance 24% (L1 22.4 A, L2 22.4 A, L3 15.3 A) at "
        "63% load exceeds the policy's 20% by 4 points (and 92 more PDU(s) of PDU profile "
        "dgx-3pdu)"]
    assert found[0].severity is Severity.WARNING
    assert found[0].path == ("policy", "max_phase_imbalance")


def test_phase_imbalance_policy_threshold_and_light_loads() -> None:
    data = _four_dgx(breaker_a=32)
    data["policy"]["max_phase_imbalance"] = 0.25
    assert findings_of(data, "POWER-PHASE-IMBALANCE") == []
    # The example (63 A): the same 24 % at 32 % load, below the 50 % floor: no warning.
    assert findings_of(example_data("dgx-h100-superpod-4su"), "POWER-PHASE-IMBALANCE") == []
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["phase_imbalance_min_load_percent"] = 0
    found = findings_of(data, "POWER-PHASE-IMBALANCE")
    # Without the load floor the management racks show up too: mgmt-r3's PDU A carries the
    # storage nodes' cords 2/1/1 on its lines (7.0, 3.8, 3.8 A: 43 %).
    assert [f.message.split(" (and")[0] for f in found] == [
        "rack mgmt-r3 PDU mgmt-r3-pdu-a phase imbalance 43% (L1 7.0 A, L2 3.8 A, L3 3.8 A) at "
        "10% load exceeds the policy's 20% by 23 points",
        "rack su1-r1 PDU su1-r1-pdu-b phase imbalance 24% (L1 22.4 A, L2 22.4 A, L3 15.3 A) at "
        "32% load exceeds the policy's 20% by 4 points"]


def test_row_budget() -> None:
    data = example_data("seed-64gpu-h100")
    data["rows"][0]["max_power_kw"] = 40
    # without the example's lock the aggregation pair is apart (the default): the second
    # switch stands in another row, so row a holds one switch fewer than the locked example
    assert messages(data, "POWER-ROW") == [
        "row a draws 47.3 kW at maximum, 118% of its 40 kW budget; over by 7.3 kW"]
    assert findings_of(data, "POWER-ROW")[0].path == ("rows", 0, "max_power_kw")


def test_facility_budget_with_pue() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["facility_capacity_kw"] = 55
    assert messages(data, "POWER-FACILITY") == [
        "the cluster draws 53.9 kW IT load x PUE 1.1 = 59.3 kW, 108% of the facility's 55 kW; "
        "over by 4.3 kW"]
    hint = findings_of(data, "POWER-FACILITY")[0].hint
    assert hint is not None and "power.facility_capacity_kw: 60 or more" in hint
    data["power"]["facility_capacity_kw"] = 60  # the hint followed: fits
    assert findings_of(data, "POWER-FACILITY") == []
    data["power"]["facility_capacity_kw"] = 55
    data["power"]["pue"] = 1.01  # 53.94 x 1.01 = 54.5 kW: fits
    assert findings_of(data, "POWER-FACILITY") == []


def test_psu_redundancy_of_the_guides_two_2000w_supplies() -> None:
    """The guide's 'two independent 2000 W power supplies' per 5.6 kW node cannot work."""
    data = example_data("seed-64gpu-h100")
    data["node_types"]["h100-hdr"]["psus"] = {"count": 2, "rating_w": 2000, "required": 1}
    found = findings_of(data, "POWER-PSU-REDUNDANCY")
    assert [f.message for f in found] == [
        "node type h100-hdr: 1 of 2 PSUs carry 5.60 kW at 5.60 kW each, 280% of their 2 kW "
        "rating; over by 3.60 kW per PSU"]
    assert found[0].path == ("node_types", "h100-hdr", "psus")


def test_dgx_psus_4_plus_2_accepted() -> None:  # 4 x 3.3 kW = 13.2 kW >= 10.2 kW
    plan = example_build("dgx-h100-superpod-4su").plan
    assert findings_of(plan, "POWER-PSU-REDUNDANCY") == []
    assert findings_of(plan, "POWER-PSU-FAILOVER") == []
    # A PDU down leaves each DGX 4 of 6 PSUs: 10.2 kW / 4 = 2,550 W each, within 3.3 kW. The
    # 3-cord line of su1-r1's PDU A then carries 7,650 W / (239.6 V x 0.95) = 33.61 A of its
    # 63 A (100 %-rated) breaker.
    assert {c.maximum_w for c in plan.power_cords if c.device.startswith("dgx")} == {2550}
    assert _busiest_dgx_line(example_data("dgx-h100-superpod-4su")) == (22.41, 33.61, 63.0)


def test_policy_level_override_and_ignore() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    data["policy"] = {"levels": {"POWER-BREAKER": "warning"}}
    found = findings_of(data, "POWER-BREAKER")
    # The same line as at level error: 11,350 W / (208 V x 0.95) = 57.4 A of 25.6 A.
    assert [(f.severity, f.details["measured"], f.details["limit"]) for f in found] == [
        (Severity.WARNING, 57.4, 25.6)]
    data["policy"] = {"levels": {"POWER-BREAKER": "ignore"}}
    assert findings_of(data, "POWER-BREAKER") == []


def test_too_few_outlets_is_located_and_its_hint_followed_renders(tmp_path: Path) -> None:
    """SPEC-PDU-OUTLETS (found without a hint by tests/test_lock_property.py): a profile with
    fewer outlets than a rack's PDU needs is refused at the profile's outlets, and the hint's
    figure, written in, renders."""
    data = example_data("seed-64gpu-h100")
    (profile,) = [name for name, p in data["power"]["pdu_profiles"].items()
                  if p.get("outlets") == 54]
    data["power"]["pdu_profiles"][profile]["outlets"] = 20
    spec = tmp_path / "seed.yaml"
    YAML().dump(data, spec)
    refused = CliRunner().invoke(main, ["validate", str(spec)])
    assert refused.exit_code == 1
    head = next(line for line in refused.output.splitlines() if "error[SPEC-PDU-OUTLETS]" in line)
    line = int(head.split(":")[1])
    assert spec.read_text().splitlines()[line - 1].strip().startswith("outlets: 20"), head
    hint = re.search(rf"outlets: (\d+) or more in profile '{profile}'", refused.output)
    assert hint is not None, refused.output
    data["power"]["pdu_profiles"][profile]["outlets"] = int(hint.group(1))
    YAML().dump(data, spec)
    followed = CliRunner().invoke(main, ["validate", str(spec)])
    assert "SPEC-PDU-OUTLETS" not in followed.output
    assert followed.exit_code == 0, followed.output
