"""Real consumer: `sbatch --test-only` of real slurmctld 22.05, 24.11 and 26.05 reads every
acceptance job (emit/acceptance.py) of every example (tests/conftest.py EXAMPLE_IDS), rendered
for that release, against the example's own slurm.conf, and answers where it would start it.
Every job goes through the rendered submit.sh (SBATCH="sbatch --test-only"), every kind for
every unit, as an operator submits them: each unit's job starts on exactly the unit's nodes
that submit.sh names on sbatch's command line (its job line's hosts, the unit's nodelist in
bars.json), in the partition of the script's #SBATCH line; a partition-wide job on its
script's own #SBATCH --nodelist.

--test-only places a job only on nodes that are up, so every compute node of the example
registers with a real slurmd of its own first: tests/real/fleet_harness.py starts all of them
at once in one sandbox (each under its node's host name, so each binds its node's loopback
address) and waits until all have registered: the 127 slurmds of dgx-h100-superpod-4su in
4-9 s, the whole file in 35-60 s on this 2-core machine (27 Nov 2026, load average 7-40).
The fleet needs root (a UTS namespace per slurmd), as the roots' releases already do. The
sandbox is slurm_harness.py's (its rewrites, each with its reason), with one addition,
``SlurmdParameters=config_overrides`` (fleet_harness says why). No daemon may log an error:
or fatal: line the sandbox does not explain (slurm_harness.SANDBOX_NOISE), nor the fleet's
start (a forward to a node whose slurmd had not registered yet: fleet_log_errors), up to the
time the jobs are placed. A missing release fails under CI=true (test_slurm_real._require).

Every example runs on every release; none is left out. Each is rendered for the release
(tests/slurm_fixtures.example_data), as a site on that release would render it: aimed at 22.05,
gb200-nvl72 keeps its jobs' NVLink use within one node (no switch/nvidia_imex before 24.05).
The two-unit SuperPOD this test used to build for want of registering more nodes is gone:
dgx-h100-superpod-4su has its leaf-to-leaf jobs (ib-spine.sbatch) in three of its units.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster_iac.base.hostlist import expand
from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.conftest import EXAMPLE_IDS
from tests.facility_fixtures import compile_data
from tests.real import fleet_harness as fleet
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _require, mig_caps
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

RELEASES = ("22.05", "24.11", "26.05")
# sbatch --test-only's answer (src/sbatch/sbatch.c): "Job N to start at T using P processors on
# nodes LIST in partition P"; 26.05 writes one more word after the time
STARTS = re.compile(r"Job \d+ to start at \S+(?: \S+)? using \d+ processors on nodes (\S+) "
                    r"in partition (\S+)")


@pytest.fixture(scope="module", params=[f"{e}@{r}" for e in EXAMPLE_IDS for r in RELEASES])
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[dict[str, str], harness.SlurmCluster]]:
    name, _, release = request.param.partition("@")
    runtime = _require(release)
    tmp = tmp_path_factory.mktemp(re.sub(r"[@.]", "-", request.param))
    plan = compile_data(example_data(name, release))
    files = render_all(plan)
    (tmp / "run").mkdir()
    for rel, text in files.items():
        # the scripts inside the sandbox's work dir: a root's release sees only that one
        out = tmp / "run" / rel if rel.startswith("acceptance/") else tmp / rel
        if rel.startswith(("slurm/", "acceptance/")):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
    scripts = {rel: str(tmp / "run" / rel) for rel in files
               if rel.startswith("acceptance/") and rel.endswith("/submit.sh")}
    conf = harness.prepare(tmp / "slurm", tmp / "run", runtime)
    fleet.fleet_rewrites(conf)
    running = harness.SlurmCluster(conf, tmp / "run", runtime)
    try:
        running.start()
        records = fleet.start_fleet(running, _shapes(plan))
        assert sorted(records) == sorted(n.hostname for n in plan.compute_nodes)
        yield scripts, running
    finally:
        running.stop()


def _shapes(plan: Plan) -> dict[str, fleet.Shape]:
    """Each compute node's faked hardware, from its node type."""
    shapes = {}
    for node in plan.compute_nodes:
        nt = plan.node_types[node.node_type]
        shapes[node.hostname] = fleet.Shape(nt.sockets, nt.cores_per_socket,
                                            nt.threads_per_core, nt.gpu_count, mig_caps(nt))
    return shapes


