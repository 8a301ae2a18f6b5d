"""PDU breaker tables: one row per circuit line with its cords and currents, each PDU's worst
case, and totals equal to the plan's."""

from __future__ import annotations

import csv
import io

import pytest

from cluster_iac.emit import facility
from cluster_iac.plan.power import pdu_loads, rack_loads_w
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data, without_lustre


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_circuit_line(example: str) -> None:
    b = example_build(example)
    rows = _rows(b.files["facility/pdu_breakers.csv"])
    lines = b.plan.power_lines
    assert [(r["pdu"], r["breaker"], r["line"]) for r in rows] == [
        (x.pdu, x.circuit, x.line) for x in lines]
    for row, line in zip(rows, lines, strict=True):
        assert row["devices"].split() == list(line.devices)
        assert [int(o.split(":")[0]) for o in row["outlets"].split()] == list(line.outlets)
        assert float(row["worst_a"]) == pytest.approx(line.worst_a, abs=0.05)
    # Every cord is on exactly one row (wye and single phase) or two (a delta line pair): the
    # rows of its line(s), with its PSU at its outlet's place.
    shown: dict[tuple[str, str, str], set[str]] = {}
    for r in rows:
        outlets = [o.split(":")[0] for o in r["outlets"].split()]
        assert len(outlets) == len(r["psus"].split())
        for outlet, psu in zip(outlets, r["psus"].split(), strict=True):
            shown.setdefault((r["pdu"], outlet, psu), set()).add(r["line"])
    cords = {(c.pdu, str(c.outlet), f"{c.device}:PSU{c.psu}"): set(c.line.split("-"))
             for c in b.plan.power_cords}
    assert shown == cords


def test_pdu_rows_sum_to_rack_row_and_facility_totals(example: str) -> None:
    b = example_build(example)
    pdus = _rows(b.files["facility/pdus.csv"])
    totals = {(t["scope"], t["name"]): t for t in _rows(b.files["facility/power_totals.csv"])}
    racks = rack_loads_w(b.plan)
    for rack, load_w in racks.items():
        pdus_kw = sum(float(r["load_kw"]) for r in pdus if r["rack"] == rack)
        # Each PDU row is rounded to 10 W; the sum stays within that per row.
        assert pdus_kw == pytest.approx(load_w / 1000, abs=0.01 * len(pdus))
        assert float(totals[("rack", rack)]["load_kw"]) == pytest.approx(load_w / 1000, abs=0.0051)
    for row in b.plan.rows:
        expected = sum(racks[r] for r in row.racks) / 1000
        assert float(totals[("row", row.name)]["load_kw"]) == pytest.approx(expected, abs=0.0051)
    facility = totals[("facility", b.plan.cluster.name)]
    assert float(facility["load_kw"]) == pytest.approx(sum(racks.values()) / 1000, abs=0.0051)
    pue = b.plan.settings.power.pue
    assert float(facility["facility_kw"]) == pytest.approx(sum(racks.values()) * pue / 1000,
                                                           abs=0.0051)


def test_seed_table_shows_each_line() -> None:
    b = example_build("seed-64gpu-h100")
    rows = [r for r in _rows(b.files["facility/pdu_breakers.csv"]) if r["rack"] == "r01"]
    assert [(r["breaker"], r["line"]) for r in rows][:4] == [
        ("CB1", "L1"), ("CB1", "L2"), ("CB1", "L3"), ("CB2", "L1")]
    cb4_l3 = rows[11]
    assert cb4_l3["devices"] == "compute04 compute08"
    assert cb4_l3["outlets"] == "44 47 50 53"  # CB4's bank 42-54: L3 every third from 44
    assert (cb4_l3["wiring"], cb4_l3["voltage_v"], cb4_l3["cord_v"]) == ("wye", "415", "239.6")
    # 4 cords x 933.3 W = 3,733.3 W / (239.6 V x 0.95) = 16.4 A; a PSU of compute04 failed
    # on another line: 2 x 1,120 + 2 x 933.3 = 4,106.7 W -> 18.0 A, 70.5 % of 25.6 A.
    assert (cb4_l3["breaker_a"], cb4_l3["continuous_pct"], cb4_l3["limit_a"]) == (
        "32", "80", "25.6")
    assert (cb4_l3["normal_a"], cb4_l3["worst_a"], cb4_l3["worst_pct"]) == ("16.4", "18.0",
                                                                          "70.5")
    assert cb4_l3["worst_case"] == "compute04 PSU1 failed"


def test_pdu_worst_case_rows_match_the_plan() -> None:
    b = example_build("dgx-h100-superpod-4su")
    rows = {r["pdu"]: r for r in _rows(b.files["facility/pdus.csv"])}
    for p in pdu_loads(b.plan):
        row = rows[p.pdu]
        assert (row["worst_breaker"], row["worst_line"], row["worst_case"]) == (
            p.circuit, p.line, p.worst_case)
        assert float(row["worst_a"]) == pytest.approx(p.worst_a, abs=0.05)
    # su1-r1's PDU A: 3 DGX cords on L1; PDU B down: 7.65 kW / (239.6 V x 0.95) = 33.6 A of
    # 63 A (100 %-rated): 53.3 %. Its kW: 8 x 1.7 + 2 x 0.075 (switch cords) = 13.75 normal;
    # PDU B down: 8 x 2.55 + the management switch's 0.15 + the OOB switch's 0.075 = 20.625,
    # printed 20.62 (of 415 V x 63 A x sqrt 3 x 0.95 = 43.02 kW).
    a = rows["su1-r1-pdu-a"]
    assert (a["worst_a"], a["limit_a"], a["worst_pct"]) == ("33.6", "63.0", "53.3")
    assert (a["load_kw"], a["worst_kw"], a["worst_kw_case"]) == (
        "13.75", "20.62", "PDU su1-r1-pdu-b down")
    line = next(r for r in _rows(b.files["facility/pdu_breakers.csv"])
                if (r["pdu"], r["breaker"], r["line"]) == ("su1-r1-pdu-a", "CB1", "L1"))
    assert (line["psus"], line["normal_a"], line["worst_a"], line["worst_case"]) == (
        "dgx-001:PSU1 dgx-002:PSU4 dgx-004:PSU1", "22.4", "33.6", "PDU su1-r1-pdu-b down")


