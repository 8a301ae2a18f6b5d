"""Feeds assumed rather than given, through the CLI: a PDU profile without inlet_a is a
located warning (POWER-FEED-ASSUMED) naming the assumed rating, the worst line current and the
inlet that carries it; its hint (declare inlet_a) clears it and lets POWER-FEED check the
feed; the policy raises or lowers it; report.md says which feeds are assumed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.check_fixtures import validate_spec


def _spec() -> dict[str, Any]:
    """Four DGX H100 as `init` writes them: three 32 A PDUs per GPU rack, no inlet_a."""
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes", "4"]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    return data


def _hinted(out: str, profile: str) -> float:
    found = re.search(rf"power\.pdu_profiles\.{profile}\.inlet_a: (\d+)", out)
    assert found, out
    return float(found.group(1))


def test_an_assumed_feed_is_a_located_warning_and_its_hint_clears_it(tmp_path: Path) -> None:
    data = _spec()
    out = validate_spec(tmp_path, data, "a.yaml")
    assert re.search(r"a\.yaml:\d+:\d+: warning\[POWER-FEED-ASSUMED\] PDU profile gpu-pdu "
                     r"states no inlet_a, so its 6 feed\(s\) are assumed rated 32 A \(breaker_a "
                     r"32 A x 1 circuit\(s\)\) and not checked; the worst case is 23\.1 A per "
                     r"phase, rack gpu01 feed gpu01-feed-a line L1 with PDU gpu01-pdu-b down",
                     out), out
    assert "which needs an inlet of at least 29 A (23.1 A / 80 %)" in out
    # the hint, followed for every profile: the feeds are given, and POWER-FEED checks them
    for profile in ("gpu-pdu", "svc-pdu", "net-pdu"):
        data["power"]["pdu_profiles"][profile]["inlet_a"] = _hinted(out, profile)
    out = validate_spec(tmp_path, data, "b.yaml")
    assert "POWER-FEED" not in out, out
    # a given feed too small for the worst case is POWER-FEED's error, as before
    data["power"]["pdu_profiles"]["gpu-pdu"]["inlet_a"] = 28
    path = tmp_path / "c.yaml"
    with path.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert "error[POWER-FEED]" in result.output and "carries 23.1 A" in result.output


def test_the_policy_raises_or_lowers_it(tmp_path: Path) -> None:
    data = _spec()
    data["policy"] = {"levels": {"POWER-FEED-ASSUMED": "error"}}
    path = tmp_path / "a.yaml"
    with path.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert "error[POWER-FEED-ASSUMED] PDU profile gpu-pdu" in result.output
    data["policy"] = {"levels": {"POWER-FEED-ASSUMED": "info"}}
    out = validate_spec(tmp_path, data, "b.yaml")
    assert "warning[POWER-FEED-ASSUMED]" not in out
    assert "info[POWER-FEED-ASSUMED]" in out


def test_the_report_names_the_assumed_feeds(tmp_path: Path) -> None:
    data = _spec()
    data["power"]["pdu_profiles"]["net-pdu"]["inlet_a"] = 32
    path = tmp_path / "a.yaml"
    with path.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, ["render", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "report.md").read_text()
    assert ("Feeds assumed, not given (no inlet_a: rated breaker_a x circuits and not checked, "
            "POWER-FEED-ASSUMED): gpu-pdu (6 feed(s) of 32 A assumed, worst 23.1 A per phase); "
            "svc-pdu (2 feed(s) of 32 A assumed, worst 4.4 A per phase). Feeds given (inlet_a, "
            "checked): net-pdu (2).") in report
