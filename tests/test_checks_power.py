"""Power checks: breakers, A/B and three-PDU redundancy, phase balance, budgets, PSUs."""

from __future__ import annotations

import pytest

from cluster_iac.errors import Severity
from tests.check_fixtures import errors_of, findings_of, messages
from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import example_data


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_example_validates_without_error(name: str) -> None:
    build = example_build(name)  # build() raises PipelineError on any error finding
    assert not [f for f in build.findings if f.is_error]


def test_seed_rack_accepted_at_415v_three_phase() -> None:
    """The seed guide: breakers A-D of 32 A, two 5.6 kW nodes on each, 415 V three-phase."""
    data = example_data("seed-64gpu-h100")
    assert data["power"]["pdu_profiles"]["seed-415v"]["voltage_v"] == 415
    assert not [f for f in findings_of(data) if f.code.startswith("POWER")]


def test_seed_rack_rejected_at_208v_single_phase() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    found = findings_of(data, "POWER-BREAKER")
    # 208 V x 32 A x 0.95 x 80 % = 5.06 kW per breaker; CB1 holds two 5.6 kW nodes and the
    # rack's 150 W management switch.
    assert [f.message for f in found] == [
        "rack r01 PDU r01-pdu-a breaker CB1 carries 11.35 kW (compute01, compute05, mgmt-r01-1), "
        "224% of its 5.06 kW derated limit (208 V 1-phase 32 A x 0.95 PF x 80 %); over by "
        "6.29 kW (and 3 more breaker(s) of PDU profile seed-415v)"]
    assert found[0].path == ("power", "pdu_profiles", "seed-415v", "breaker_a")
    assert found[0].details == {"measured": 11.35, "limit": 5.059, "unit": "kW"}


def _four_dgx(**profile: object) -> dict:  # type: ignore[type-arg]
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(profile)
    return data


def test_four_dgx_on_ab_60a_derated_rejected() -> None:
    """One feed alone must carry 4 x 10.2 kW (+ the rack's switch): 41.1 > 32.78 kW."""
    data = _four_dgx(layout="ab", circuits=1, breaker_a=60, rated_100_percent=False)
    assert messages(data, "POWER-REDUNDANCY") == [
        "rack su1-r1 PDU su1-r1-pdu-a breaker CB1 carries 41.10 kW with su1-r1-pdu-b down, "
        "125% of its 32.78 kW derated limit (415 V 3-phase 60 A x 0.95 PF x 80 %); over by "
        "8.32 kW, so the rack is not redundant (and 61 more breaker(s) of PDU profile dgx-3pdu)"]
    # Three PSUs per feed cannot carry a 4+2 DGX either: 10.2 kW / 3 = 3.4 kW > 3.3 kW.
    assert messages(data, "POWER-PSU-FAILOVER") == [
        "dgx-001 and 126 more (dgx-h100): with a partner PDU down, PSU1 carries 3.40 kW, 103% "
        "of its 3.3 kW rating; too few PSUs stay on the live feeds"]


def test_four_dgx_on_three_100_percent_pdus_accepted() -> None:
    data = _four_dgx(layout="three", circuits=1, breaker_a=32, rated_100_percent=True)
    assert errors_of(data) == []
    # The same three PDUs derated to 80 % no longer carry the rack with one PDU down.
    data = _four_dgx(layout="three", circuits=1, breaker_a=32, rated_100_percent=False)
    assert [f.code for f in errors_of(data)] == ["POWER-REDUNDANCY"]


def test_phase_imbalance_of_loaded_pdus_warns() -> None:
    found = findings_of(example_data("dgx-h100-superpod-4su"), "POWER-PHASE-IMBALANCE")
    # Four DGX x 2 cords per PDU = 8 cords on 3 phases: 3/3/2 (the switch lands on L3).
    assert [f.message for f in found] == [
        "rack su1-r1 PDU su1-r1-pdu-b phase imbalance 24% (L1 22.4 A, L2 22.4 A, L3 15.3 A) at "
        "63% load exceeds the policy's 20% by 4 points (and 92 more PDU(s) of PDU profile "
        "dgx-3pdu)"]
    assert found[0].severity is Severity.WARNING
    assert found[0].path == ("policy", "max_phase_imbalance")


def test_phase_imbalance_policy_threshold_and_light_loads() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["max_phase_imbalance"] = 0.25
    assert findings_of(data, "POWER-PHASE-IMBALANCE") == []
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["phase_imbalance_min_load_percent"] = 0
    found = findings_of(data, "POWER-PHASE-IMBALANCE")
    # Without the load floor the lightly loaded management racks (79-87 % imbalance) show up.
    assert len(found) == 2 and "PDU profile ab-415v" in found[0].message


def test_row_budget() -> None:
    data = example_data("seed-64gpu-h100")
    data["rows"][0]["max_power_kw"] = 40
    assert messages(data, "POWER-ROW") == [
        "row a draws 47.6 kW at maximum, 119% of its 40 kW budget; over by 7.6 kW"]
    assert findings_of(data, "POWER-ROW")[0].path == ("rows", 0, "max_power_kw")


def test_facility_budget_with_pue() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["facility_capacity_kw"] = 55
    assert messages(data, "POWER-FACILITY") == [
        "the cluster draws 53.9 kW IT load x PUE 1.1 = 59.3 kW, 108% of the facility's 55 kW; "
        "over by 4.3 kW"]
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


def test_dgx_psus_4_plus_2_accepted() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    assert findings_of(plan, "POWER-PSU-REDUNDANCY") == []
    assert findings_of(plan, "POWER-PSU-FAILOVER") == []


def test_policy_level_override_and_ignore() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    data["policy"] = {"levels": {"POWER-BREAKER": "warning"}}
    found = findings_of(data, "POWER-BREAKER")
    assert [f.severity for f in found] == [Severity.WARNING]
    data["policy"] = {"levels": {"POWER-BREAKER": "ignore"}}
    assert findings_of(data, "POWER-BREAKER") == []
