"""submit.sh (emit/acceptance.py): a kind of acceptance job for the units named, each unit's
job with its nodes on sbatch's command line and its facts as the script's arguments, run here
with stand-ins for sbatch, srun and scontrol (tests/real/test_acceptance_real.py submits them
to real slurmctld with sbatch --test-only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cluster_iac.base.hostlist import expand
from tests.conftest import ROOT
from tests.test_acceptance import EXAMPLE, _tree, _units


def _submit(tree: Path, tmp: Path, partition: str, *args: str) -> tuple[int, list[list[str]], str]:
    """Run the rendered submit.sh with a stand-in sbatch that records its arguments: (exit
    status, each submission's arguments, stderr)."""
    log = tmp / "sbatch.log"
    log.unlink(missing_ok=True)
    stand_in = tmp / "sbatch"
    stand_in.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\t" "$a"; done >> "$LOG"\n'
                        'echo >> "$LOG"\necho "Submitted batch job 1"\n')
    stand_in.chmod(0o755)
    result = subprocess.run(["sh", str(tree / "acceptance" / partition / "submit.sh"), *args],
                            capture_output=True, text=True,
                            env={**os.environ, "SBATCH": str(stand_in), "LOG": str(log)})
    calls = [line.rstrip("\t").split("\t") for line in log.read_text().splitlines()] \
        if log.exists() else []
    return result.returncode, calls, result.stderr


def test_submit_gives_each_unit_its_nodes_and_facts(tmp_path: Path) -> None:
    """Each unit's job: its nodes, node count and name on sbatch's command line, the unit and
    its facts (the all_reduce steps of its bars, its rail ports, the host pairs) as the
    script's arguments; a range selects units by number."""
    tree = _tree(EXAMPLE, tmp_path)
    units = json.loads((tree / "acceptance/batch/bars.json").read_text())["units"]
    script = str(tree / "acceptance/batch")
    code, calls, _ = _submit(tree, tmp_path, "batch", "nccl")
    assert code == 0 and len(calls) == 4
    for call, (unit, bars) in zip(calls, units.items(), strict=True):
        steps = [[s["scope"], s["name"], s["hosts"], str(s["nodes"]), "8"] for s in bars["nccl"]]
        assert call == [f"--job-name=accept-batch-{unit}-nccl", f"--nodelist={bars['nodelist']}",
                        f"--nodes={bars['count']}", f"{script}/nccl.sbatch", unit,
                        *(w for step in steps for w in step)]
    code, calls, _ = _submit(tree, tmp_path, "batch", "ib-spine", "su3-su4")
    assert code == 0 and [c[0] for c in calls] == ["--job-name=accept-batch-su3-spine-ib",
                                                   "--job-name=accept-batch-su4-spine-ib"]
    su3 = calls[0]
    assert su3[3:6] == [f"{script}/ib.sbatch", "su3", " ".join(units["su3"]["ib"]["ports"])]
    pairs = su3[6:]
    assert pairs[0::2] == expand(units["su2"]["nodelist"])  # host k of the unit before ...
    assert pairs[1::2] == expand(units["su3"]["nodelist"])  # ... with host k of this one
    assert sorted(expand(su3[1].removeprefix("--nodelist="))) == sorted(pairs)
    code, calls, _ = _submit(tree, tmp_path, "batch", "dcgm", "su2", "4")
    assert code == 0 and [c[4] for c in calls] == ["su2", "su4"]


