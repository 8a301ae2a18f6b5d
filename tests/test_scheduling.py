"""Scheduling policy: durations in the units Slurm reads, derived partition defaults, the checks'
codes (each tripped here or in tests/data/invalid), and what the emitters write for it."""

from __future__ import annotations

from typing import Any

import pytest

from cluster_iac.base.errors import CompileError, Severity
from cluster_iac.checks import run_checks
from cluster_iac.emit import render_all
from cluster_iac.plan.durations import DurationError, human, seconds, slurm_time
from cluster_iac.spec.parse import parse_spec
from tests.conftest import example_build
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import example_data


def _data(**slurm: Any) -> dict[str, Any]:
    """The minimal example with slurmdbd accounting and the given slurm keys."""
    data = example_data("minimal")
    data["slurm"] = {**data["slurm"], "accounting": {}, **slurm}
    return data


def _codes(data: dict[str, Any]) -> dict[str, Severity]:
    """Check code -> severity of the policy findings (compile errors raise)."""
    return {f.code: f.severity for f in run_checks(compile_data(data))
            if f.code.startswith("SLURM-")}


def _compile_errors(data: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...]]]:
    with pytest.raises(CompileError) as info:
        compile_data(data)
    return [(d.code, d.path) for d in info.value.diagnostics]


# --- durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text,total", [("90s", 90), ("5m", 300), ("5min", 300), ("1h", 3600),
                                        ("7d", 604800), ("2w", 1209600), ("7-0", 604800),
                                        ("7-00:00:00", 604800), ("04:00:00", 14400),
                                        ("30:00", 1800), ("1-12:30", 131400)])
def test_durations_read_with_their_unit(text: str, total: int) -> None:
    assert seconds(text, slurm_unit="minutes") == total


def test_a_bare_number_says_what_slurm_would_have_read() -> None:
    with pytest.raises(DurationError, match="3600 would mean 60 hours"):
        seconds(3600, slurm_unit="minutes")
    with pytest.raises(DurationError, match="300 would mean 5 minutes"):
        seconds("300", slurm_unit="seconds")


@pytest.mark.parametrize("text", ["5 days", "1:75", "INFINITE", "-1h", "1.5h", ""])
def test_durations_refused(text: str) -> None:
    with pytest.raises(DurationError):
        seconds(text, slurm_unit="minutes")


def test_unlimited_only_where_allowed_and_slurm_time_round_trips() -> None:
    assert seconds("UNLIMITED", slurm_unit="minutes", unlimited=True) is None
    for total in (0, 59, 3600, 86399, 604800, 90061):
        assert seconds(slurm_time(total), slurm_unit="minutes") == total
    assert slurm_time(None) == "INFINITE"
    assert (human(216000), human(90), human(604800)) == ("60 hours", "90 seconds", "1 week")


# --- what the seed example's policy becomes ---------------------------------------------------


def _conf(name: str) -> dict[str, str]:
    text = example_build(name).files["slurm/slurm.conf"]
    return dict(line.split("=", 1) for line in text.splitlines()
                if "=" in line and not line.startswith(("#", "NodeName", "PartitionName")))


def test_seed_policy_in_slurm_conf_is_in_the_units_slurm_reads() -> None:
    conf = _conf("seed-64gpu-h100")
    assert conf["PriorityCalcPeriod"] == "60"  # the guide's "3600" meant an hour: 60 minutes
    assert conf["PriorityDecayHalfLife"] == "7-00:00:00"
    assert conf["HealthCheckInterval"] == "300"  # seconds
    assert conf["ReturnToService"] == "1"
    assert conf["PreemptType"] == "preempt/qos" and conf["PreemptMode"] == "CANCEL"
    assert conf["Epilog"] == conf["HealthCheckProgram"] == "/etc/slurm/healthcheck.sh"
    # keys the guide wrote that Slurm does not have never reach the file
    for key in ("PriorityDecayType", "PriorityUsageResetPeriodType", "MaxConcurrentJobs",
                "ControlMachine", "MaxJobCount", "EpilogMsgTime"):
        assert key not in conf


def test_partition_defaults_are_derived_from_the_smallest_gpu_node() -> None:
    plan = compile_data(example_data("minimal"))
    policy = plan.scheduling.partitions["gpu"]
    nt = plan.node_types["gpu"]
    real_memory = nt.memory_gib * 1024 - max(4 * 1024, nt.memory_gib * 1024 * 0.03)
    assert policy.def_mem_per_gpu_mib == int(real_memory) // 8
    assert policy.def_cpu_per_gpu == nt.cpus // 8
    line = next(ln for ln in example_build("minimal").files["slurm/slurm.conf"].splitlines()
                if ln.startswith("PartitionName=gpu"))
    assert f"DefMemPerGPU={policy.def_mem_per_gpu_mib}" in line
    assert f"DefCpuPerGPU={policy.def_cpu_per_gpu}" in line


def test_no_accounting_means_no_slurmdbd_files_and_fifo() -> None:
    files = example_build("minimal").files
    assert "slurm/slurmdbd.conf" not in files and "slurm/accounting.sh" not in files
    conf = _conf("minimal")
    assert not [key for key in conf if key.startswith("Priority")]  # the release's default
    assert conf["AccountingStorageType"] == "accounting_storage/none"


def test_no_password_in_any_output() -> None:
    files = example_build("dgx-h100-superpod-4su").files
    conf = files["slurm/slurmdbd.conf"]
    assert not [ln for ln in conf.splitlines() if "StoragePass" in ln and ln[0] != "#"]
    assert conf.splitlines()[-1] == "Include /etc/slurm/slurmdbd.storage.conf"
    with pytest.raises(CompileError):
        parse_spec(_data(accounting={"storage": {"password": "hunter2"}}))


