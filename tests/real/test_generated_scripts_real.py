"""The generated shell scripts: `sh -n` and shellcheck on every example's, the health check's
faults one at a time (run as slurmd runs it: no environment but SLURMD_NODENAME, stand-in
device tools and a stand-in scontrol that records what it is asked), and the password script.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from cluster_iac.emit import render_all
from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import compile_data
from tests.real import health_harness as hh
from tests.real import slurm_harness as harness
from tests.real.policy_cluster import require_consumers
from tests.real.test_health_real import _node_spec
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

# stand-in scontrol: `-o show node N` prints the state in state/scontrol.state (IDLE by
# default); `update ...` records its arguments, one a line, and exits with state/scontrol.rc
SCONTROL = """#!/bin/sh
state=/usr/local/bin/state
if [ "$1" = -o ] && [ "$2" = show ]; then
    printf 'NodeName=%s Arch=x86_64 State=%s Reason=none\\n' "$4" \\
        "$(cat "$state/scontrol.state" 2>/dev/null || echo IDLE)"
    exit 0
fi
printf '%s\\n' "$@" >"$state/scontrol.update"
exit "$(cat "$state/scontrol.rc" 2>/dev/null || echo 0)"
"""
NODE = "n01"


def _scripts() -> list[tuple[str, str, str]]:
    """(example, path, text) of every generated shell script."""
    return [(name, path, text) for name in EXAMPLE_IDS
            for path, text in example_build(name).files.items() if path.endswith(".sh")]


@pytest.mark.parametrize("name,path,text", _scripts(), ids=lambda v: str(v)[:60])
def test_generated_script_is_sh_and_shellcheck_clean(name: str, path: str, text: str,
                                                     tmp_path: Path) -> None:
    require_consumers()
    script = tmp_path / Path(path).name
    script.write_text(text)
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0
    result = subprocess.run(["shellcheck", "--shell=sh", "--severity=style", str(script)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_every_example_has_its_scripts() -> None:
    names = {p for _, p, _ in _scripts()}
    assert {"slurm/accounting.sh", "slurm/slurmdbd-storage-pass.sh",
            "slurm/healthcheck/h100-hdr.sh", "slurm/healthcheck/dgx-h100.sh"} <= names


# --- the health check's faults ---------------------------------------------------------------


def _program(example: str, tmp: Path, tool_timeout: str = "2s") -> tuple[Path, hh.NodeSpec]:
    """The example's health check, rendered with a short tool timeout (so a hang is quick)."""
    data = example_data(example)
    data["slurm"].setdefault("health_check", {})["tool_timeout"] = tool_timeout
    plan = compile_data(data)
    (node_type,) = {n.node_type for n in plan.compute_nodes}
    tmp.mkdir(parents=True, exist_ok=True)
    program = tmp / "healthcheck.sh"
    program.write_text(render_all(plan)[f"slurm/healthcheck/{node_type}.sh"])
    program.chmod(0o755)
    return program, _node_spec(plan, plan.node_types[node_type])


def _run(program: Path, spec: hh.NodeSpec, tmp: Path, *, memory_kib: int | None = None,
         drop: tuple[str, ...] = (), scontrol_state: str = "IDLE", scontrol_rc: int = 0,
         **faults: object) -> tuple[int, list[str] | None]:
    """Run the program with the stand-ins; (exit code, the `scontrol update` arguments or
    None when it did not call it)."""
    tools = hh.install_tools(tmp / "tools", spec)
    (tools / "scontrol").write_text(SCONTROL)
    (tools / "scontrol").chmod(0o755)
    for tool in drop:
        (tools / tool).unlink()
    (tools / "state" / "scontrol.state").write_text(scontrol_state + "\n")
    (tools / "state" / "scontrol.rc").write_text(f"{scontrol_rc}\n")
    hh.set_state(tools, NODE, **faults)
    meminfo = hh.meminfo(tmp / "meminfo", memory_kib or spec.memory_kib)
    steps = [f"mount --bind {shlex.quote(str(tools))} /usr/local/bin",
             f"mount --bind {shlex.quote(str(meminfo))} /proc/meminfo",
             *_hidden(program, drop, tmp / "absent"),
             "exec env -i SLURMD_NODENAME=" + NODE + " " + shlex.quote(str(program))]
    result = subprocess.run([harness._tool("unshare"), "-m", "--propagation", "private",
                             "sh", "-ec", " && ".join(steps)], capture_output=True, text=True,
                            timeout=60)
    update = tools / "state" / "scontrol.update"
    return result.returncode, update.read_text().splitlines() if update.exists() else None


def _hidden(program: Path, tools: tuple[str, ...], absent: Path) -> list[str]:
    """Mount steps that hide the host's own copies of ``tools`` (infiniband-diags puts
    ibstat in /usr/sbin) from the program's PATH: an empty, non-executable file bound over
    each, which `command -v` does not take. Only in the test's private mount namespace."""
    path = next(line.split("=", 1)[1] for line in program.read_text().splitlines()
                if line.startswith("PATH="))
    absent.write_bytes(b"")
    absent.chmod(0o644)
    return [f"mount --bind {shlex.quote(str(absent))} {shlex.quote(str(Path(d) / tool))}"
            for tool in tools for d in path.split(":")
            if d != "/usr/local/bin" and (Path(d) / tool).exists()]