def test_submit_refuses_what_names_no_job_and_submits_nothing(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    for args, said in [(("dcgm", "su1", "su9"), "no dcgm job of su9"),
                       (("dcgm", "su1-"), "no dcgm job of su1-"),
                       (("gpu-burn",), "no job kind gpu-burn"),
                       (("storage", "su1"), "without UNIT"), ((), "usage: submit.sh KIND")]:
        code, calls, err = _submit(tree, tmp_path, "batch", *args)
        assert code == 2 and calls == [] and said in err, (args, err)
    code, calls, _ = _submit(tree, tmp_path, "batch", "storage")
    assert code == 0 and calls == [[str(tree / "acceptance/batch/storage.sbatch")]]


def test_a_unit_job_without_its_unit_refuses_to_run(tmp_path: Path) -> None:
    """Submitted by hand without submit.sh, a unit's script would land on any nodes: it stops."""
    tree = _tree(EXAMPLE, tmp_path)
    result = subprocess.run(["bash", str(tree / "acceptance/batch/nccl.sbatch"), "su1"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "submit it with submit.sh nccl" in result.stderr


def _run_job(tree: Path, tmp: Path, kind: str, unit: str) -> list[list[str]]:
    """Submit one unit's job through submit.sh with a stand-in sbatch that runs the script as
    Slurm would (SLURM_JOB_NODELIST from --nodelist), stand-ins for srun (records its
    arguments), scontrol (show hostnames) and sleep: the srun commands the job runs, sorted."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp / "srun.log"
    log.write_text("")
    stand_ins = {
        "sbatch": f'#!{sys.executable}\nimport os, subprocess, sys\nargs = sys.argv[1:]\n'
                  'opts = dict(a[2:].split("=", 1) for a in args if a.startswith("--"))\n'
                  'rest = [a for a in args if not a.startswith("--")]\n'
                  'env = {**os.environ, "SLURM_JOB_NODELIST": opts["nodelist"]}\n'
                  'sys.exit(subprocess.run(["bash", *rest], env=env).returncode)\n',
        "srun": '#!/bin/sh\nline=$(printf "%s\\t" "$@")\nprintf "%s\\n" "$line" >> "$SRUN_LOG"\n',
        "scontrol": f'#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n'
                    'from cluster_iac.base.hostlist import expand\n'
                    'assert sys.argv[1:3] == ["show", "hostnames"]\n'
                    'print("\\n".join(expand(sys.argv[3])))\n',
        "sleep": "#!/bin/sh\n"}
    for name, text in stand_ins.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    result = subprocess.run(
        ["sh", str(tree / "acceptance/batch/submit.sh"), kind, unit], capture_output=True,
        text=True, env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
                        "SBATCH": str(bin_dir / "sbatch"), "SRUN_LOG": str(log),
                        "ACCEPTANCE_RESULTS": str(tmp / "results")})
    assert result.returncode == 0, result.stderr
    return sorted(line.rstrip("\t").split("\t") for line in log.read_text().splitlines())


def test_a_unit_job_runs_its_unit_steps_and_pairs(tmp_path: Path) -> None:
    """What a unit's jobs run, from the facts submit.sh passes: nccl every node alone and the
    unit, each on its hosts; ib the unit's hosts in pairs on one leaf, ib-spine host k of the
    unit before with host k of this one; outputs in the unit's results folder."""
    tree = _tree(EXAMPLE, tmp_path)
    units = _units({"acceptance/batch/bars.json":
                    (tree / "acceptance/batch/bars.json").read_text()})
    hosts = expand(units["su2"]["nodelist"])
    runs = _run_job(tree, tmp_path, "nccl", "su2")
    alone = [r for r in runs if r[0] == "--nodes=1"]
    assert sorted(r[1] for r in alone) == sorted(f"--nodelist={h}" for h in hosts)
    assert [r for r in runs if r[0] != "--nodes=1"] == [
        ["--nodes=32", f"--nodelist={units['su2']['nodelist']}", "--ntasks-per-node=8",
         "--gpus-per-node=8", "all_reduce_perf", "-b", "8G", "-e", "8G", "-f", "2", "-g", "1"]]
    ports = units["su2"]["ib"]["ports"]

    def pairs(runs: list[list[str]]) -> set[tuple[str, str, str]]:
        """(server, client, port) of each ib_write_bw client run: srun's options, bash -c
        SCRIPT _, then the tool, the port, the TCP port, the server and the tool's options."""
        return {(r[10], r[2].removeprefix("--nodelist="), r[8]) for r in runs
                if len(r) == 12 and r[7] == "ib_write_bw"}
    own = pairs(_run_job(tree, tmp_path, "ib", "su2"))
    assert own == {(a, b, p) for a, b in zip(hosts[::2], hosts[1::2], strict=True)
                   for p in ports}
    before = expand(units["su1"]["nodelist"])
    assert pairs(_run_job(tree, tmp_path, "ib-spine", "su2")) == {
        (a, b, p) for a, b in zip(before, hosts, strict=True) for p in ports}
    assert (tmp_path / "results/batch/su2").is_dir()
