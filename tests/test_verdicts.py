"""Issue 29's wrong verdicts, at their boundaries: each rule refuses what it must and passes
what it must (tests/data/invalid/spec/verdicts has each refusal as the CLI prints it)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster_iac.base.errors import CompileError
from tests.check_fixtures import findings_of
from tests.facility_fixtures import compile_data, example_data


def _codes(data: dict[str, Any], code: str) -> list[tuple[str, tuple[object, ...]]]:
    return [(f.message, f.path) for f in findings_of(data, code)]


@pytest.mark.parametrize(("raid", "drives", "chunk", "refused"), [
    ("raid6", 10, 3, True),      # the case: stride 0
    ("raid6", 10, 96, True),     # a multiple of 4 KiB, not a power of two
    ("raid6", 10, 2, True),      # a power of two below the 4 KiB page
    ("raid6", 10, 128, False),
    ("raid10", 4, 12, True),
    ("raid10", 4, 4, False),
    ("raid0", 2, 12, False),     # RAID 0 takes any multiple of 4 KiB
    ("raid0", 2, 6, True),
    ("raid1", 2, 3, False),      # a mirror has no chunk: the value is not used
])
def test_raid_chunk(raid: str, drives: int, chunk: int, refused: bool) -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["mdt"] = {"drive": "kioxia-cm6-r-3tb", "drives": drives,
                                        "raid": raid, "chunk_kib": chunk}
    if not refused:
        compile_data(data)
        return
    with pytest.raises(CompileError) as raised:
        compile_data(data)
    [found] = raised.value.diagnostics
    assert found.code == "LUSTRE-RAID-CHUNK"
    assert found.path == ("storage", "lustre", "mdt", "chunk_kib")
    assert f"chunk_kib {chunk} is not" in found.message
    assert f"would be {chunk // 4}" in found.message


@pytest.mark.parametrize(("example", "timeout", "refused"), [
    ("seed-64gpu-h100", "59s", False),   # one nvidia-smi call: 59 s ends before the kill
    ("seed-64gpu-h100", "60s", True),
    ("seed-64gpu-h100", "2m", True),
    ("hgx-h200", "29s", False),          # MIG: two nvidia-smi calls, 58 s
    ("hgx-h200", "30s", True),           # 2 x 30 s = 60 s
])
def test_health_tool_timeout(example: str, timeout: str, refused: bool) -> None:
    data = example_data(example)
    data["slurm"].setdefault("health_check", {})["tool_timeout"] = timeout
    found = findings_of(data, "SLURM-HEALTH-TIMEOUT")
    assert bool(found) == refused
    if refused:
        [finding] = found
        assert finding.is_error
        assert finding.path == ("slurm", "health_check", "tool_timeout")
        calls = 2 if example == "hgx-h200" else 1
        assert finding.hint == f"tool_timeout: {59 // calls}s or less (a healthy nvidia-smi " \
                               "answers in a second or two)"


def test_dbd_port_clashes_with_mariadb_beside_it() -> None:
    data = example_data("dgx-h100-superpod-4su")  # storage.host: localhost
    data["slurm"]["accounting"]["port"] = 3306
    [(message, path)] = _codes(data, "SLURM-PORT-CLASH")
    assert path == ("slurm", "accounting", "port")
    assert message.startswith("slurmdbd's DbdPort 3306 on head-01 is MariaDB's port")


def test_dbd_port_may_equal_the_port_of_a_database_on_another_host() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["slurm"]["accounting"]["port"] = 3306
    data["slurm"]["accounting"]["storage"]["host"] = "db1.example.org"
    assert _codes(data, "SLURM-PORT-CLASH") == []


def test_dbd_port_clashes_with_slurmctld_on_the_controller() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["slurm"]["accounting"]["port"] = 6817
    [(message, _)] = _codes(data, "SLURM-PORT-CLASH")
    assert "SlurmctldPort, and head-01 is a controller" in message


def test_examples_have_no_port_clash() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su", "hgx-h200"):
        assert _codes(example_data(name), "SLURM-PORT-CLASH") == []


def _liquid_r02(data: dict[str, Any]) -> dict[str, Any]:
    racks = data["rows"][0]["racks"]
    assert racks[1]["names"] == "r02"
    racks[1]["cooling"] = "liquid"
    return data


def test_liquid_rack_on_no_loop_is_an_error_when_loops_cool_others() -> None:
    data = _liquid_r02(example_data("seed-64gpu-h100"))
    [found] = findings_of(data, "COOLING-LOOP-MISSING")
    assert found.is_error and found.path == ("rows", 0, "racks", 1, "cooling")
    assert findings_of(data, "COOLING-LIQUID-CAPACITY") == []


def test_liquid_rack_in_a_loop_is_not_on_no_loop() -> None:
    data = _liquid_r02(example_data("seed-64gpu-h100"))
    data["cooling"]["loops"][0]["racks"] = "r[01-02]"
    assert findings_of(data, "COOLING-LOOP-MISSING") == []


def test_liquid_rack_without_any_loop_stays_a_warning() -> None:
    """No loops at all: the spec does not model its liquid cooling; the old warning."""
    data = _liquid_r02(example_data("seed-64gpu-h100"))
    del data["cooling"]
    assert findings_of(data, "COOLING-LOOP-MISSING") == []
    [found] = findings_of(data, "COOLING-LIQUID-CAPACITY")
    assert not found.is_error and found.path == ("rows", 0, "racks", 1, "cooling")
