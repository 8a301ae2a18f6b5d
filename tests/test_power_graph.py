"""Power graph: circuits, PSU split across feeds, failover loads, phases, and the formulas."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from cluster_iac.plan import electrical
from cluster_iac.plan.power import circuit_loads, pdu_loads, rack_loads_w
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data


def _psus(graph, device):  # noqa: ANN001, ANN202 - small test helper
    return [p for p in graph.predecessors(device) if graph.nodes[p]["kind"] == "psu"]


def test_three_phase_and_single_phase_formulas() -> None:
    # 415 V x 32 A x sqrt(3) x 0.95 = 21.85 kW; derated to 80 %: 17.48 kW.
    assert electrical.three_phase_w(415, 32, 0.95) == pytest.approx(21851.55, abs=0.01)
    assert electrical.continuous_limit_w(21851.55, False, 80) == pytest.approx(17481.24, abs=0.01)
    assert electrical.continuous_limit_w(21851.55, True, 80) == pytest.approx(21851.55)
    assert electrical.single_phase_w(208, 32, 0.95) == pytest.approx(6323.2)


def test_phase_currents_wye_delta_and_imbalance() -> None:
    # Balanced wye: I = P / (V_LN x PF) on every line.
    wye = electrical.phase_currents({"L1": 3000, "L2": 3000, "L3": 3000}, 415, 3, 1.0)
    assert wye["L1"] == pytest.approx(3000 / (415 / math.sqrt(3)))
    # Balanced delta: line current = sqrt(3) x branch current; total P = sqrt(3) V_LL I PF.
    delta = electrical.phase_currents({"L1-L2": 2000, "L2-L3": 2000, "L3-L1": 2000}, 208, 3, 1.0)
    assert delta["L1"] == pytest.approx(math.sqrt(3) * 2000 / 208)
    assert electrical.three_phase_w(208, delta["L2"], 1.0) == pytest.approx(6000)
    # One delta branch only: both of its lines carry the branch current, the third none.
    one = electrical.phase_currents({"L1-L2": 2080}, 208, 3, 1.0)
    assert one["L1"] == pytest.approx(10) and one["L2"] == pytest.approx(10)
    assert one["L3"] == pytest.approx(0, abs=1e-9)
    assert electrical.phase_imbalance({"L1": 12, "L2": 10, "L3": 8}) == pytest.approx(0.2)


def test_seed_rack_two_nodes_per_breaker() -> None:
    """The seed guide: breakers A-D of 32 A, two 5.6 kW nodes on each."""
    plan = example_build("seed-64gpu-h100").plan
    r01 = [c for c in circuit_loads(plan) if c.rack == "r01"]
    assert len(r01) == 4
    for circuit in r01:
        nodes = [d for d in circuit.devices if d.startswith("compute")]
        assert len(nodes) == 2
        assert circuit.limit_w == pytest.approx(17481.24, abs=0.01)
        assert 11200 <= circuit.load_w <= circuit.limit_w
        # Six PSU cords per node over L1/L2/L3: the nodes alone load every line equally.
    c3 = next(c for c in r01 if c.name == "CB3")
    assert c3.phase_load_w == pytest.approx({"L1": 11200 / 3, "L2": 11200 / 3, "L3": 11200 / 3})


def test_seed_on_208v_single_phase_exceeds_limit() -> None:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    plan = compile_data(data)
    for circuit in (c for c in circuit_loads(plan) if c.rack == "r01"):
        # 208 V x 32 A x 0.95 x 80 % = 5.06 kW, less than two 5.6 kW nodes.
        assert circuit.limit_w == pytest.approx(5058.56)
        assert circuit.load_w >= 11200 > circuit.limit_w


def test_dgx_three_pdus_two_psus_each_any_two_carry() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    graph = plan.graphs["power"]
    per_pdu = Counter(graph.nodes[p]["pdu"] for p in _psus(graph, "dgx-001"))
    assert sorted(per_pdu.values()) == [2, 2, 2] and len(per_pdu) == 3
    rack = graph.nodes["dgx-001"]["rack"]
    pdus = [p for p in pdu_loads(plan) if p.rack == rack]
    total = rack_loads_w(plan)[rack]
    assert sum(p.load_w for p in pdus) == pytest.approx(total)
    # One PDU down: the other two share the whole rack (DGX: 4 of 6 PSUs carry 10.2 kW).
    for p in pdus:
        others = [q for q in pdus if q.pdu != p.pdu]
        assert p.failover_case in {q.pdu for q in others}
    dgx_psus = _psus(graph, "dgx-001")
    assert max(graph.nodes[p]["failover_w"] for p in dgx_psus) == pytest.approx(10200 / 4)


def test_four_dgx_on_ab_60a_one_feed_cannot_carry_rack() -> None:
    """Issue 4: 4 x 10.2 kW on A/B 415 V 60 A derated: one feed alone gets 40.8 kW."""
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(
        layout="ab", circuits=1, breaker_a=60, rated_100_percent=False)
    plan = compile_data(data)
    dgx_only = sum(10200 for n in plan.nodes if n.rack == "su1-r1")
    pdu = next(p for p in pdu_loads(plan) if p.pdu == "su1-r1-pdu-a")
    assert pdu.failover_w >= dgx_only == 40800
    assert pdu.limit_w == pytest.approx(electrical.three_phase_w(415, 60, 0.95) * 0.8)
    assert pdu.failover_w > pdu.limit_w


def test_ab_splits_every_device_across_feeds(example: str) -> None:
    plan = example_build(example).plan
    graph = plan.graphs["power"]
    for name, data in graph.nodes(data=True):
        if data["kind"] not in ("node", "switch"):
            continue
        psus = _psus(graph, name)
        sides = {graph.nodes[graph.nodes[p]["pdu"]]["side"] for p in psus}
        layout = graph.nodes[graph.nodes[psus[0]]["pdu"]]["layout"] if psus else None
        if layout == "ab" and len(psus) >= 2:
            assert sides == {"A", "B"}, name


def test_pdu_loads_sum_to_rack_loads(example: str) -> None:
    plan = example_build(example).plan
    racks = rack_loads_w(plan)
    by_rack = Counter()  # type: Counter[str]
    for circuit in circuit_loads(plan):
        by_rack[circuit.rack] += circuit.load_w  # type: ignore[assignment]
        assert sum(circuit.phase_load_w.values()) == pytest.approx(circuit.load_w)
        assert circuit.failover_w >= circuit.load_w - 1e-6
    for rack, load in racks.items():
        assert by_rack[rack] == pytest.approx(load)


def test_nvl72_trays_fed_from_shelves_on_both_feeds() -> None:
    plan = example_build("gb200-nvl72").plan
    graph = plan.graphs["power"]
    assert _psus(graph, "gb-001") == []
    assert list(graph.predecessors("gb-001")) == ["nvl1-busbar"]
    shelves = list(graph.predecessors("nvl1-busbar"))
    sides = Counter(graph.nodes[graph.nodes[_psus(graph, s)[0]]["pdu"]]["side"] for s in shelves)
    assert sides == {"A": 4, "B": 4}
    busbar = sum(graph.nodes[t]["max_power_w"] for t in graph.successors("nvl1-busbar"))
    shelf_psus = [p for s in shelves for p in _psus(graph, s)]
    assert sum(graph.nodes[p]["load_w"] for p in shelf_psus) == pytest.approx(busbar)
    # Feed B down: the four A shelves carry the whole busbar, each of their 6 inputs 1/24.
    assert max(graph.nodes[p]["failover_w"] for p in shelf_psus) == pytest.approx(busbar / 24)


def test_circuit_assignment_is_least_loaded_and_deterministic() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    first = [(c.circuit, c.devices, round(c.load_w, 6)) for c in circuit_loads(plan)]
    from cluster_iac.render import build
    from tests.conftest import ROOT

    again = build(ROOT / "examples" / "dgx-h100-superpod-4su.yaml", emit=False).plan
    assert first == [(c.circuit, c.devices, round(c.load_w, 6)) for c in circuit_loads(again)]


def test_208v_three_phase_cords_on_line_pairs() -> None:
    """A North American 208 V three-phase PDU is delta: cords sit line-to-line."""
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["mgmt-208v"].update(phases=3)
    plan = compile_data(data)
    graph = plan.graphs["power"]
    slots = {d["slot"] for _, d in graph.nodes(data=True)
             if d["kind"] == "outlet" and d["rack"] == "r02"}
    assert slots <= set(electrical.LINE_PAIRS) and len(slots) > 1
    for circuit in (c for c in circuit_loads(plan) if c.rack == "r02"):
        assert set(circuit.phase_current_a) == {"L1", "L2", "L3"}
        # Real power from the line currents never exceeds sqrt(3) x V x I_max x PF.
        i_max = max(circuit.phase_current_a.values())
        assert circuit.load_w <= electrical.three_phase_w(208, i_max, 0.95) + 1e-6


def test_psu_loads_per_device() -> None:
    from cluster_iac.plan.power import psu_loads

    plan = example_build("dgx-h100-superpod-4su").plan
    dgx = psu_loads(plan)["dgx-001"]
    assert [p.psu for p in dgx] == [f"PSU{i}" for i in range(1, 7)]
    assert sum(p.load_w for p in dgx) == pytest.approx(10200)
    assert [p.failover_w for p in dgx] == pytest.approx([2550] * 6)  # 4 of 6 carry 10.2 kW
    assert all(p.failover_w <= p.rating_w for p in dgx)
