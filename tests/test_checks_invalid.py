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
    match = re.match(r"# expect: (\S+) (\S+)", case.read_text())
    assert match is not None, "first line must be '# expect: CODE dotted.path'"
    code, dotted = match.groups()
    path = tuple(int(p) if p.isdigit() else p for p in dotted.split("."))
    with pytest.raises(PipelineError) as info:
        build(case, emit=False)
    found = [d for d in info.value.diagnostics if (d.code, d.path) == (code, path)]
    assert found and found[0].is_error
    source = info.value.source
    assert source is not None
    line = source.source_line(source.locate(path).line) or ""
    assert str(path[-1]) in line


def test_cases_exist() -> None:
    assert len(CASES) >= 4