FAULTS = [  # (example, faults, the reason it must give)
    ("seed-64gpu-h100", {"gpus": 7}, "GPU count 7, expected 8"),
    ("seed-64gpu-h100", {"model": "NVIDIA A100-SXM4-80GB"},
     "GPU not a NVIDIA H100 80GB HBM3: 0: NVIDIA A100-SXM4-80GB, 1: NVIDIA A100-SXM4-80GB"),
    ("seed-64gpu-h100", {"ecc": 3}, "uncorrected ECC errors (GPU 0: 3, GPU 1: 3"),
    ("seed-64gpu-h100", {"ports": 0}, "InfiniBand ports Active at 200 Gb/s: 0 of 1"),
    ("seed-64gpu-h100", {"rate": 100}, "InfiniBand ports Active at 200 Gb/s: 0 of 1"),
    ("seed-64gpu-h100", {"hang": True}, "nvidia-smi did not answer in 2s"),
    ("seed-64gpu-h100", {"gpus": 6, "ports": 0},
     "GPU count 6, expected 8; InfiniBand ports Active at 200 Gb/s: 0 of 1"),
    ("dgx-h100-superpod-4su", {"nolustre": True}, "Lustre not mounted at /lustre"),
    ("dgx-h100-superpod-4su", {"ports": 7}, "InfiniBand ports Active at 400 Gb/s: 7 of 8"),
]


@pytest.mark.parametrize("example,faults,reason", FAULTS,
                         ids=[f"{e}-{'-'.join(f)}" for e, f, _ in FAULTS])
def test_health_check_drains_with_a_reason_naming_the_fault(
        example: str, faults: dict[str, object], reason: str, tmp_path: Path) -> None:
    require_consumers()
    program, spec = _program(example, tmp_path)
    code, update = _run(program, spec, tmp_path, **faults)
    assert code == 0
    assert update is not None and update[:3] == ["update", f"NodeName={NODE}", "State=DRAIN"]
    assert update[3].startswith(f"Reason=healthcheck: {reason}"), update[3]
    assert not any("DOWN" in arg for arg in update[:3])


def test_health_check_leaves_a_healthy_node_alone(tmp_path: Path) -> None:
    require_consumers()
    for example in ("seed-64gpu-h100", "dgx-h100-superpod-4su"):
        program, spec = _program(example, tmp_path / example)
        assert _run(program, spec, tmp_path / example) == (0, None), example


def test_health_check_names_missing_tools_and_memory(tmp_path: Path) -> None:
    require_consumers()
    program, spec = _program("seed-64gpu-h100", tmp_path)
    code, update = _run(program, spec, tmp_path, drop=("nvidia-smi", "ibstat"),
                        memory_kib=spec.memory_kib // 2)
    assert code == 0 and update is not None
    mib = spec.memory_kib // 2 // 1024
    assert update[3] == ("Reason=healthcheck: nvidia-smi not found; ibstat not found; memory "
                         f"{mib} MiB, expected at least 1525678 MiB")


def test_health_check_keeps_an_existing_drain_and_reports_a_failed_one(tmp_path: Path) -> None:
    require_consumers()
    program, spec = _program("seed-64gpu-h100", tmp_path)
    assert _run(program, spec, tmp_path / "a", scontrol_state="IDLE+DRAIN", gpus=7) == (0, None)
    code, update = _run(program, spec, tmp_path / "b", scontrol_rc=1, gpus=7)
    assert code == 1 and update is not None  # as the Epilog, a non-zero exit drains anyway


# --- the password file --------------------------------------------------------------------


def _storage_pass(tmp: Path, password: str) -> subprocess.CompletedProcess[str]:
    files = example_build("seed-64gpu-h100").files
    etc = tmp / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "slurmdbd-storage-pass.sh").write_text(files["slurm/slurmdbd-storage-pass.sh"])
    env = {"PATH": os.environ["PATH"], "SLURMDBD_STORAGE_PASS": password}
    return subprocess.run([harness._tool("unshare"), "-m", "--propagation", "private", "sh",
                           "-ec", f"mount --bind {shlex.quote(str(etc))} /etc/slurm && exec "
                           "sh /etc/slurm/slurmdbd-storage-pass.sh"],
                          capture_output=True, text=True, env=env, timeout=30)


def test_storage_pass_script_writes_a_private_file_and_refuses_what_slurmdbd_cannot_read(
        tmp_path: Path) -> None:
    require_consumers()
    result = _storage_pass(tmp_path, "S3cret-pass")
    assert result.returncode == 0, result.stderr
    written = tmp_path / "etc" / "slurmdbd.storage.conf"
    assert written.read_text() == "StoragePass=S3cret-pass\n"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert written.stat().st_uid == harness.pwd.getpwnam("slurm").pw_uid
    for bad in ("has#hash", "two words", "line\nbreak", 'quo"te', ""):
        assert _storage_pass(tmp_path, bad).returncode != 0, repr(bad)
        assert written.read_text() == "StoragePass=S3cret-pass\n", repr(bad)