def _page_table(md: str, heading: str) -> list[list[str]]:
    """The cells of the first table under ``## heading`` in pdu_breakers.md."""
    section = md.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def _line_key(row: dict[str, str]) -> tuple[str, ...]:
    return (row["rack"], row["pdu"], row["breaker"], row["line"], row["worst_pct"])


def test_page_lists_every_line_over_its_limit_and_the_tightest_others() -> None:
    """Issue 10's four DGX per rack on 32 A 100 %-rated breakers: 186 lines carry 33.6 A with
    a PDU down, 105 % of 32 A (tests/test_checks_power.py). pdu_breakers.md lists all of them
    and the TIGHTEST lines nearest their limit after them, counts the lines per band, and
    leaves each rack's total and every other line to the CSV files."""
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(breaker_a=32, rated_100_percent=True)
    files = facility.render(compile_data(data))
    rows = _rows(files["facility/pdu_breakers.csv"])
    md = files["facility/pdu_breakers.md"]
    over = [r for r in rows if float(r["worst_a"]) > float(r["limit_a"])]
    assert len(over) == 186
    listed = _page_table(md, "Tightest lines")
    assert len(listed) == 186 + facility.TIGHTEST
    assert [(r[0], r[1], r[2], r[3], r[10]) for r in listed] == [
        _line_key(r) for r in sorted(rows, key=lambda r: -float(r["worst_pct"]))[:len(listed)]]
    assert [r[11] for r in listed] == ["over"] * 186 + ["ok"] * facility.TIGHTEST
    # each listed line with its current in every single failure (the CSV has the worst)
    assert ("| su1-r1 | su1-r1-pdu-a | CB1 | L1 | 1 4 7 | dgx-001:PSU1 dgx-002:PSU4 dgx-004:PSU1 "
            "| 22.4 | PDU su1-r1-pdu-b down 33.6; PDU su1-r1-pdu-c down 33.6; dgx-001 PSU2 failed "
            "23.9 | 33.6 | 32.0 | 105.0 | over |") in md
    assert "186 of 396 lines go over their limit" in md
    bands = dict(_page_table(md, "Line loading"))
    assert bands["over 100 %"] == "186" and sum(map(int, bands.values())) == len(rows) == 396
    assert not any(r[0] == "rack" for r in _page_table(md, "Totals"))
    assert len(_page_table(md, "Racks nearest their limit")) == facility.TIGHTEST


def test_small_page_lists_every_line() -> None:
    """Fewer lines than TIGHTEST: the page lists them all, the tightest first."""
    files = example_build("minimal").files
    rows = _rows(files["facility/pdu_breakers.csv"])
    assert len(rows) < facility.TIGHTEST
    listed = _page_table(files["facility/pdu_breakers.md"], "Tightest lines")
    assert sorted((r[0], r[1], r[2], r[3], r[10]) for r in listed) == sorted(map(_line_key, rows))
    assert float(listed[0][10]) == max(float(r["worst_pct"]) for r in rows)


def test_delta_outlets_name_their_line_pair() -> None:
    data = without_lustre(example_data("seed-64gpu-h100"))  # r02: head, two switches, leaf
    data["power"]["pdu_profiles"]["mgmt-208v"].update(phases=3)
    files = facility.render(compile_data(data))
    rows = [r for r in _rows(files["facility/pdu_breakers.csv"]) if r["pdu"] == "r02-pdu-a"]
    # L2 draws through L1-L2 (outlet 1) and L2-L3 (outlets 2, 5).
    assert [(r["line"], r["outlets"]) for r in rows] == [
        ("L1", "1:L1-L2 3:L3-L1"), ("L2", "1:L1-L2 2:L2-L3 5:L2-L3"),
        ("L3", "2:L2-L3 3:L3-L1 5:L2-L3")]
    assert rows[1]["wiring"] == "delta" and rows[1]["normal_a"] == "3.9"


def test_rack_whose_pdus_feed_nothing_has_idle_lines() -> None:
    """The NVL72 example without its networks and fabric leaves rack net1 with PDUs and no
    device: its lines are in the table, idle (the fuzzer found this a KeyError in facility)."""
    data = example_data("gb200-nvl72")
    data.pop("networks", None)
    data.pop("fabric", None)
    data["slurm"]["multi_node_nvlink"] = False  # IMEX needs the management network's addresses
    files = facility.render(compile_data(data))
    rows = [r for r in _rows(files["facility/pdu_breakers.csv"]) if r["rack"] == "net1"]
    assert rows and all(r["devices"] == "" and r["psus"] == "" for r in rows)
    assert {r["normal_a"] for r in rows} == {"0.0"}
