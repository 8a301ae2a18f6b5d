"""Issue 40: both switches of a management aggregation pair in one rack, through the CLI.

A new design puts a pair's two switches in two racks (networks.<net>.aggregation_racks:
apart, the default); 'together', or a lock that holds an older design's pair in one rack, is
the located warning SPOF-MGMT-AGG-RACK whose hint moves it. A lock never lets the default
move hardware it places."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.check_fixtures import validate_spec

ROOT = Path(__file__).resolve().parent.parent


def _init() -> dict[str, Any]:
    """8 DGX H100 from `init`: racks gpu[01-03], svc1 and net1 (one network rack)."""
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes", "8"]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    return data


def _places(lock: Path) -> dict[str, str]:
    """Device -> rack, from the lock's place lines."""
    return {words[1]: words[2] for words in (line.split() for line in lock.read_text()
                                              .splitlines()) if words[:1] == ["place"]}


def test_a_new_design_splits_each_pair_and_together_warns(tmp_path: Path) -> None:
    data = _init()
    out = validate_spec(tmp_path, data, "a.yaml")
    assert "SPOF-MGMT-AGG-RACK" not in out
    result = CliRunner().invoke(main, ["render", str(tmp_path / "a.yaml"), "-o",
                                       str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    places = _places(tmp_path / "a.lock")
    # the one network rack takes the first switch, the service rack the second
    assert (places["mgmt-agg1-1"], places["mgmt-agg1-2"]) == ("net1", "svc1")
    assert (places["oob-agg1-1"], places["oob-agg1-2"]) == ("net1", "svc1")
    data["networks"]["management"]["aggregation_racks"] = "together"
    out = validate_spec(tmp_path, data, "b.yaml")
    assert ("b.yaml:" in out and "warning[SPOF-MGMT-AGG-RACK] management aggregation pair "
            "mgmt-agg1-1 and mgmt-agg1-2 are both in rack net1: its 4 downlink switch(es) each "
            "uplink to both") in out
    assert "hint: networks.management.aggregation_racks: apart (the default) puts" in out
    assert "oob-agg1" not in out  # the BMC network keeps the default


def test_two_network_racks_take_the_pair(tmp_path: Path) -> None:
    data = _init()
    data["rows"][0]["racks"][2]["names"] = "net[1-2]"
    validate_spec(tmp_path, data, "a.yaml")
    result = CliRunner().invoke(main, ["render", str(tmp_path / "a.yaml"), "-o",
                                       str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    places = _places(tmp_path / "a.lock")
    assert (places["mgmt-agg1-1"], places["mgmt-agg1-2"]) == ("net1", "net2")


def test_a_locked_pair_stays_and_the_hint_moves_it(tmp_path: Path) -> None:
    for suffix in ("yaml", "lock"):
        shutil.copy(ROOT / "examples" / f"seed-64gpu-h100.{suffix}", tmp_path)
    spec, lock = tmp_path / "seed-64gpu-h100.yaml", tmp_path / "seed-64gpu-h100.lock"
    before = lock.read_text()
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    assert ("warning[SPOF-MGMT-AGG-RACK] management aggregation pair mgmt-agg1-1 and "
            "mgmt-agg1-2 are both in rack r02") in result.output
    hint = ("the lock places mgmt-agg1-2 there: 'render --reallocate mgmt-agg1-2' lets "
            "networks.management.aggregation_racks: apart move it to another rack")
    assert hint in result.output
    # rendering as it is moves nothing the lock places
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert lock.read_text() == before
    # the hint's fix: the second switch goes to the storage rack, the rest stays
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "b"),
                                       "--reallocate", "mgmt-agg1-2"])
    assert result.exit_code == 0, result.output
    places = _places(lock)
    assert places["mgmt-agg1-2"] == "s01" and places["mgmt-agg1-1"] == "r02"
    changed = [line for line in set(lock.read_text().splitlines()) ^ set(before.splitlines())
               if "mgmt-agg1-2" not in line and not line.startswith("# end:")]
    assert changed == [], changed
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert "mgmt-agg1-1 and mgmt-agg1-2" not in result.output
