"""Real consumer: slurmctld and slurmd 22.05 read every example's slurm.conf, gres.conf and
topology.conf, and report back exactly the plan's nodes, partitions, GPUs and switch tree."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from cluster_iac.emit import render_all
from cluster_iac.hostlist import expand, fold
from cluster_iac.plan import NodeTypePlan, Plan
from cluster_iac.render import build
from tests.conftest import EXAMPLE_IDS, ROOT, example_build
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.test_fabric import superpod_spec

pytestmark = pytest.mark.real

RETARGET = "@installed"  # suffix: the example re-targeted to the installed Slurm version
# Registration reasons that only say the test machine is smaller than the node.
MACHINE_REASONS = re.compile(r"^Low (RealMemory|TmpDisk)\b")


def _require_real() -> None:
    """Fail (never skip silently) when the daemons cannot run, unless a developer opted out."""
    if os.environ.get(harness.NO_REAL_ENV) == "1":
        pytest.skip(f"{harness.NO_REAL_ENV}=1: real Slurm tests switched off")
    missing = harness.missing_tools()
    if missing:
        pytest.fail(f"real Slurm tests need {', '.join(missing)}: apt-get install slurmctld "
                    f"slurmd slurm-client munge (or set {harness.NO_REAL_ENV}=1 to opt out)")


def _newer_than_installed() -> list[str]:
    """Examples that target a Slurm newer than the installed one (tested as-is and re-targeted)."""
    try:
        installed = harness.installed_version()
    except (OSError, harness.HarnessError):
        return []
    return [name for name in EXAMPLE_IDS
            if _version(example_build(name).plan.cluster.slurm_version) > installed]


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


# Fabrics no example has: a three-tier fat tree (pods under a core) and a plain (non-rail) one.
FABRICS: dict[str, Callable[[], dict[str, Any]]] = {
    "superpod-16su-3tier": lambda: superpod_spec(16),
    "superpod-2su-plain": lambda: superpod_spec(2, design="plain"),
}
CASES = EXAMPLE_IDS + [name + RETARGET for name in _newer_than_installed()] + list(FABRICS)


def _case_build(case: str, tmp: Path) -> Plan:
    """Render the case's slurm files into tmp/slurm; return its plan."""
    name, _, retarget = case.partition("@")
    if name in FABRICS:
        plan = compile_data(FABRICS[name]())
        files = render_all(plan)
    elif retarget:
        major, minor = harness.installed_version()
        text = (ROOT / "examples" / f"{name}.yaml").read_text()
        text, count = re.subn(r"(?m)^(\s*slurm_version:\s*).*$", rf'\g<1>"{major}.{minor:02d}"',
                              text)
        assert count == 1, f"{name}: no slurm_version line to re-target"
        spec = tmp / f"{name}.yaml"
        spec.write_text(text)
        built = build(spec)
        plan, files = built.plan, built.files
    else:
        built = example_build(name)
        plan, files = built.plan, built.files
    for rel, text in files.items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
    return plan


@pytest.fixture(scope="module", params=CASES)
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Plan, harness.SlurmCluster]]:
    """One slurmctld per example, shared by the tests below, stopped at the end."""
    _require_real()
    tmp = tmp_path_factory.mktemp(request.param.replace("@", "-"))
    plan = _case_build(request.param, tmp)
    (tmp / "run").mkdir()
    for cluster in harness.running(tmp / "slurm", tmp / "run"):
        yield plan, cluster


# --- what the plan says, computed from its node types (not from our slurm.conf) -------------


def _real_memory(plan: Plan, nt: NodeTypePlan) -> int:
    """The spec's memory headroom policy (spec/slurm.py): reserve a percentage, at least a floor."""
    slurm = plan.settings.slurm
    total_mib = nt.memory_gib * 1024
    return int(total_mib - max(slurm.memory_reserve_min_gib * 1024,
                               total_mib * slurm.memory_reserve_percent / 100))


