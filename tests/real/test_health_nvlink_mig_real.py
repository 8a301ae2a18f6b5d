"""Real consumer: the generated health check of an NVL72 tray and of a MIG server, run by sh in a
private mount namespace with stand-in tools (as test_generated_scripts_real.py runs the others):
it leaves a healthy node alone and drains one whose IMEX service, IMEX peer list, IMEX channel
device or MIG instances are not what the plan says.

Besides the usual stand-ins (nvidia-smi, ibstat, scontrol over /usr/local/bin, a meminfo over
/proc/meminfo), these need: a systemctl stand-in (is-active), a file over /proc/devices (the
driver's character devices), /etc seen through an overlay that adds /etc/nvidia-imex (the real
/etc is not touched), and nvidia-smi answering `mig -lgi` with a table as the driver prints it.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.mig import mig_profiles
from cluster_iac.emit import render_all
from cluster_iac.plan import NodeTypePlan, Plan
from tests.facility_fixtures import compile_data
from tests.real import health_harness as hh
from tests.real import slurm_harness as harness
from tests.real.policy_cluster import require_consumers
from tests.real.test_generated_scripts_real import NODE, SCONTROL
from tests.real.test_health_real import _node_spec
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

SYSTEMCTL = """#!/bin/sh
exit "$(cat /usr/local/bin/state/systemctl.rc 2>/dev/null || echo 0)"
"""
# nvidia-smi mig -lgi from a state file; every other call to the usual stand-in
MIG_SMI = """#!/bin/sh
if [ "$1" = mig ]; then
    cat /usr/local/bin/state/mig.lgi
    exit 0
fi
exec /usr/local/bin/nvidia-smi-gpus "$@"
"""


def _program(example: str, node_type: str, tmp: Path) -> tuple[Path, Plan, NodeTypePlan]:
    data = example_data(example)
    data["slurm"].setdefault("health_check", {})["tool_timeout"] = "2s"
    plan = compile_data(data)
    tmp.mkdir(parents=True, exist_ok=True)
    program = tmp / "healthcheck.sh"
    program.write_text(render_all(plan)[f"slurm/healthcheck/{node_type}.sh"])
    program.chmod(0o755)
    return program, plan, plan.node_types[node_type]


def _lgi(nt: NodeTypePlan, drop: int = 0) -> str:
    """`nvidia-smi mig -lgi` as the driver prints it, for the plan's instances (less ``drop``)."""
    rows = ["+" + "-" * 55 + "+", "| GPU instances:" + " " * 40 + "|",
            "| GPU   Name             Profile  Instance   Placement  |",
            "|                          ID       ID       Start:Size |", "|" + "=" * 55 + "|"]
    for d in nt.mig[drop:]:
        size = (mig_profiles(builtin_catalog().gpus[nt.gpu_model or ""]) or {})[d.profile].memory
        rows.append(f"|   {d.gpu}  MIG {d.profile:<14} 19 {d.gi:>8}          {d.start}:{size}"
                    "     |")
    return "\n".join(rows) + "\n"


def _run(program: Path, plan: Plan, nt: NodeTypePlan, tmp: Path, *, active: bool = True,
         imex_device: bool = True, peers: bool = True, lgi: str = "") -> list[str] | None:
    """Run the program with the stand-ins; the `scontrol update` arguments, or None."""
    require_consumers()
    spec = _node_spec(plan, nt)
    tools = hh.install_tools(tmp / "tools", spec)
    (tools / "nvidia-smi").rename(tools / "nvidia-smi-gpus")
    for name, text in (("scontrol", SCONTROL), ("systemctl", SYSTEMCTL),
                       ("nvidia-smi", MIG_SMI)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    (tools / "state" / "systemctl.rc").write_text("0\n" if active else "3\n")
    (tools / "state" / "mig.lgi").write_text(lgi)
    devices = tmp / "devices"
    devices.write_text("Character devices:\n  1 mem\n195 nvidia\n"
                       + ("510 nvidia-caps-imex-channels\n" if imex_device else "")
                       + "511 nvidia-caps\n\nBlock devices:\n  8 sd\n")
    upper, work = tmp / "etc-upper", tmp / "etc-work"
    (upper / "nvidia-imex").mkdir(parents=True)
    work.mkdir()
    if peers:
        (upper / "nvidia-imex" / "nodes_config.cfg").write_text("10.40.0.16\n10.40.0.17\n")
    meminfo = hh.meminfo(tmp / "meminfo", spec.memory_kib)
    q = shlex.quote
    steps = [f"mount --bind {q(str(tools))} /usr/local/bin",
             f"mount --bind {q(str(meminfo))} /proc/meminfo",
             f"mount --bind {q(str(devices))} /proc/devices",
             f"mount -t overlay overlay -o lowerdir=/etc,upperdir={q(str(upper))},"
             f"workdir={q(str(work))} /etc",
             f"exec env -i SLURMD_NODENAME={NODE} {q(str(program))}"]
    result = subprocess.run([harness._tool("unshare"), "-m", "--propagation", "private",
                             "sh", "-ec", " && ".join(steps)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    update = tools / "state" / "scontrol.update"
    return update.read_text().splitlines() if update.exists() else None


@pytest.mark.parametrize("fault,reason", [
    ({}, None),
    ({"active": False}, "nvidia-imex service not active"),
    ({"peers": False}, "/etc/nvidia-imex/nodes_config.cfg missing or empty"),
    ({"imex_device": False},
     "no nvidia-caps-imex-channels device in /proc/devices (IMEX channels)"),
])
def test_nvl72_tray_health_checks_imex(fault: dict[str, bool], reason: str | None,
                                       tmp_path: Path) -> None:
    program, plan, nt = _program("gb200-nvl72", "gb200", tmp_path)
    update = _run(program, plan, nt, tmp_path, **fault)
    if reason is None:
        assert update is None
    else:
        assert update is not None and update[2] == "State=DRAIN"
        assert update[3] == f"Reason=healthcheck: {reason}"


def test_mig_server_health_compares_the_instances(tmp_path: Path) -> None:
    program, plan, nt = _program("hgx-h200", "h200-mig", tmp_path)
    assert _run(program, plan, nt, tmp_path / "ok", lgi=_lgi(nt)) is None
    update = _run(program, plan, nt, tmp_path / "one-missing", lgi=_lgi(nt, drop=1))
    assert update is not None and update[2] == "State=DRAIN"
    assert update[3].startswith("Reason=healthcheck: MIG instances differ from gres.conf: ")
    found = update[3].split(": ", 2)[2].split()  # what it found (the reason ends at 200)
    assert "0:7:1g.18gb" not in found and found[0] == "0:10:1g.18gb"  # 1g at 0:1 is id 7
