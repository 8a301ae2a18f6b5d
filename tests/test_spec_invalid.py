"""Invalid specs as data: each file's header names the errors (code line:col) and the hint.

spec/*.yaml are the classic mistakes; spec/strings, spec/loading, spec/limits and spec/cross
are the hostile and careless inputs of issue 15 (the string vocabulary, bounded loading, the
documented limits and the cross-field checks); spec/input and spec/verdicts are issue 29's
input defects and wrong verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.console import printable
from cluster_iac.cli.main import main
from cluster_iac.load.limits import MAX_LINE_CHARS

SPEC = Path(__file__).parent / "data" / "invalid" / "spec"
CASES = sorted(SPEC.rglob("*.yaml"))
HEAD = re.compile(r"^(?P<file>\S+?):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[A-Z0-9-]+)\] ")


def _expected(case: Path) -> tuple[list[tuple[str, int, int]], str]:
    """'# expect: CODE L:C, CODE L:C' and '# hint: text' (empty: no hint asserted)."""
    header = case.read_bytes().decode("ascii", errors="replace").splitlines()[:2]
    expect = re.fullmatch(r"# expect: (.+)", header[0])
    hint = re.fullmatch(r"# hint:\s*(.*)", header[1])
    assert expect and hint, f"{case.name}: header must be '# expect: ...' then '# hint: ...'"
    errors = []
    for item in expect.group(1).split(","):
        code, position = item.split()
        line, column = position.split(":")
        errors.append((code, int(line), int(column)))
    return errors, hint.group(1).strip()


def _reported(output: str) -> list[tuple[str, int, int, int]]:
    """(code, line, column, index of the diagnostic's first output line) per error."""
    lines = output.splitlines()
    found = []
    for index, text in enumerate(lines):
        match = HEAD.match(text)
        if match:
            found.append((match["code"], int(match["line"]), int(match["col"]), index))
    return found


def _id(case: Path) -> str:
    return str(case.relative_to(SPEC).with_suffix(""))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_invalid_spec_reports_exactly_the_expected_errors(case: Path, tmp_path: Path) -> None:
    expected, hint = _expected(case)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(case), "-o", str(out)])
    assert result.exit_code == 1, result.output
    reported = _reported(result.output)
    assert sorted((c, ln, col) for c, ln, col, _ in reported) == sorted(expected), result.output
    if hint:
        assert f"= hint: {hint}" in result.output
    assert f"{case}: {len(expected)} error(s); nothing written" in result.output
    assert not out.exists()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_invalid_spec_shows_the_source_line_and_a_caret(case: Path) -> None:
    """The line as the file has it (a control character shown as its escape, so that the
    terminal runs nothing) and the caret under the column."""
    result = CliRunner().invoke(main, ["validate", str(case)])
    lines = result.output.splitlines()
    source = case.read_bytes().decode("utf-8", errors="replace").split("\n")
    for _code, line, column, index in _reported(result.output):
        text = source[line - 1]
        if len(text) > MAX_LINE_CHARS:  # a line too long to quote is cut
            text = text[:200] + " ..."
        assert lines[index + 1] == f"{line:>5} | {printable(text, keep_tabs=True)}"
        assert lines[index + 2] == f"{'':5} | {' ' * len(printable(text[:column - 1]))}^"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", result.output)


def test_every_case_is_checked() -> None:
    """The issue's must-show cases are among the data files (so deleting one fails a test)."""
    names = {p.stem for p in CASES}
    assert {"misspelt_top_key", "misspelt_nested_key", "wrong_type", "unknown_node_type",
            "yaml_unclosed_flow", "yaml_duplicate_key", "all_errors_at_once"} <= names
    # issue 29's input defects
    assert {"mapping_key_nested", "lnet_interfaces_unknown_type", "lnet_interfaces_not_lustre",
            "coolant_same_temperature", "mds_group_gpu_nodes"} <= names
    # and four of its five wrong verdicts (the Lustre bound's: tests/test_lustre_servers.py)
    assert {"raid_chunk_not_power_of_two", "health_tool_timeout_past_slurmd_kill",
            "dbd_port_is_mariadb_port", "liquid_rack_on_no_loop"} <= names
