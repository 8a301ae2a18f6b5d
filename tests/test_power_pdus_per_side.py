"""Several PDUs a side, through the CLI: four DGX H100 a rack (41 kW) on three 32 A PDUs
overload a line with a PDU down (POWER-REDUNDANCY, whose hint names pdus_per_side); with two
PDUs a side the rack's cords split over six PDUs, each with its own feed and breaker table,
the panel of a side down is a case of its own, every line passes, and the lock keeps the
outlets."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.check_fixtures import cli_on_spec


def _spec(per_side: int | None = None, breaker_a: float = 32) -> dict[str, Any]:
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes", "8"]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    group = data["node_groups"][0]
    group["racks"], group["per_rack"] = "gpu[01-02]", 4
    data["rows"][0]["racks"][0].update(names="gpu[01-02]", cooling="liquid",
                                       liquid_capacity_kw=60, in_rack_cdu=True)
    profile = data["power"]["pdu_profiles"]["gpu-pdu"]
    profile.update(inlet_a=32, breaker_a=breaker_a)
    if per_side is not None:
        profile["pdus_per_side"] = per_side
    return data


def test_one_pdu_a_side_overloads_and_the_hint_names_pdus_per_side(tmp_path: Path) -> None:
    result = cli_on_spec(tmp_path, _spec(), "a.yaml", "validate")
    assert result.exit_code != 0
    out = result.output
    assert ("error[POWER-REDUNDANCY] rack gpu01 PDU gpu01-pdu-a breaker CB1 line L1 carries "
            "33.6 A with PDU gpu01-pdu-b down (or its feed gpu01-feed-b, or panel a-panel-b)"
            in out)
    assert "more PDUs a side (pdus_per_side: 2 splits each side's cords over two PDUs)" in out
    assert "error[POWER-FEED] rack gpu01 feed gpu01-feed-a" in out
    # the hint followed: two PDUs a side
    result = cli_on_spec(tmp_path, _spec(2), "b.yaml", "validate")
    assert result.exit_code == 0, result.output
    assert "error[" not in result.output
    assert not [code for code in ("POWER-REDUNDANCY", "POWER-BREAKER", "POWER-FEED]",
                                  "POWER-PSU-FAILOVER") if code in result.output]


def test_two_pdus_a_side_split_the_cords_and_each_pdu_has_its_tables(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli_on_spec(tmp_path, _spec(2), "c.yaml", "render", "-o", str(out))
    assert result.exit_code == 0, result.output
    with (out / "facility" / "pdus.csv").open() as stream:
        pdus = [row for row in csv.DictReader(stream) if row["rack"] == "gpu01"]
    assert [(p["pdu"], p["side"], p["feed"], p["panel"]) for p in pdus] == [
        (f"gpu01-pdu-{s}{n}", s.upper(), f"gpu01-feed-{s}{n}", f"a-panel-{s}")
        for s in "abc" for n in (1, 2)]
    # 4 nodes x 6 PSUs and the management switch's 2 over 6 PDUs: 4 or 5 cords each, about
    # 41 kW / 6 in normal operation; the worst case is a side's panel down (both its PDUs)
    assert sorted(float(p["load_kw"]) for p in pdus) == [6.8, 6.8, 6.88, 6.88, 6.88, 6.88]
    assert {p["worst_case"] for p in pdus} == {"panel a-panel-a down", "panel a-panel-b down"}
    assert max(float(p["worst_a"]) for p in pdus) == 22.4  # of 25.6 A
    with (out / "facility" / "pdu_breakers.csv").open() as stream:
        lines = [row for row in csv.DictReader(stream) if row["rack"] == "gpu01"]
    assert {row["pdu"] for row in lines} == {p["pdu"] for p in pdus}
    psus = [psu for row in lines for psu in row["psus"].split()]
    assert len(psus) == len(set(psus)) == 4 * 6 + 2 + 2  # and two switches' two PSUs
    # each node's six PSUs: two on each side, one on each of its PDUs
    for node in ("gpu01", "gpu02", "gpu03", "gpu04"):
        on = sorted(row["pdu"] for row in lines for psu in row["psus"].split()
                    if psu.startswith(f"{node}:"))
        assert on == [p["pdu"] for p in pdus], (node, on)
    # the lock keeps every outlet: rendered again, the tree is unchanged
    again = cli_on_spec(tmp_path, _spec(2), "c.yaml", "render", "-o", str(out), "--check")
    assert again.exit_code == 0, again.output
    assert "gpu01-pdu-a2" in (tmp_path / "c.lock").read_text()


def test_each_pdus_lines_are_checked(tmp_path: Path) -> None:
    """Two 20 A PDUs a side carry normal operation (14.9 A of 16 A on the busiest line) but
    not a side's panel down; 16 A ones not even normal operation."""
    result = cli_on_spec(tmp_path, _spec(2, breaker_a=20), "d.yaml", "validate")
    assert result.exit_code != 0
    assert ("error[POWER-REDUNDANCY] rack gpu01 PDU gpu01-pdu-a1 breaker CB1 line L1 carries "
            "22.4 A with panel a-panel-b down (every PDU of its side in the rack), 140% of its "
            "16.0 A limit") in result.output
    assert "POWER-BREAKER" not in result.output
    result = cli_on_spec(tmp_path, _spec(2, breaker_a=16), "e.yaml", "validate")
    assert ("error[POWER-BREAKER] rack gpu01 PDU gpu01-pdu-a1 breaker CB1 line L1 carries "
            "14.9 A in normal operation, 117% of its 12.8 A limit") in result.output