def _expected_node(plan: Plan, nt: NodeTypePlan) -> dict[str, str]:
    return {
        "CPUTot": str(nt.sockets * nt.cores_per_socket * nt.threads_per_core),
        "Sockets": str(nt.sockets),
        "CoresPerSocket": str(nt.cores_per_socket),
        "ThreadsPerCore": str(nt.threads_per_core),
        "RealMemory": str(_real_memory(plan, nt)),
        "Gres": f"gpu:{nt.gres_type}:{nt.gpu_count}" if nt.gpu_count else "(null)",
    }


def _first_of_each_type(plan: Plan) -> dict[str, str]:
    """Node type -> its first node, for the types whose gres.conf slurmd can check here:
    AutoDetect=nvml cannot be, since Debian's Slurm is built without NVML (harness doc)."""
    firsts: dict[str, str] = {}
    for node in plan.compute_nodes:
        if plan.node_types[node.node_type].gres_autodetect != "nvml":
            firsts.setdefault(node.node_type, node.hostname)
    return firsts


# --- slurmctld: nodes, partitions, log ---------------------------------------------------------


def test_slurmctld_lists_exactly_the_plans_nodes(case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    nodes = {r["NodeName"]: r for r in cluster.records("nodes")}
    assert sorted(nodes) == sorted(n.hostname for n in plan.compute_nodes)
    for node in plan.compute_nodes:
        nt = plan.node_types[node.node_type]
        shown = nodes[node.hostname]
        got = {key: shown.get(key) for key in _expected_node(plan, nt)}
        assert got == _expected_node(plan, nt), node.hostname
        features = set(shown["AvailableFeatures"].split(","))
        assert {nt.name, *([nt.gres_type] if nt.gres_type else [])} <= features


def test_slurmctld_lists_exactly_the_plans_partitions(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    shown = {r["PartitionName"]: r for r in cluster.records("partitions")}
    assert sorted(shown) == sorted(p.name for p in plan.partitions)
    for part in plan.partitions:
        record = shown[part.name]
        assert sorted(expand(record["Nodes"])) == sorted(part.nodes), part.name
        assert record["Default"] == ("YES" if part.default else "NO"), part.name
        assert _minutes(record["MaxTime"]) == _minutes(part.max_time), part.name
        assert record["PriorityTier"] == str(part.priority_tier), part.name
        assert record["OverSubscribe"] == ("EXCLUSIVE" if part.exclusive else "NO"), part.name
    default = [p.name + "*" for p in plan.partitions if p.default]
    sinfo = cluster.run("sinfo", "-h", "-o", "%P %D").split()
    assert set(default) <= set(sinfo[0::2])


def _minutes(limit: str) -> int | None:
    """Slurm time limits ('UNLIMITED', 'INFINITE', 'D-HH:MM:SS', 'HH:MM:SS', 'MM') in minutes."""
    if limit in ("UNLIMITED", "INFINITE"):
        return None
    days, _, clock = limit.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if days:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, mins = (parts + [0])[:2]
    elif len(parts) == 3:  # HH:MM:SS
        hours, mins = parts[0], parts[1]
    else:  # MM, MM:SS
        hours, mins = 0, parts[0]
    return int(days or 0) * 1440 + hours * 60 + mins


def test_slurmctld_logs_no_error(case: tuple[Plan, harness.SlurmCluster]) -> None:
    _plan, cluster = case
    assert cluster.log_errors("slurmctld") == []


# --- slurmd: gres.conf on one registered node of each type --------------------------------------


def test_one_node_of_each_type_registers_with_its_gpus(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    for type_name, host in _first_of_each_type(plan).items():
        nt = plan.node_types[type_name]
        record = _register(cluster, nt, host)
        assert _gres_found(record) == _expected_node(plan, nt)["Gres"], host
        assert _unexplained_reasons(record) == [], (host, record.get("State"))
        assert cluster.log_errors(f"slurmd-{host}") == [], host


def test_slurmd_binds_each_gpu_to_its_sockets_cores(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    """`slurmd -G` per node type: every GPU once, of the plan's type, with Cores= the cores of
    the socket the plan puts it on (core IDs count up socket by socket)."""
    plan, cluster = case
    for type_name, host in _first_of_each_type(plan).items():
        nt = plan.node_types[type_name]
        records = cluster.gres_parse(host, nt.sockets, nt.cores_per_socket,
                                     nt.threads_per_core, nt.gpu_count)
        devices = [d for r in records for d in expand(r["File"])]
        assert sorted(devices) == sorted(f"/dev/nvidia{i}" for i in range(nt.gpu_count)), host
        for record in records:
            assert record["Name"] == "gpu" and record["Type"] == nt.gres_type, host
            gpus = [int(d.removeprefix("/dev/nvidia")) for d in expand(record["File"])]
            assert int(record["Count"]) == len(gpus), host
            if nt.gpu_sockets:
                cores = {c for g in gpus for c in _socket_cores(nt, nt.gpu_sockets[g])}
                assert _core_ids(record.get("Cores", "")) == cores, (host, record["File"])


def _socket_cores(nt: NodeTypePlan, socket: int) -> range:
    return range(socket * nt.cores_per_socket, (socket + 1) * nt.cores_per_socket)


def _core_ids(text: str) -> set[int]:
    """'0-55,112-167' -> the core IDs."""
    return {int(c[1:]) for c in expand(f"c[{text}]")} if text else set()


def test_one_gpu_missing_from_gres_conf_makes_the_node_invalid(
        case: tuple[Plan, harness.SlurmCluster], tmp_path: Path) -> None:
    """The same check must fail on a gres.conf with one GPU fewer (so the test above can fail)."""
    plan, cluster = case
    gpu_types = [(t, h) for t, h in _first_of_each_type(plan).items()
                 if plan.node_types[t].gpu_count]
    assert gpu_types, "every example has GPU nodes"
    type_name = gpu_types[0][0]
    host = [n.hostname for n in plan.compute_nodes if n.node_type == type_name][-1]
    broken = tmp_path / "etc"
    broken.mkdir()
    for path in cluster.conf.directory.iterdir():
        (broken / path.name).write_text(path.read_text())
    gres = broken / "gres.conf"
    gres.write_text(_one_gpu_fewer(gres.read_text(), host))
    record = _register(cluster, plan.node_types[type_name], host, broken)
    assert re.search(r"INVAL|DRAIN", record["State"]), record["State"]
    assert "gres/gpu count reported lower than configured" in record.get("Reason", "")


def _register(cluster: harness.SlurmCluster, nt: NodeTypePlan, host: str,
              conf_dir: Path | None = None) -> dict[str, str]:
    return cluster.register(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                            nt.gpu_count, conf_dir)


def _gres_found(record: dict[str, str]) -> str:
    """'gpu:h100:8(S:0-1)' -> 'gpu:h100:8': what slurmd found, without the socket affinity."""
    return re.sub(r"\(S:[^)]*\)", "", record["Gres"])


def _unexplained_reasons(record: dict[str, str]) -> list[str]:
    reason = re.sub(r"\s*\[[^\]]*@[^\]]*\]$", "", record.get("Reason", "").strip())
    return [part for part in filter(None, reason.split(", "))
            if not MACHINE_REASONS.match(part)]


def _one_gpu_fewer(text: str, host: str) -> str:
    """Drop the last GPU device from the last gres.conf line that covers host."""
    lines = text.splitlines()
    for i in reversed(range(len(lines))):
        fields = dict(f.split("=", 1) for f in lines[i].split() if "=" in f)
        if "File" in fields and host in expand(fields.get("NodeName", "")):
            match = re.fullmatch(r"(.*)\[(\d+)-(\d+)\]", fields["File"])
            assert match, f"cannot shorten {fields['File']}"
            first, last = int(match.group(2)), int(match.group(3))
            fewer = f"{match.group(1)}[{first}-{last - 1}]" if last - 1 > first \
                else f"{match.group(1)}{first}"
            lines[i] = lines[i].replace(f"File={fields['File']}", f"File={fewer}")
            return "\n".join(lines) + "\n"
    raise AssertionError(f"no gres.conf File= line covers {host}")


# --- topology.conf: the switch tree slurmctld sees is the compute fabric graph's -----------------


def test_topology_matches_the_compute_fabric(case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    switches = cluster.topology()
    has_topology = (cluster.conf.directory / "topology.conf").exists()
    if "compute" not in plan.fabrics or plan.settings.slurm.topology == "none":
        assert not switches
        return
    assert has_topology, "the plan has a compute fabric but no slurm/topology.conf was rendered"
    if any("topology/block" in line for line in cluster.conf.overrides):
        pytest.skip("topology/block needs Slurm 23.11, installed is "
                    "{}.{:02d}: the tree is tested on the {} case".format(
                        *harness.installed_version(), RETARGET))
    if "TopologyPlugin=topology/block" in cluster.conf.path.read_text():
        _assert_blocks(plan, cluster.topology("BlockName"))
        return
    expected = _expected_levels(plan)
    levels: dict[int, dict[str, frozenset[str]]] = {}
    for name, record in switches.items():
        levels.setdefault(int(record["Level"]), {})[name] = frozenset(expand(record["Nodes"]))
    assert sorted(levels) == list(range(len(expected)))
    for level, groups in enumerate(expected):
        shown = sorted(fold(nodes) for nodes in levels[level].values())
        cabled = sorted(fold(nodes) for nodes in groups)
        assert shown == cabled, f"level {level}: slurmctld's switches vs the graph's cabling"
    _assert_first_level_names(plan, levels[0])
    _assert_children(switches, levels)


def _assert_blocks(plan: Plan, blocks: dict[str, dict[str, str]]) -> None:
    """topology/block (Slurm 23.11+; not installed here, so this path is untried): one block
    per rack-scale NVLink domain, holding that domain's Slurm nodes."""
    hosts = {n.hostname for n in plan.compute_nodes}
    expected = sorted(fold(set(d.nodes) & hosts) for d in plan.nvlink_domains if d.kind == "rack")
    assert sorted(fold(expand(b["Nodes"])) for b in blocks.values()) == expected


def _expected_levels(plan: Plan) -> list[set[frozenset[str]]]:
    """Node sets per level, from the graph: the first level holds whole nodes (components of
    the node-leaf cabling: a leaf, or a scalable unit's rail leaves); each next level joins
    what the leaf-spine cabling connects; a core tier joins everything."""
    graph = plan.graphs["compute"]
    fabric = plan.fabrics["compute"]
    hosts = {n.hostname for n in plan.compute_nodes}

    def groups(edge_tier: str, members: set[str]) -> list[set[str]]:
        sub = nx.Graph()
        sub.add_edges_from((a, b) for a, b, tier in graph.edges(data="tier")
                           if tier == edge_tier and {a, b} <= members)
        return [set(c) for c in nx.connected_components(sub)]

    leaves = {n for n, tier in graph.nodes(data="tier") if tier == "leaf"}
    first = [c & hosts for c in groups("node-leaf", hosts | leaves) if c & hosts]
    levels = [{frozenset(c) for c in first}]
    if fabric.tiers >= 2:
        leaf_of = {leaf: frozenset(g) for g in first for h in g for leaf in graph[h]
                   if leaf in leaves}
        spines = {n for n, tier in graph.nodes(data="tier") if tier == "spine"}
        pods = groups("leaf-spine", leaves | spines)
        levels.append({frozenset().union(*(leaf_of[x] for x in pod if x in leaf_of))
                       for pod in pods} - {frozenset()})
    if fabric.tiers >= 3:
        levels.append({frozenset(hosts)})
    return levels


def _assert_first_level_names(plan: Plan, first: dict[str, frozenset[str]]) -> None:
    """A first-level switch that is one leaf carries the leaf's name; a scalable unit's
    switch must not borrow the name of a real switch."""
    graph = plan.graphs["compute"]
    for name, nodes in first.items():
        leaves = {leaf for h in nodes for leaf in graph[h]
                  if graph.nodes[leaf].get("tier") == "leaf"}
        if len(leaves) == 1:
            assert name == next(iter(leaves))
        else:
            assert name not in graph, f"{name} names a real switch but stands for {len(leaves)}"


def _assert_children(switches: dict[str, dict[str, str]],
                     levels: dict[int, dict[str, frozenset[str]]]) -> None:
    """Each upper switch's child switches are one level down and hold exactly its nodes."""
    for level in sorted(levels)[1:]:
        for name, nodes in levels[level].items():
            children = expand(switches[name].get("Switches", ""))
            assert children and all(c in levels[level - 1] for c in children), name
            assert frozenset().union(*(levels[level - 1][c] for c in children)) == nodes, name
