"""PDU breaker tables: one row per breaker, totals equal to the power graph's."""

from __future__ import annotations

import csv
import io

import pytest

from cluster_iac.plan.power import circuit_loads, pdu_loads, rack_loads_w
from tests.conftest import example_build


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_breaker(example: str) -> None:
    b = example_build(example)
    rows = _rows(b.files["facility/pdu_breakers.csv"])
    circuits = circuit_loads(b.plan)
    assert [(r["pdu"], r["breaker"]) for r in rows] == [(c.pdu, c.name) for c in circuits]
    for row, circuit in zip(rows, circuits, strict=True):
        assert row["devices"].split() == list(circuit.devices)
        assert len(row["outlets"].split()) == len(circuit.outlets)


def test_breaker_loads_sum_to_rack_row_and_facility_totals(example: str) -> None:
    b = example_build(example)
    rows = _rows(b.files["facility/pdu_breakers.csv"])
    totals = {(t["scope"], t["name"]): t for t in _rows(b.files["facility/power_totals.csv"])}
    racks = rack_loads_w(b.plan)
    for rack, load_w in racks.items():
        breakers_kw = sum(float(r["load_kw"]) for r in rows if r["rack"] == rack)
        # Each breaker row is rounded to 10 W; the sum stays within that per row.
        assert breakers_kw == pytest.approx(load_w / 1000, abs=0.01 * len(rows))
        assert float(totals[("rack", rack)]["load_kw"]) == pytest.approx(load_w / 1000, abs=0.0051)
    for row in b.plan.rows:
        expected = sum(racks[r] for r in row.racks) / 1000
        assert float(totals[("row", row.name)]["load_kw"]) == pytest.approx(expected, abs=0.0051)
    facility = totals[("facility", b.plan.cluster.name)]
    assert float(facility["load_kw"]) == pytest.approx(sum(racks.values()) / 1000, abs=0.0051)
    pue = b.plan.settings.power.pue
    assert float(facility["facility_kw"]) == pytest.approx(sum(racks.values()) * pue / 1000,
                                                           abs=0.0051)


def test_seed_table_shows_breaker_numbers() -> None:
    b = example_build("seed-64gpu-h100")
    rows = [r for r in _rows(b.files["facility/pdu_breakers.csv"]) if r["rack"] == "r01"]
    assert [r["breaker"] for r in rows] == ["CB1", "CB2", "CB3", "CB4"]
    cb4 = rows[3]
    assert cb4["devices"] == "compute04 compute08"
    assert cb4["phase"] == "3-phase wye" and cb4["breaker_a"] == "32"
    assert cb4["limit_kw"] == "17.48" and cb4["load_kw"] == "11.20"
    assert cb4["load_pct"] == f"{100 * 11200 / 17481.24:.1f}"
    assert cb4["failover_case"] == "-"  # layout single: no partner feed


def test_failover_columns_match_pdu_loads() -> None:
    b = example_build("dgx-h100-superpod-4su")
    rows = _rows(b.files["facility/pdu_breakers.csv"])
    pdus = {p.pdu: p for p in pdu_loads(b.plan)}
    for pdu, load in pdus.items():
        failover_kw = sum(float(r["failover_kw"]) for r in rows if r["pdu"] == pdu)
        assert failover_kw >= load.failover_w / 1000 - 0.01
    md = b.files["facility/pdu_breakers.md"]
    assert "## Rack su1-r1 (row su1)" in md and "| su1-r1-pdu-c | C | three |" in md
