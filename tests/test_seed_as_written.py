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
    assert sorted(errors) == sorted(expected)
    messages = {d.code: d.message for d in info.value.diagnostics if d.is_error}
    # The figures of each fault: 2 x 5.6 kW per 230 V line, the PSU overload, 52.7 kW IT x
    # 1.3 PUE, the one HDR HCA of each of 4 OSS that LNet is given (the guide names no LNet
    # interfaces, so each OSS's second HCA carries no Lustre: 4 x 25 GB/s, below the HBAs'
    # 4 x 31.5), 100 GB/s over 64 GPUs, 60 L/min at 5 K = 20.7 kW.
    assert "carries 51.9 A in normal operation" in messages["POWER-BREAKER"]
    assert "280% of their 2 kW rating" in messages["POWER-PSU-REDUNDANCY"]
    assert "52.7 kW IT load x PUE 1.3 = 68.6 kW" in messages["POWER-FACILITY"]
    assert ("100.0 GB/s (limited by the server NICs: drives 126.0, RAID engine (software, "
            "8 core(s) per server) not a limit, server NICs 100.0"
            in messages["STORAGE-BANDWIDTH-CLAIM"])
    assert "1.562 GB/s per GPU, 16% of the workload's 10 GB/s" in messages["STORAGE-READ"]
    assert ("must carry 45.0 kW from r01, but 60 L/min of water x 991.2 kg/m3 x 4.179 kJ/(kg K)"
            " x 5 K = 20.7 kW") in messages["COOLING-LOOP-FLOW"]
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
