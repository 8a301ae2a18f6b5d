"""Real consumer: `sbatch --test-only` of real slurmctld 22.05, 24.11 and 26.05 reads every
acceptance job (emit/acceptance.py) against the example's own slurm.conf, and answers where
it would start it: the partition, node list, node count and time limit of each script resolve
to the plan's nodes.

The sandbox is tests/real/slurm_harness.py's (its rewrites, each with its reason), with one
addition: ``SlurmdParameters=config_overrides``, since --test-only only places a job on nodes
that are up, so every node of the spec registers with a real slurmd of its own (each on its
loopback address, CPU topology faked, GPU stand-ins), and the test machine is smaller than
the nodes (a node registered 'Low RealMemory' would be drained). The specs are those whose
nodes this machine can register at once: the 64-GPU seed and a two-unit SuperPOD of four-node
units (its leaf-to-leaf jobs included). A missing release fails under CI=true
(test_slurm_real._require)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.emit import render_all
from cluster_iac.hostlist import expand
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _require
from tests.slurm_fixtures import example_data
from tests.test_fabric import superpod_spec

pytestmark = pytest.mark.real

SPECS: dict[str, Callable[[], dict[str, Any]]] = {
    "seed-64gpu-h100": lambda: example_data("seed-64gpu-h100"),
    "superpod-2su-of-4": lambda: superpod_spec(2, nodes_per_su=4, scalable_unit_nodes=4),
}
RELEASES = ("22.05", "24.11", "26.05")
OVERRIDES = "SlurmdParameters=config_overrides"
# sbatch --test-only's answer (src/sbatch/sbatch.c): "Job N to start at T using P processors on
# nodes LIST in partition P"; 26.05 writes one more word after the time
STARTS = re.compile(r"Job \d+ to start at \S+(?: \S+)? using \d+ processors on nodes (\S+) "
                    r"in partition (\S+)")


@pytest.fixture(scope="module", params=[f"{s}@{r}" for s in SPECS for r in RELEASES])
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[dict[str, str], harness.SlurmCluster]]:
    name, _, release = request.param.partition("@")
    runtime = _require(release)
    tmp = tmp_path_factory.mktemp(re.sub(r"[@.]", "-", request.param))
    plan = compile_data(SPECS[name]())
    files = render_all(plan)
    (tmp / "run").mkdir()
    for rel, text in files.items():
        # the scripts inside the sandbox's work dir: a root's release sees only that one
        out = tmp / "run" / rel if rel.startswith("acceptance/") else tmp / rel
        if rel.startswith(("slurm/", "acceptance/")):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
    scripts = {rel: str(tmp / "run" / rel) for rel in files
               if rel.startswith("acceptance/") and rel.endswith(".sbatch")}
    conf = harness.prepare(tmp / "slurm", tmp / "run", runtime)
    for path in (conf.path, conf.slurmd_path):
        lines = path.read_text().splitlines()
        lines.insert(harness._first_node_line(lines), OVERRIDES)
        path.write_text("\n".join(lines) + "\n")
    running = harness.SlurmCluster(conf, tmp / "run", runtime)
    try:
        running.start()
        _register_all(running, plan)
        yield scripts, running
    finally:
        running.stop()


def _register_all(cluster: harness.SlurmCluster, plan: Plan) -> None:
    """Each compute node registers with a real slurmd of its own, one after another (they
    would share this machine's SlurmdPort): slurmctld keeps a registered node up until its
    next ping fails, SlurmdTimeout / 3 later at the soonest, and the scripts are submitted
    within that time (the test asserts that every node is still up after them)."""
    for node in plan.compute_nodes:
        nt = plan.node_types[node.node_type]
        cluster.register(node.hostname, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                         nt.gpu_count)


def test_sbatch_test_only_accepts_every_acceptance_job(
        cluster: tuple[dict[str, str], harness.SlurmCluster]) -> None:
    scripts, running = cluster
    assert scripts
    for rel, path in sorted(scripts.items()):
        result = running._client("sbatch", "--test-only", path)
        found = STARTS.search(result.stderr + result.stdout)
        assert result.returncode == 0 and found, f"{rel}: {result.stderr.strip()}"
        assert sorted(expand(found.group(1))) == sorted(expand(_directive(path, "nodelist"))), rel
        assert found.group(2) == _directive(path, "partition"), rel
    down = [r["NodeName"] for r in running.records("nodes") if "NOT_RESPONDING" in r["State"]]
    assert not down, f"nodes stopped answering before the scripts were submitted: {down}"


def _directive(path: str, key: str) -> str:
    match = re.search(rf"^#SBATCH --{key}=(\S+)$", Path(path).read_text(), re.M)
    assert match, f"{path} has no --{key}"
    return match.group(1)