# --- checks: each code tripped -------------------------------------------------------------


def test_warnings_of_the_policy() -> None:
    data = _data(priority={"weights": {"qos": 0}, "usage_reset": "weekly",
                           "decay_half_life": "1h", "calc_period": "2h"},
                 qos=[{"name": "normal", "priority": 10, "max_wall": "30d"}],
                 health_check={"interval": "30s"}, return_to_service=2)
    data["slurm"]["partitions"][0]["max_time"] = "7-00:00:00"
    data["slurm"]["accounting"] = {"enforce": ["associations"]}
    assert _codes(data) == {
        "SLURM-PRIORITY-QOS-WEIGHT": Severity.WARNING, "SLURM-PRIORITY-RESET": Severity.WARNING,
        "SLURM-PRIORITY-CALC": Severity.WARNING, "SLURM-QOS-WALL": Severity.WARNING,
        "SLURM-ENFORCE": Severity.WARNING, "SLURM-HEALTH-INTERVAL": Severity.WARNING,
        "SLURM-RETURN-TO-SERVICE": Severity.WARNING}


def test_priority_is_multifactor_only_where_the_spec_gives_it() -> None:
    plan = compile_data(_data(qos=[{"name": "normal"}]))
    assert plan.scheduling.priority is None
    conf = _conf("seed-64gpu-h100")
    assert conf["PriorityType"] == "priority/multifactor"
    assert conf["PriorityWeightFairshare"] == "10000"


def test_a_qos_priority_without_a_priority_section_warns() -> None:
    data = _data(qos=[{"name": "normal", "priority": 10}])
    assert _codes(data) == {"SLURM-PRIORITY-QOS-WEIGHT": Severity.WARNING}
    data["slurm"]["priority"] = {"weights": {"qos": 100}}
    assert _codes(data) == {}


def test_the_seed_and_superpod_policies_are_clean() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su"):
        assert [f.code for f in example_build(name).findings if f.code.startswith("SLURM")] == []


def test_limits_checked_against_the_partitions_that_allow_the_qos() -> None:
    data = _data(qos=[{"name": "normal"}, {"name": "big", "max_nodes_per_job": 3,
                                           "grp_gpus": 17, "max_gpus_per_job": 16}])
    findings = [f for f in run_checks(compile_data(data)) if f.code == "SLURM-QOS-LIMIT"]
    assert sorted(f.path[-1] for f in findings) == ["grp_gpus", "max_nodes_per_job"]
    data["slurm"]["partitions"][0]["allow_qos"] = ["normal"]  # 'big' runs nowhere: no limit
    assert "SLURM-QOS-LIMIT" not in _codes(data)


def test_compile_errors_of_the_policy() -> None:
    assert _compile_errors(_data(qos=[{"name": "high"}])) == [
        ("SLURM-QOS-DEFAULT", ("slurm", "qos"))]
    assert _compile_errors(_data(qos=[{"name": "normal"}, {"name": "a", "preempt": ["a"]}],
                                 preemption={"mode": "off"})) == [
        ("SLURM-QOS-PREEMPT-CYCLE", ("slurm", "qos", 1, "preempt")),
        ("SLURM-PREEMPT-OFF", ("slurm", "preemption", "mode"))]
    assert _compile_errors(_data(health_check={"interval": "0s", "tool_timeout": 20})) == [
        ("SLURM-DURATION", ("slurm", "health_check", "interval")),
        ("SLURM-DURATION", ("slurm", "health_check", "tool_timeout"))]
    assert _compile_errors(_data(priority={"calc_period": "90s"})) == [
        ("SLURM-DURATION", ("slurm", "priority", "calc_period"))]
    assert _compile_errors(_data(priority={"decay_half_life": "0s"})) == [
        ("SLURM-DURATION", ("slurm", "priority", "decay_half_life"))]
    assert _compile_errors(_data(extra={"HealthCheckInterval": 30})) == [
        ("SLURM-EXTRA-OWNED", ("slurm", "extra", "HealthCheckInterval"))]


@pytest.mark.parametrize("bad", [
    {"qos": [{"name": "High"}]},  # Slurm lowers QOS names
    {"accounts": [{"name": "a", "description": "it's"}]},  # no quote in sacctmgr text
    {"accounts": [{"name": "a", "users": ["bob; rm -rf /"]}]},
    {"health_check": {"program": "/etc/slurm/hc.sh\nEpilog=/tmp/x"}},
    {"accounting": {"storage": {"password_env": "PASS; echo"}}},
])
def test_hostile_policy_strings_are_refused_by_the_spec(bad: dict[str, Any]) -> None:
    with pytest.raises(CompileError):
        parse_spec(_data(**bad))


def test_a_hostile_gpu_name_is_one_quoted_word_in_the_health_check() -> None:
    data = example_data("minimal")
    data["catalog"] = {"gpus": {"odd": {
        "name": "Odd GPU", "nvml_name": "NVIDIA 'H100' $(reboot) `x`", "gres_type": "odd",
        "memory_gib": 80, "max_power_w": 700, "nvlink_gbs": 450, "source": "a test",
        "baseboard": "hgx-hopper-8gpu"}}}  # fits the HGX H100 server's board (SPEC-GPU-OVERRIDE)
    data["node_types"]["gpu"]["gpu"] = {"model": "odd"}
    text = render_all(compile_data(data))["slurm/healthcheck/gpu.sh"]
    assert "gpu_model='NVIDIA '\"'\"'H100'\"'\"' $(reboot) `x`'" in text
