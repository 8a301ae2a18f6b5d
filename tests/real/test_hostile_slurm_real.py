"""Real consumer of the hostile render: slurmctld (and slurmd -G) of Slurm 22.05, 24.11 and
26.05 read the slurm.conf, gres.conf, cgroup.conf and topology.conf rendered from the spec whose
every string is hostile (tests/test_hostile_render.py), each rendered for the release that reads
it, and show back exactly the nodes, partitions, switches and GPUs the spec names, with the
hostile slurm.extra values carried verbatim and only where the spec put them.

The harness (slurm_harness.py) rewrites only the sandbox's needs, each with its reason in
overrides.txt; the hostile lines are kept as emitted. Under CI=true a missing release fails.
Hostile text in a field the vocabulary forbids it in is refused with a located error before
anything is rendered: tests/test_hostile_render.py, test_slurm_fields_refuse_injection."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from cluster_iac.base.hostlist import expand
from cluster_iac.catalog.slurm_releases import MEASURED
from cluster_iac.render import Build, build
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _require
from tests.test_hostile_render import SLURM_EXTRA, hostile_spec

pytestmark = pytest.mark.real

# What the spec names, read off the spec text (not the plan): node groups g.p-u_1 ('gpu-##',
# 2 nodes), evil ('e#', 1 node) in partition gpu.x-y_z; one leaf switch for the five hosts
# on the compute fabric (three GPU nodes, the MDS and the OSS: only Slurm nodes are listed).
NODES = {"gpu-01", "gpu-02", "e1"}
PARTITIONS = {"gpu.x-y_z": NODES}
GRES = {"gpu-01": "gpu:h100_80gb_hbm3:8", "gpu-02": "gpu:h100_80gb_hbm3:8",
        "e1": "gpu:h100.x-y_z:8"}
FEATURES = {"gpu-01": {"gpu", "h100_80gb_hbm3", "a.b-c_d", "x_"},
            "gpu-02": {"gpu", "h100_80gb_hbm3", "a.b-c_d", "x_"},
            "e1": {"evil", "h100.x-y_z"}}
HOSTILE = re.compile(r"(Node|Partition)Name=evil|reboot")


@pytest.fixture(scope="module", params=MEASURED)
def hostile(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Build, harness.SlurmCluster]]:
    """The hostile spec rendered for one release, read by that release's slurmctld."""
    release = request.param
    runtime = _require(release)
    tmp = tmp_path_factory.mktemp(f"hostile-{release}")
    (tmp / "spec.yaml").write_text(hostile_spec(release), encoding="utf-8")
    result = build(tmp / "spec.yaml", emit=True)
    for rel, text in result.files.items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
    assert {"slurm.conf", "gres.conf", "cgroup.conf", "topology.conf"} <= {
        p.name for p in (tmp / "slurm").iterdir()}
    (tmp / "run").mkdir()
    for cluster in harness.running(tmp / "slurm", tmp / "run", runtime):
        yield result, cluster


def test_the_hostile_values_are_in_the_file_slurmctld_read(
        hostile: tuple[Build, harness.SlurmCluster]) -> None:
    """Else the tests below prove nothing: the harness kept every hostile line as rendered
    and rewrote none of their keys."""
    _, cluster = hostile
    read = cluster.conf.path.read_text()
    hostile_lines = [line for line in read.splitlines() if HOSTILE.search(line)]
    assert len(hostile_lines) == len(SLURM_EXTRA)
    assert not any(key in o for o in cluster.conf.overrides for key in SLURM_EXTRA)


def test_slurmctld_lists_exactly_the_spec_nodes(
        hostile: tuple[Build, harness.SlurmCluster]) -> None:
    _, cluster = hostile
    nodes = {r["NodeName"]: r for r in cluster.records("nodes")}
    assert set(nodes) == NODES
    for name, record in nodes.items():
        assert record["Gres"] == GRES[name], name
        assert set(record["AvailableFeatures"].split(",")) == FEATURES[name], name
    for kind in ("node", "partition"):
        missing = cluster._client("scontrol", "show", kind, "evil")
        said = (missing.stdout + missing.stderr).lower()  # 22.05: stderr; a chroot's: stdout
        assert missing.returncode != 0 and "evil not found" in said, (kind, said)


def test_slurmctld_lists_exactly_the_spec_partitions(
        hostile: tuple[Build, harness.SlurmCluster]) -> None:
    _, cluster = hostile
    shown = {r["PartitionName"]: set(expand(r["Nodes"])) for r in cluster.records("partitions")}
    assert shown == PARTITIONS


def test_slurmctld_reads_the_extra_values_verbatim_and_nowhere_else(
        hostile: tuple[Build, harness.SlurmCluster]) -> None:
    """`scontrol show config`: each slurm.extra value exactly as the spec wrote it ('#', '\\',
    quotes and blanks included), and the hostile text in no other key."""
    _, cluster = hostile
    config = _config(cluster.scontrol("show", "config"))
    assert {key: config.get(key) for key in SLURM_EXTRA} == SLURM_EXTRA
    carriers = {key for key, value in config.items() if HOSTILE.search(value)}
    assert carriers == set(SLURM_EXTRA)


def test_slurmctld_reads_cgroup_conf_as_rendered(
        hostile: tuple[Build, harness.SlurmCluster]) -> None:
    """slurmctld shows cgroup.conf in `scontrol show config`: every key we wrote, with our
    value (Slurm prints yes/no in lower case)."""
    result, cluster = hostile
    config = _config(cluster.scontrol("show", "config"))
    written = dict(line.split("=", 1) for line in result.files["slurm/cgroup.conf"].splitlines()
                   if line and not line.startswith("#"))
    assert written
    assert {key: config.get(key, "").lower() for key in written} == {
        key: value.lower() for key, value in written.items()}


def test_slurmctld_topology_is_the_one_leaf(hostile: tuple[Build, harness.SlurmCluster]) -> None:
    result, cluster = hostile
    switches = cluster.topology()
    graph = result.plan.fabric_wiring["compute"].graph
    leaves = [n for n, tier in graph.nodes(data="tier") if tier == "leaf"]
    assert list(switches) == leaves and len(leaves) == 1
    assert set(expand(switches[leaves[0]]["Nodes"])) == NODES


def test_slurmd_reads_the_hostile_gres_types(hostile: tuple[Build, harness.SlurmCluster]) -> None:
    """`slurmd -G` per node type: gres.conf gives each node its eight GPUs of the spec's type
    (the hostile catalog GPU's gres_type on e1)."""
    result, cluster = hostile
    for host in ("gpu-01", "e1"):
        node = next(n for n in result.plan.compute_nodes if n.hostname == host)
        nt = result.plan.node_types[node.node_type]
        records = cluster.gres_parse(host, nt.sockets, nt.cores_per_socket,
                                     nt.threads_per_core, nt.gpu_count)
        assert {r["Type"] for r in records} == {GRES[host].split(":")[1]}, host
        assert sum(int(r["Count"]) for r in records) == 8, host


def test_slurmctld_logs_no_error(hostile: tuple[Build, harness.SlurmCluster]) -> None:
    _, cluster = hostile
    assert cluster.log_errors("slurmctld") == []


def _config(text: str) -> dict[str, str]:
    """`scontrol show config` lines 'Key    = value' -> {key: value} (value verbatim)."""
    config = {}
    for line in text.splitlines():
        match = re.match(r"(\w+)\s+= (.*)$", line)
        if match:
            config[match[1]] = match[2]
    return config

