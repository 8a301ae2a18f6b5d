"""The seed guide as written is rejected with one located finding per fault; the corrected
seed example passes with the guide's Lustre (1 MDS, 4 OSS) and its 60 kW facility."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster_iac.render import PipelineError, build
from tests.conftest import example_build

CASE = Path(__file__).parent / "data" / "invalid" / "seed" / "seed_as_written.yaml"


def _expected(prefix: str) -> list[tuple[str, tuple[str | int, ...]]]:
    found = re.findall(rf"^# {prefix}: (\S+) (\S+)", CASE.read_text(), re.MULTILINE)
    return [(code, tuple(int(p) if p.isdigit() else p for p in dotted.split(".")))
            for code, dotted in found]


def test_each_fault_of_the_guide_is_one_finding_at_its_line() -> None:
    expected = _expected("expect")
    assert len(expected) == 6  # PSUs, breakers, facility, Lustre claim, read need, DLC loop
    with pytest.raises(PipelineError) as info:
        build(CASE, emit=False)
    errors = [(d.code, d.path) for d in info.value.diagnostics if d.is_error]
    tolerated = set(_expected("also"))
    assert sorted(e for e in errors if e not in tolerated) == sorted(expected)
    source = info.value.source
    assert source is not None
    for _code, path in expected:
        line = source.source_line(source.locate(path).line) or ""
        assert str(path[-1]) in line, (path, line)


def test_the_corrected_seed_passes_with_the_guides_lustre_and_60_kw() -> None:
    built = example_build("seed-64gpu-h100")
    assert [f for f in built.plan.findings if f.is_error] == []
    settings = built.plan.settings
    assert settings.power.facility_capacity_kw == 60
    roles = [n.role for n in built.plan.nodes]
    assert roles.count("lustre_mds") == 1 and roles.count("lustre_oss") == 4
