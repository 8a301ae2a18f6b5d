"""Cooling from physics: loop heat = flow x density x c_p x rise, the CDU, N+1 pumps, and
platforms that need liquid, each finding located and stating its figures."""

from __future__ import annotations

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.catalog import builtin_catalog
from cluster_iac.plan.cooling import loop_figures, loop_heat_kw, properties_at
from cluster_iac.spec.parse import parse_spec
from tests.check_fixtures import findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import example_data


def test_sixty_litres_a_minute_of_water_at_five_kelvin_carry_about_21_kw() -> None:
    """The seed guide's pump: 60 L/min = 1 L/s; water at 42.5 C (NIST): 991.17 kg/m3,
    4.1795 kJ/(kg K); 0.001 m3/s x 991.17 x 4.1795 x 5 K = 20.71 kW."""
    water = builtin_catalog().coolants["water"]
    density, cp = properties_at(water.points, 42.5)
    assert density == pytest.approx(991.1725)
    assert cp == pytest.approx(4.1795)
    assert loop_heat_kw(60, density, cp, 5) == pytest.approx(20.713, abs=0.001)


def test_properties_interpolate_and_hold_at_the_table_ends() -> None:
    pg25 = builtin_catalog().coolants["pg25"]
    assert properties_at(pg25.points, 35) == pytest.approx((1013.5, 3.98))
    assert properties_at(pg25.points, 5) == (1024, 3.93)
    assert properties_at(pg25.points, 90) == (1000, 4.03)


def test_seed_loop_figures() -> None:
    (loop,) = loop_figures(example_build("seed-64gpu-h100").plan)
    assert loop.racks == ("r01",)
    assert loop.heat_kw == pytest.approx(45.1)
    assert loop.flow_kw == pytest.approx(150 / 60_000 * 991.1725 * 4.1795 * 5)  # 51.78 kW
    assert loop.one_pump_down_kw == loop.flow_kw  # 2 pumps, 1 required: N+1


def test_gb200_loops_carry_two_nvl72_racks_each() -> None:
    """PG25 at the 35 C mean: 1013.5 kg/m3, 3.98 kJ/(kg K); 450 L/min x 10 K = 302.5 kW for
    two racks of 132.24 kW; needing both pumps, one down leaves 225 L/min: 151.3 kW."""
    loops = loop_figures(example_build("gb200-nvl72").plan)
    assert [(f.name, f.racks) for f in loops] == [("cdu-a", ("nvl1", "nvl2")),
                                                  ("cdu-b", ("nvl3", "nvl4"))]
    for fig in loops:
        assert fig.heat_kw == pytest.approx(2 * 132.24, abs=0.005)
        assert fig.flow_kw == pytest.approx(450 / 60_000 * 1013.5 * 3.98 * 10)  # 302.54 kW
    data = example_data("gb200-nvl72")
    data["cooling"]["loops"][0]["pumps"] = {"count": 2, "required": 2}  # no spare pump
    found = findings_of(data, "COOLING-PUMP-REDUNDANCY")
    assert [f.path for f in found] == [("cooling", "loops", 0, "pumps")]
    assert found[0].details["limit"] == pytest.approx(450 / 60_000 * 1013.5 * 3.98 * 10 / 2,
                                                      abs=0.001)


def test_guides_sixty_lpm_loop_is_rejected_at_its_flow() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0]["flow_lpm"] = 60
    found = findings_of(data, "COOLING-LOOP-FLOW")
    assert [f.message for f in found] == [
        "loop cdu1 must carry 45.1 kW from r01, but 60 L/min of water x 991.2 kg/m3 x "
        "4.179 kJ/(kg K) x 5 K = 20.7 kW (218%); it needs 131 L/min at this rise"]
    assert found[0].path == ("cooling", "loops", 0, "flow_lpm")
    assert found[0].details == {"measured": 45.1, "limit": 20.713, "unit": "kW"}


def test_glycol_carries_less_than_water_at_the_same_flow() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0]["coolant"] = "pg25"
    data["cooling"]["loops"][0]["flow_lpm"] = 130  # water would carry 44.9 kW
    # PG25 at 42.5 C: 1009.75 kg/m3, 3.995 kJ/(kg K): 130/60000 x 1009.75 x 3.995 x 5 = 43.7 kW
    assert messages(data, "COOLING-LOOP-FLOW") == [
        "loop cdu1 must carry 45.1 kW from r01, but 130 L/min of pg25 x 1009.8 kg/m3 x "
        "3.995 kJ/(kg K) x 5 K = 43.7 kW (103%); it needs 134 L/min at this rise"]


