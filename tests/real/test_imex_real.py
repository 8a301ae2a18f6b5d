"""Real consumer: slurmctld and slurmd of Slurm 24.11 and 26.05 load switch/nvidia_imex from the
gb200-nvl72 example's slurm.conf (rendered for each release) and log no error; Debian 12's 22.05,
which has no such plugin, is refused by the tool at the spec's line, and its slurmctld indeed
cannot start on the 24.05 files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cluster_iac.catalog.slurm_releases import slurm_release
from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import RUNTIMES, _require
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real
IMEX_MAJOR = "511"  # any free character major: the sandbox makes no channel device


def _render(tmp: Path, version: str) -> Plan:
    plan = compile_data(example_data("gb200-nvl72", version))
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
    (tmp / "run").mkdir()
    return plan


@pytest.mark.parametrize("release", ["24.11", "26.05"])
def test_daemons_load_the_imex_switch_plugin(release: str, tmp_path: Path) -> None:
    runtime = _require(release)
    assert runtime.plugin_exists("switch/nvidia_imex")
    plan = _render(tmp_path, release)
    assert plan.imex is not None and plan.imex.channels == 2048
    for cluster in harness.running(tmp_path / "slurm", tmp_path / "run", runtime):
        config = harness.parse_record(" ".join(
            line.replace(" = ", "=", 1).replace(" ", "") for line in
            cluster.scontrol("show", "config").splitlines() if line.startswith("Switch")))
        assert config["SwitchType"] == "switch/nvidia_imex"
        assert config["SwitchParameters"] == "imex_channel_count=2048"
        nt = plan.node_types["gb200"]
        host = plan.imex.domains[0].nodes[0]
        # Sandbox only: this machine has no NVIDIA driver, so /proc/devices has no
        # nvidia-caps-imex-channels and the plugin would disable itself (a warning). slurmd's
        # copy names a major (the plugin's own imex_dev_major parameter), so that the plugin
        # parses our imex_channel_count and runs enabled, as on a node with the driver.
        slurmd_conf = cluster.conf.slurmd_path
        ours = "SwitchParameters=imex_channel_count=2048"
        assert ours in slurmd_conf.read_text().splitlines()
        slurmd_conf.write_text(slurmd_conf.read_text().replace(
            ours, ours + ",imex_dev_major=" + IMEX_MAJOR))
        record = cluster.register(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                                  nt.gpu_count)
        assert record.get("SlurmdStartTime", "None") != "None"  # it registered
        assert cluster.log_errors(f"slurmd-{host}") == []
        assert cluster.log_errors("slurmctld") == []
        log = cluster.log(f"slurmd-{host}")
        imex_lines = [ln for ln in log.splitlines() if "nvidia_imex" in ln]
        assert any(f"using configured imex_dev_major: {IMEX_MAJOR}" in ln for ln in imex_lines)
        assert not any("plugin disabled" in ln for ln in imex_lines)


def test_before_24_05_the_spec_is_refused_at_its_line_and_slurm_cannot_load_the_plugin(
        tmp_path: Path) -> None:
    from cluster_iac.base.errors import CompileError

    data = example_data("gb200-nvl72", "22.05")
    del data["slurm"]["multi_node_nvlink"]  # the fixture's opt-out: the spec as a user writes it
    with pytest.raises(CompileError) as info:
        compile_data(data)
    [diag] = info.value.diagnostics
    assert diag.code == "SLURM-IMEX" and diag.path == ("cluster", "slurm_version")
    assert not slurm_release("22.05").nvidia_imex and slurm_release("24.05").nvidia_imex
    if "22.05" not in RUNTIMES and os.environ.get("CI") != "true":
        pytest.skip("Debian 12's Slurm 22.05 is not installed here")
    runtime = _require("22.05")
    assert not runtime.plugin_exists("switch/nvidia_imex")
    _render(tmp_path, "24.05")  # the files of the first release that has the plugin
    with pytest.raises(harness.HarnessError) as refused:
        for _cluster in harness.running(tmp_path / "slurm", tmp_path / "run", runtime):
            pass
    assert "switch/nvidia_imex" in str(refused.value)
