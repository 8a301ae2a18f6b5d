"""Under-provisioned specs as data files: each names the code and the spec path it must hit,
and the finding must point at the YAML line of that key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster_iac.render import PipelineError, build

CASES = sorted((Path(__file__).parent / "data" / "invalid" / "checks").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_under_provisioned_spec_is_rejected_at_its_line(case: Path) -> None:
    match = re.match(r"# expect: (\S+) (\S+)(.*)", case.read_text())
    assert match is not None, "first line must be '# expect: CODE dotted.path [key=value ...]'"
    code, dotted, rest = match.groups()
    path = tuple(int(p) if p.isdigit() else p for p in dotted.split("."))
    with pytest.raises(PipelineError) as info:
        build(case, emit=False)
    found = [d for d in info.value.diagnostics if (d.code, d.path) == (code, path)]
    assert found and found[0].is_error
    # Optional figures the finding must state (e.g. measured=33.6 limit=32.0: the line's amps).
    for key, value in re.findall(r"(\w+)=(\S+)", rest):
        assert found[0].details[key] == pytest.approx(float(value)), key
    source = info.value.source
    assert source is not None
    line = source.source_line(source.locate(path).line) or ""
    assert str(path[-1]) in line


def test_cases_exist() -> None:
    assert len(CASES) >= 4


def test_every_check_code_has_a_test_that_trips_it() -> None:
    """Each code a check module can yield appears in a test of the validator."""
    import cluster_iac.checks as checks

    package = Path(checks.__file__).parent
    codes = {code for module in package.glob("*.py")
             for code in re.findall(r'"((?:POWER|COOLING|FABRIC|STORAGE|CONSISTENCY|FACILITY'
                                    r'|GOODPUT|COST)-[A-Z-]+)"', module.read_text())}
    tests = Path(__file__).parent
    text = "".join(p.read_text() for p in tests.glob("test_*.py") if p.name != Path(__file__).name)
    text += "".join(p.read_bytes().decode("utf-8", "replace")
                    for p in (tests / "data" / "invalid").rglob("*.yaml"))
    assert len(codes) >= 25
    assert sorted(c for c in codes if c not in text) == []
