"""The power tables: cords on lines and outlets, line currents in every case, feeds, PDUs.

Every expected current is worked by hand in the comment beside it. Constants: 415 V wye
gives 415 / sqrt 3 = 239.60 V line to neutral; PF 0.95 (the profiles' default).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.plan import electrical, power_flow, rack_flow
from cluster_iac.plan.power import circuit_loads, pdu_loads, rack_loads_w
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data, without_lustre

V_LN = 415 / math.sqrt(3)  # 239.60 V


def _line(plan, pdu, circuit, line):  # noqa: ANN001, ANN202 - small test helper
    return next(x for x in plan.power_lines
                if (x.pdu, x.circuit, x.line) == (pdu, circuit, line))


def test_three_phase_and_single_phase_formulas() -> None:
    # 415 V x 32 A x sqrt(3) x 0.95 = 21.85 kW; derated to 80 %: 17.48 kW.
    assert electrical.three_phase_w(415, 32, 0.95) == pytest.approx(21851.55, abs=0.01)
    assert electrical.continuous_limit_w(21851.55, False, 80) == pytest.approx(17481.24, abs=0.01)
    assert electrical.continuous_limit_w(21851.55, True, 80) == pytest.approx(21851.55)
    assert electrical.single_phase_w(208, 32, 0.95) == pytest.approx(6323.2)
    assert electrical.cord_volts(415, 3) == pytest.approx(239.60, abs=0.005)
    assert electrical.cord_volts(208, 3) == 208 and electrical.cord_volts(230, 1) == 230


def test_line_currents_wye_delta_single_phase_and_imbalance() -> None:
    # Wye: I = P / (V_LN x PF): 2,395.96 W / (239.60 V x 1.0) = 10 A on L1 only.
    wye = electrical.line_currents([10 * V_LN, 0, 0], 415, 3, 1.0)
    assert wye == pytest.approx((10, 0, 0))
    # Delta, one pair: I_12 = 2,080 W / 208 V = 10 A flows in L1 and back in L2.
    assert electrical.line_currents([2080, 0, 0], 208, 3, 1.0) == pytest.approx(
        (10, 10, 0), abs=1e-9)
    # Delta, two pairs sharing L2 (L1-L2 and L2-L3, 10 A each, 120 deg apart):
    # I_L2 = |I_23 - I_12| = 10 A x sqrt 3 = 17.32 A; L1 and L3 carry 10 A each.
    assert electrical.line_currents([2080, 2080, 0], 208, 3, 1.0) == pytest.approx(
        (10, 10 * math.sqrt(3), 10))
    # Balanced delta: every line sqrt 3 x the branch current; P = sqrt 3 x V_LL x I x PF.
    delta = electrical.phase_currents({"L1-L2": 2000, "L2-L3": 2000, "L3-L1": 2000}, 208, 3, 1)
    assert delta["L1"] == pytest.approx(math.sqrt(3) * 2000 / 208)
    assert electrical.three_phase_w(208, delta["L2"], 1.0) == pytest.approx(6000)
    # Single phase: 2,080 W / (208 V x 0.8) = 12.5 A.
    assert electrical.line_currents([2080], 208, 1, 0.8) == pytest.approx((12.5,))
    assert electrical.phase_imbalance({"L1": 12, "L2": 10, "L3": 8}) == pytest.approx(0.2)


def test_seed_rack_two_nodes_per_breaker_two_cords_per_line() -> None:
    """The seed guide: breakers A-D of 32 A, two 5.6 kW nodes on each, 415 V three-phase."""
    plan = example_build("seed-64gpu-h100").plan
    cb3 = [x for x in plan.power_lines if (x.pdu, x.circuit) == ("r01-pdu-a", "CB3")]
    assert [x.devices for x in cb3] == [("compute03", "compute07")] * 3
    for line in cb3:
        # Each node's 6 cords 2 per line, 5,600 / 6 = 933.3 W each: 4 x 933.3 = 3,733.3 W
        # / (239.60 V x 0.95) = 16.40 A; 80 % of 32 A = 25.6 A.
        assert line.normal_a == pytest.approx(16.40, abs=0.005)
        assert line.limit_a == pytest.approx(25.6)
        # One PSU of compute03 failed on another line: its 5 others carry 1,120 W each:
        # 2 x 1,120 + 2 x 933.3 = 4,106.7 W / (239.60 x 0.95) = 18.04 A. No partner PDU.
        assert [case for case, _ in line.cases][0] == "normal" and len(line.cases) == 2
        assert line.worst_case.startswith("compute03 PSU") and line.worst_case.endswith("failed")
        assert line.worst_a == pytest.approx(18.04, abs=0.005)
    # CB1 L1 also has the management switch's cord: 3,733.3 + 150 / 2 = 3,808.3 W -> 16.73 A.
    assert _line(plan, "r01-pdu-a", "CB1", "L1").normal_a == pytest.approx(16.73, abs=0.005)
    # Outlets alternate L1, L2, L3 in each circuit's bank: 54 outlets / 4 circuits = 14, 14,
    # 13, 13, so CB3 starts at outlet 29 (L1) and its L2 outlets are 30, 33, 36, 39.
    assert _line(plan, "r01-pdu-a", "CB3", "L2").outlets == (30, 33, 36, 39)


def test_three_415v_32a_pdus_with_four_dgx_h100_per_line() -> None:
    """Issue 10: 8 cords per PDU on 3 lines sit 3/3/2; with one PDU down each live DGX cord
    carries 10.2 kW / 4 = 2.55 kW, so a 3-cord line carries 7.65 kW."""
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"]["breaker_a"] = 32
    plan = compile_data(data)
    line = _line(plan, "su1-r1-pdu-a", "CB1", "L1")
    assert line.devices == ("dgx-001", "dgx-002", "dgx-004")
    cases = dict(line.cases)
    # Normal: 3 x 10.2 kW / 6 = 5,100 W / (239.60 V x 0.95) = 22.41 A.
    assert cases["normal"] == pytest.approx(22.41, abs=0.005)
    # PDU B down: 3 x 2,550 W = 7,650 W / (239.60 V x 0.95) = 33.61 A > 32 A (100 %-rated).
    assert cases["PDU su1-r1-pdu-b down"] == pytest.approx(33.61, abs=0.005)
    assert cases["PDU su1-r1-pdu-c down"] == pytest.approx(33.61, abs=0.005)
    # dgx-001's PSU2 (on PDU B) failed: its 5 others carry 2,040 W; 2,040 + 2 x 1,700 =
    # 5,440 W / (239.60 V x 0.95) = 23.90 A.
    assert cases["dgx-001 PSU2 failed"] == pytest.approx(23.90, abs=0.005)
    assert (line.worst_a, line.worst_case) == (cases["PDU su1-r1-pdu-b down"],
                                               "PDU su1-r1-pdu-b down")
    assert line.limit_a == 32
    # Every PDU of every DGX rack has such a line: the count is 3/3/2 whatever the order.
    per_line = Counter((c.pdu, c.line) for c in plan.power_cords
                       if c.rack == "su1-r1" and c.device.startswith("dgx"))
    assert sorted(per_line.values()) == [2, 2, 2, 3, 3, 3, 3, 3, 3]
    pdu = next(p for p in pdu_loads(plan) if p.pdu == "su1-r1-pdu-a")
    assert (pdu.circuit, pdu.line, round(pdu.worst_a, 2)) == ("CB1", "L1", 33.61)


def test_the_example_at_63a_carries_the_same_line_at_53_percent() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    line = _line(plan, "su1-r1-pdu-a", "CB1", "L1")
    # 33.61 A of a 63 A (100 %-rated) breaker: 53.3 %.
    assert line.worst_a == pytest.approx(33.61, abs=0.005)
    assert line.percent == pytest.approx(53.35, abs=0.01)


def test_dgx_psus_two_per_pdu_and_their_draws() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    cords = [c for c in plan.power_cords if c.device == "dgx-001"]
    assert Counter(c.pdu for c in cords) == {"su1-r1-pdu-a": 2, "su1-r1-pdu-b": 2,
                                             "su1-r1-pdu-c": 2}
    # Normal 10.2 kW / 6 = 1,700 W per PSU; worst: a PDU down, 4 live: 2,550 W.
    assert {(c.allocated_w, c.maximum_w) for c in cords} == {(1700, 2550)}
    assert {c.feed_leg for c in cords} == {"A", "B"} and {c.inlet for c in cords} == {"inlet"}
    assert sum(c.allocated_w for c in cords) == pytest.approx(10200)


def test_ab_layout_with_3_of_6_psus_per_feed_takes_the_dgx_down() -> None:
    """Four DGX on A/B feeds: 3 PSUs per side; with one side down 3 < 4 required, so each DGX
    goes down (an outage), and the lines then carry only the switch."""
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(layout="ab", breaker_a=60,
                                                     rated_100_percent=False)
    plan = compile_data(data)
    down = [o for o in plan.power_outages if o.rack == "su1-r1"]
    assert {(o.device, o.case) for o in down} == {
        (f"dgx-00{k}", f"PDU su1-r1-pdu-{side} down") for k in range(1, 5) for side in "ab"}
    assert {(o.live_psus, o.required, o.psus, o.draw_w) for o in down} == {(3, 4, 6, 10200)}
    # Normal: each side 3 cords x 1,700 W per DGX, 12 cords on 3 lines, and the management
    # switch's 75 W cord on L1: 4 x 1,700 + 75 = 6,875 W / (239.60 x 0.95) = 30.20 A, below
    # 60 A x 80 % = 48 A. With PDU B down the DGX are off: L1 carries the switch, 150 W /
    # (239.60 x 0.95) = 0.66 A.
    line = _line(plan, "su1-r1-pdu-a", "CB1", "L1")
    assert line.normal_a == pytest.approx(30.20, abs=0.005) and line.limit_a == 48
    assert dict(line.cases)["PDU su1-r1-pdu-b down"] == pytest.approx(0.66, abs=0.005)


def test_nvl72_busbar_shelves_share_the_trays() -> None:
    plan = example_build("gb200-nvl72").plan
    shelf = [c for c in plan.power_cords if c.device == "nvl1-ps1"]
    # 18 trays x 5.9 kW + 9 NVLink trays x 2.9 kW... = 131.94 kW on the busbar (the rack's
    # load less its two 150 W switches: 132.24 - 0.3); 8 shelves x 6 PSUs: 2,748.75 W each.
    assert rack_loads_w(plan)["nvl1"] == pytest.approx(132240)
    assert [c.allocated_w for c in shelf] == pytest.approx([131940 / 48] * 6)
    # Feed B down: the 4 A shelves carry it all, 131,940 / 24 = 5,497.5 W per PSU (5.5 kW).
    assert [c.maximum_w for c in shelf] == pytest.approx([5497.5] * 6)
    assert plan.power_outages == ()
    # A shelf's PSU failed: the shelf needs 6 of 6, so it drops and 7 shelves share the
    # busbar: 131,940 / 42 = 3,141.4 W per PSU; a line with 2 cords of a live shelf carries
    # 6,282.9 W / (239.60 V x 0.95) = 27.60 A (normal 2 x 2,748.75 -> 24.15 A).
    line = _line(plan, "nvl1-pdu-a", "CB3", "L1")
    assert line.normal_a == pytest.approx(24.15, abs=0.005)
    assert dict(line.cases)["nvl1-ps2 PSU1 failed"] == pytest.approx(27.60, abs=0.005)
    # Feed B down: 2 x 5,497.5 W -> 48.30 A of 63 A x 80 % = 50.4 A.
    assert line.worst_a == pytest.approx(48.30, abs=0.005) and line.limit_a == 50.4


def test_208v_three_phase_cords_on_line_pairs() -> None:
    """A North American 208 V three-phase PDU is delta: cords sit line-to-line."""
    data = without_lustre(example_data("seed-64gpu-h100"))  # r02: head, two switches, leaf
    data["power"]["pdu_profiles"]["mgmt-208v"].update(phases=3)
    plan = compile_data(data)
    cords = {(c.device, c.psu): (c.outlet, c.line, c.feed_leg) for c in plan.power_cords
             if c.pdu == "r02-pdu-a"}
    # Outlets alternate L1-L2, L2-L3, L3-L1; each cord takes the least loaded pair.
    assert cords == {("slurm-head1", 1): (1, "L1-L2", ""), ("mgmt-r02-1", 1): (2, "L2-L3", ""),
                     ("oob-r02-1", 1): (3, "L3-L1", ""), ("ib-leaf-1", 1): (5, "L2-L3", "")}
    # Normal: head 1,000 / 2 = 500 W on L1-L2; switches 75 W on L2-L3 and L3-L1, the leaf's
    # 320 W on L2-L3. Branch currents at 208 V x 0.95: I_12 = 2.530 A, I_23 = 395 / 197.6 =
    # 1.999 A, I_31 = 0.380 A; I_L2 = |I_23 - I_12| (120 deg apart) = sqrt(2.530^2 + 1.999^2
    # + 2.530 x 1.999) = 3.932 A.
    line = _line(plan, "r02-pdu-a", "CB1", "L2")
    assert line.slots == ("L1-L2", "L2-L3", "L2-L3")
    assert line.normal_a == pytest.approx(3.932, abs=0.0005)
    # Feed B down: every cord on A doubles, so does every current: 7.863 A.
    assert dict(line.cases)["PDU r02-pdu-b down"] == pytest.approx(7.863, abs=0.0005)
    for circuit in (c for c in circuit_loads(plan) if c.rack == "r02"):
        assert circuit.wiring == "delta" and circuit.cord_v == 208


def test_banked_outlets_group_each_line() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"]["outlet_wiring"] = "banked"
    plan = compile_data(data)
    # CB1's bank is outlets 1-14: L1 1-5, L2 6-10, L3 11-14 (14 = 5 + 5 + 4).
    assert _line(plan, "r01-pdu-a", "CB1", "L1").outlets == (1, 2, 3, 4, 5)
    assert _line(plan, "r01-pdu-a", "CB1", "L3").outlets == (11, 12, 13, 14)
    # The lines (and so the currents) do not depend on the outlet wiring.
    assert _line(plan, "r01-pdu-a", "CB1", "L1").normal_a == pytest.approx(16.73, abs=0.005)


def test_feed_lines_sum_their_circuits() -> None:
    plan = example_build("seed-64gpu-h100").plan
    feed = next(f for f in plan.power_feeds if f.pdu == "r01-pdu-a")
    assert (feed.name, feed.panel, feed.inlet) == ("r01-feed-a", "a-panel-a", "inlet")
    # No inlet_a: the feed is sized for its 4 x 32 A circuits and not checked on its own.
    assert (feed.amperage_a, feed.limit_a, feed.checked) == (128, 102.4, False)
    # L1: CB1 3,808.3 W + CB2 3,808.3 + CB3 3,733.3 + CB4 3,733.3 = 15,083.3 W / (239.60 x
    # 0.95) = 66.27 A.
    assert feed.normal_a[0] == pytest.approx(66.27, abs=0.005)
    lines = [x for x in plan.power_lines if x.pdu == "r01-pdu-a" and x.line == "L1"]
    assert sum(x.normal_a for x in lines) == pytest.approx(feed.normal_a[0])


def test_tables_add_up(example: str) -> None:
    plan = example_build(example).plan
    racks = rack_loads_w(plan)
    by_rack: Counter[str] = Counter()
    for pdu in pdu_loads(plan):
        by_rack[pdu.rack] += pdu.load_w  # type: ignore[assignment]
        assert pdu.worst_w >= pdu.load_w - 1e-6 and pdu.worst_a <= pdu.limit_a
    for rack, load in racks.items():
        assert by_rack[rack] == pytest.approx(load)
    assert sum(c.allocated_w for c in plan.power_cords) == pytest.approx(sum(racks.values()))
    for line in plan.power_lines:
        assert line.cases[0] == ("normal", line.normal_a)
        assert line.worst_a == max(amps for _, amps in line.cases)
    outlets = Counter((c.pdu, c.outlet) for c in plan.power_cords)
    assert max(outlets.values()) == 1  # one cord per outlet


def test_ab_splits_every_device_across_feeds(example: str) -> None:
    plan = example_build(example).plan
    layout = {d.name: plan.settings.power.pdu_profiles[d.model].layout
              for d in plan.power_devices if d.kind == "pdu"}
    sides: dict[str, set[str]] = {}
    for cord in plan.power_cords:
        if layout[cord.pdu] == "ab" and not cord.device.endswith(tuple(f"ps{k}" for k in
                                                                      range(1, 9))):
            sides.setdefault(cord.device, set()).add(cord.pdu[-1])
    assert all(s == {"a", "b"} for s in sides.values()), sides


def test_identical_racks_share_one_plan_and_a_new_node_moves_no_node() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    shape = {r: sorted((c.pdu[-1], c.circuit, c.line, c.outlet) for c in plan.power_cords
                       if c.rack == r) for r in ("su1-r1", "su2-r1")}
    assert shape["su1-r1"] == shape["su2-r1"]
    data = example_data("dgx-h100-superpod-4su")
    data["node_groups"][0]["count"] += 1  # dgx-128: the last rack's fourth node
    for network in ("management", "bmc"):  # the example's lock holds each pair in one rack
        data["networks"][network]["aggregation_racks"] = "together"
    grown = compile_data(data)
    before = {(c.device, c.psu): (c.pdu, c.outlet, c.line) for c in plan.power_cords}
    after = {(c.device, c.psu): (c.pdu, c.outlet, c.line) for c in grown.power_cords}
    moved = {k for k in before if after.get(k) != before[k]}
    # The rack's switches are cabled after its nodes (heavy cords choose lines first), so
    # only their cords may move; every node keeps its outlets.
    assert {device for device, _ in moved} <= {"mgmt-su4-r8-1", "oob-su4-r8-1"}
    assert set(after) - set(before) == {("dgx-128", k) for k in range(1, 7)}


def _flow_figures(flow: rack_flow.RackFlow) -> object:
    """Everything a solved rack holds, as plain data (its records' fields)."""
    def fields_of(record: object) -> object:
        return {k: [fields_of(v) for v in value] if k == "lines" else value
                for k, value in vars(record).items()}
    return ([fields_of(c) for c in flow.cords], [fields_of(c) for c in flow.circuits],
            [fields_of(f) for f in flow.feeds], [vars(o) for o in flow.outages],
            flow.outlets_needed)


CONSUMERS = st.lists(st.builds(
    lambda kind, watts, psus, spare: rack_flow.Consumer(kind, watts, psus, watts,
                                                         max(1, psus - spare)),
    st.sampled_from(["node", "switch"]), st.sampled_from([450.0, 1100.0, 2400.0, 10200.0]),
    st.integers(1, 6), st.integers(-1, 3)), min_size=1, max_size=14)
CIRCUITRY = st.builds(
    lambda pdus, circuits, outlets, banked, supply: rack_flow.Circuitry(
        pdus, circuits, outlets, banked, supply[0], supply[1], 0.95),
    st.integers(1, 3), st.integers(1, 3), st.integers(4, 42), st.booleans(),
    st.sampled_from([(415, 3), (208, 3), (230, 1)]))


@settings(max_examples=150, deadline=None)
@given(CONSUMERS, CIRCUITRY)
def test_failed_psu_cases_computed_for_the_changed_circuits_give_every_figure(
        consumers: list[rack_flow.Consumer], circuitry: rack_flow.Circuitry) -> None:
    """solve computes a failed PSU's case only where it changes something (from the second
    such case on): every cord, circuit, line, feed and outage as computing every circuit in
    every case gives them, the same figures and the same first case of each."""
    rack = tuple(consumers)
    quick = power_flow.solve(rack, circuitry, 0.0)
    full = power_flow.solve(rack, circuitry, 0.0, every_case=True)
    assert _flow_figures(quick) == _flow_figures(full)