def test_cdu_smaller_than_the_heat() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0]["cdu_capacity_kw"] = 40
    found = findings_of(data, "COOLING-CDU")
    assert [f.message for f in found] == [
        "loop cdu1 must carry 45.1 kW from r01, 113% of its CDU's 40 kW; over by 5.1 kW"]
    assert found[0].path == ("cooling", "loops", 0, "cdu_capacity_kw")


def test_no_spare_pump_fails_n_plus_one() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0]["pumps"] = {"count": 2, "required": 2}  # each pump 75 L/min
    found = findings_of(data, "COOLING-PUMP-REDUNDANCY")
    assert [f.message for f in found] == [
        "loop cdu1 with one pump down: 75 L/min of water x 991.2 kg/m3 x 4.179 kJ/(kg K) x "
        "5 K = 25.9 kW, less than the 45.1 kW of r01 (N+1 needs one pump more than its "
        "required ones)"]
    assert found[0].path == ("cooling", "loops", 0, "pumps")
    data["cooling"]["loops"][0]["pumps"] = {"count": 3, "required": 2}
    assert findings_of(data, "COOLING-PUMP-REDUNDANCY") == []


@pytest.mark.parametrize(("change", "code", "key", "message"), [
    ({"coolant": "glycol"}, "COOLING-LOOP-COOLANT", "coolant",
     "loop cdu1: unknown coolant 'glycol'"),
    ({"return_c": 40}, "COOLING-LOOP-TEMPERATURE", "return_c",
     "loop cdu1: return 40 C is not above supply 40 C, so the loop carries no heat"),
    ({"pumps": {"count": 1, "required": 2}}, "COOLING-LOOP-PUMPS", "pumps",
     "loop cdu1 needs 2 pumps for its flow but has 1"),
    ({"racks": "r0[1-2]"}, "COOLING-LOOP-RACK", "racks",
     "loop cdu1 cools rack r02, which is declared cooling: air"),
    ({"racks": "r01,r09"}, "COOLING-LOOP-RACK", "racks",
     "loop cdu1: 'r09' is not a rack of any row"),
])
def test_loop_references(change: dict[str, object], code: str, key: str, message: str) -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0].update(change)
    found = findings_of(data, code)
    assert [f.message for f in found] == [message]
    assert found[0].path == ("cooling", "loops", 0, key)
    assert found[0].is_error


def test_a_rack_in_two_loops() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"].append({**data["cooling"]["loops"][0], "name": "cdu2"})
    assert messages(data, "COOLING-LOOP-RACK") == [
        "rack r01 is in loops cdu1 and cdu2; give each rack one loop"]


def test_liquid_only_platform_in_an_air_rack_is_rejected_even_with_the_air_limit_raised() -> None:
    data = example_data("gb200-nvl72")
    for row in data["rows"]:
        for group in row["racks"]:
            group["cooling"] = "air"
            group.pop("liquid_capacity_kw", None)
    data.setdefault("policy", {})["air_cooled_rack_kw"] = 500
    data["cooling"].pop("loops", None)
    found = findings_of(data, "COOLING-PLATFORM")
    assert found and all(f.is_error for f in found)
    assert found[0].message.startswith(
        "air-cooled rack nvl1 holds 18 node(s) of type gb200 (NVIDIA GB200 NVL72 compute tray")
    assert found[0].message.endswith("which are cooled by liquid only: declare the rack "
                                     "cooling: liquid and the loop that cools it (and 3 more "
                                     "rack(s) of this rack group)")
    assert found[0].path[-1] == "cooling"
    assert findings_of(data, "COOLING-AIR") == []


def test_either_platform_is_fine_in_both_kinds_of_rack() -> None:
    assert builtin_catalog().platforms["hgx-h100-8gpu"].cooling == "either"
    data = example_data("seed-64gpu-h100")  # hgx-h100-8gpu in a liquid rack
    assert findings_of(data, "COOLING-PLATFORM") == []


def test_a_loop_rack_needs_no_liquid_capacity_of_its_own() -> None:
    data = example_data("seed-64gpu-h100")
    del data["rows"][0]["racks"][0]["liquid_capacity_kw"]
    assert findings_of(data, "COOLING-LIQUID-CAPACITY") == []
    data["cooling"]["loops"] = []
    assert messages(data, "COOLING-LIQUID-CAPACITY") == [
        "liquid-cooled rack r01 sheds 45.1 kW but declares no liquid_capacity_kw and is in no "
        "cooling.loops entry, so its liquid cooling cannot be checked"]


def test_loop_fields_are_validated_by_the_spec() -> None:
    data = example_data("seed-64gpu-h100")
    data["cooling"]["loops"][0]["flow_lpm"] = -5
    with pytest.raises(CompileError) as info:
        parse_spec(data)
    assert [(d.code, d.path) for d in info.value.diagnostics] == [
        ("SPEC-VALUE", ("cooling", "loops", 0, "flow_lpm"))]