def test_sbatch_test_only_accepts_every_acceptance_job(
        cluster: tuple[dict[str, str], harness.SlurmCluster]) -> None:
    submits, running = cluster
    assert submits
    for rel, path in sorted(submits.items()):
        folder = Path(path).parent
        partition = _directive(str(folder / "dcgm.sbatch"), "partition") \
            if (folder / "dcgm.sbatch").exists() else folder.name
        units = json.loads((folder / "bars.json").read_text())["units"]
        for kind, expected in _expected(folder).items():
            result = running._client("env", f"SBATCH={running.runtime.tool('sbatch')} "
                                     "--test-only", "sh", path, kind)
            placed = _placed(result.stderr)
            assert result.returncode == 0 and len(placed) == len(expected), \
                f"{rel} {kind}: {result.stderr.strip()}"
            for (unit, hosts), (label, nodes, where) in zip(expected, placed, strict=True):
                assert label.startswith(f"submit.sh: {kind} {unit}"), (rel, label)
                assert sorted(expand(nodes)) == sorted(expand(hosts)), (rel, label)
                assert where == partition, (rel, label)
                if unit in units and kind != "ib-spine":
                    assert hosts == units[unit]["nodelist"], (rel, label)
    nodes = running.records("nodes")
    down = [r["NodeName"] for r in nodes if "NOT_RESPONDING" in r["State"]]
    assert not down, f"nodes stopped answering before the scripts were submitted: {down}"
    for daemon in ["slurmctld", *(f"slurmd-{r['NodeName']}" for r in nodes)]:
        assert fleet.fleet_log_errors(running, daemon) == [], daemon


def _expected(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Each kind's jobs, (unit, hosts) in submit.sh's order: a unit job's hosts from its job
    line, a partition job's from its script's #SBATCH --nodelist ('partition' its unit)."""
    kinds: dict[str, list[tuple[str, str]]] = {}
    for line in (folder / "submit.sh").read_text().splitlines():
        if line.startswith("    job "):
            kind, unit, hosts = shlex.split(line)[1:4]
            kinds.setdefault(kind, []).append((unit, hosts))
    for kind in ("nccl-partition", "storage"):
        if (folder / f"{kind}.sbatch").exists():
            kinds[kind] = [("of partition", _directive(str(folder / f"{kind}.sbatch"),
                                                       "nodelist"))]
    return kinds


def _placed(stderr: str) -> list[tuple[str, str, str]]:
    """(submit.sh's line naming the job, the nodes and partition sbatch --test-only placed
    it on) for each job, in order."""
    placed, label = [], None
    for line in stderr.splitlines():
        if line.startswith("submit.sh: "):
            label = line
        elif (found := STARTS.search(line)) and label is not None:
            placed.append((label, found.group(1), found.group(2)))
            label = None
    return placed


def _directive(path: str, key: str) -> str:
    match = re.search(rf"^#SBATCH --{key}=(\S+)$", Path(path).read_text(), re.M)
    assert match, f"{path} has no --{key}"
    return match.group(1)


def test_only_a_refusal_before_the_node_registered_is_explained(tmp_path: Path) -> None:
    """fleet_log_errors explains a forward refused by a node whose slurmd had not registered
    yet, and nothing else: a refusal after it, or by a node with no log, stays an error."""
    (tmp_path / "log").mkdir()
    conf = harness.SlurmConf(tmp_path / "etc", tmp_path / "etc-slurmd", ["n1", "n2", "n3"])
    running = harness.SlurmCluster(conf, tmp_path, harness.Runtime((24, 11)))
    (tmp_path / "log" / "slurmd-n2.log").write_text(
        "[2026-11-27T18:14:19.895] slurmd started on Fri, 27 Nov 2026 18:14:19 +0000\n"
        "[2026-11-27T18:14:21.474] CPUs=224 Boards=1 Sockets=2 Cores=56 Threads=2 "
        "Memory=24105\n")
    early = ("[2026-11-27T18:14:21.351] error: _forward_thread: failed to n2 "
             "(127.0.1.2:15510): Connection refused")
    late = early.replace("21.351", "21.475")
    unknown = early.replace("to n2 ", "to n3 ")
    other = "[2026-11-27T18:14:20.000] error: gres/gpu count reported lower than configured"
    (tmp_path / "log" / "slurmd-n1.log").write_text("\n".join([early, late, unknown, other]))
    assert fleet.fleet_log_errors(running, "slurmd-n1") == [late, unknown, other]
