"""Real consumer: slurmctld and slurmd of Slurm 22.05, 24.11 and 26.05 read every example's
slurm.conf, gres.conf and topology files, and report back exactly the plan's nodes, partitions,
GPUs and topology.

The matrix: each example rendered for its own target and for each newer measured release
(catalog/slurm_releases.py MEASURED), run on every available release at least as new as the
target: Debian 12's own 22.05, and 24.11 and 26.05 from the Debian roots that .ci/install-deps
builds (under CI=true a missing root fails). The terminal summary prints the matrix
(tests/real/conftest.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from cluster_iac.base.hostlist import expand, fold
from cluster_iac.catalog.mig import cap_minor
from cluster_iac.catalog.slurm_releases import MEASURED, parse_version
from cluster_iac.emit import render_all
from cluster_iac.plan import NodeTypePlan, Plan
from cluster_iac.plan.mig import gres_counts
from tests.conftest import EXAMPLE_IDS
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.matrix import MATRIX
from tests.slurm_fixtures import example_data
from tests.test_fabric import superpod_spec
from tests.test_slurm_versions import _mixed

pytestmark = pytest.mark.real

# Registration reasons that only say the test machine is smaller than the node.
MACHINE_REASONS = re.compile(r"^Low (RealMemory|TmpDisk)\b")


def _runtimes() -> tuple[dict[str, harness.Runtime], list[str]]:
    """The releases this machine can run, by name, and what is missing."""
    found: dict[str, harness.Runtime] = {}
    missing: list[str] = []
    host = harness.host_runtime() if not harness.missing_tools() else None
    if host is None:
        missing.append("Debian 12's slurmctld slurmd slurm-client")
    else:
        found[host.name] = host
    roots, absent = harness.root_runtimes()
    found.update({r.name: r for r in roots})
    return found, missing + absent


RUNTIMES, MISSING = _runtimes()

# Specs no example has: a three-tier fat tree (pods under a core), a plain (non-rail) fabric,
# and GB200 racks beside H100 nodes (per-partition topology.yaml on 25.05+).
SPECS: dict[str, Callable[[str], dict[str, Any]]] = {
    "superpod-16su-3tier": lambda v: {**superpod_spec(16), "cluster": {
        "name": "superpod", "slurm_version": v}},
    "superpod-2su-plain": lambda v: {**superpod_spec(2, design="plain"), "cluster": {
        "name": "superpod", "slurm_version": v}},
    "gb200-beside-h100": lambda v: _mixed(v),
    "gb200-uneven-racks": lambda v: _uneven(v),
    "partitions-of-some-nodes": lambda v: _some_nodes(v),
}
SPEC_TARGETS = {"superpod-16su-3tier": ["22.05"], "superpod-2su-plain": ["22.05"],
                "gb200-beside-h100": ["26.05"], "gb200-uneven-racks": ["24.11"],
                "partitions-of-some-nodes": ["22.05"]}


def _some_nodes(version: str) -> dict[str, Any]:
    """Partitions of a hostlist and of the first node of a group, beside the whole group."""
    data = example_data("minimal", version)
    data["slurm"]["partitions"][0]["default"] = True  # one of three: it is not by itself
    data["slurm"]["partitions"] += [{"name": "debug", "nodes": "gpu02"},
                                    {"name": "first", "nodes": [{"group": "gpu", "count": 1}]}]
    return data


def _uneven(version: str) -> dict[str, Any]:
    """NVL72 racks of 18, 18, 18 and 16 trays: 24.11 refuses a block smaller than the first
    unless BlockSizes says the base block is 16."""
    data = example_data("gb200-nvl72", version)
    data["node_groups"][0]["count"] = 70
    return data


def _matrix() -> list[str]:
    """'example@target/release' for every cell of the matrix."""
    cases = []
    for name in EXAMPLE_IDS + list(SPECS):
        own = example_data(name)["cluster"].get("slurm_version", "22.05") \
            if name in EXAMPLE_IDS else SPEC_TARGETS[name][0]
        targets = [own] + [v for v in MEASURED if parse_version(v) > parse_version(own)]
        if name in SPECS:
            targets = SPEC_TARGETS[name]
        for target in targets:
            cases += [f"{name}@{target}/{release}" for release in MEASURED
                      if parse_version(release) >= parse_version(target)]
    return cases


CASES = _matrix()


def _require(release: str) -> harness.Runtime:
    """The release's runtime; fail (never skip silently) when it is missing, unless a
    developer opted out (outside CI only)."""
    if os.environ.get(harness.NO_REAL_ENV) == "1" and os.environ.get("CI") != "true":
        pytest.skip(f"{harness.NO_REAL_ENV}=1: real Slurm tests switched off")
    if release not in RUNTIMES:
        pytest.fail(f"real Slurm {release} is not available ({'; '.join(MISSING)}): run "
                    f".ci/install-deps (or set {harness.NO_REAL_ENV}=1 to opt out)")
    return RUNTIMES[release]


def _case_build(name: str, target: str, tmp: Path) -> Plan:
    """Render the case's slurm files for ``target`` into tmp/slurm; return its plan."""
    data = SPECS[name](target) if name in SPECS else example_data(name, target)
    plan = compile_data(data)
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
    return plan


@pytest.fixture(scope="module", params=CASES)
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Plan, harness.SlurmCluster]]:
    """One slurmctld per cell, shared by the tests below, stopped at the end."""
    cell = request.param
    name, _, rest = cell.partition("@")
    target, _, release = rest.partition("/")
    runtime = _require(release)
    tmp = tmp_path_factory.mktemp(re.sub(r"[@/.]", "-", cell))
    plan = _case_build(name, target, tmp)
    (tmp / "run").mkdir()
    MATRIX.record(cell, "starts", False)
    for cluster in harness.running(tmp / "slurm", tmp / "run", runtime):
        MATRIX.record(cell, "starts", True)
        cluster.label = cell
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
        "Gres": ",".join(f"gpu:{t}:{n}" for t, n in gres_counts(
            nt.gres_type, nt.gpu_count, nt.mig).items()) if nt.gpu_count else "(null)",
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
    MATRIX.record(cluster.label, "nodes", False)
    nodes = {r["NodeName"]: r for r in cluster.records("nodes")}
    assert sorted(nodes) == sorted(n.hostname for n in plan.compute_nodes)
    for node in plan.compute_nodes:
        nt = plan.node_types[node.node_type]
        shown = nodes[node.hostname]
        got = {key: shown.get(key) for key in _expected_node(plan, nt)}
        assert got == _expected_node(plan, nt), node.hostname
        features = set(shown["AvailableFeatures"].split(","))
        assert {nt.name, *([nt.gres_type] if nt.gres_type else [])} <= features
    MATRIX.record(cluster.label, "nodes", True)


def test_slurmctld_lists_exactly_the_plans_partitions(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    MATRIX.record(cluster.label, "partitions", False)
    shown = {r["PartitionName"]: r for r in cluster.records("partitions")}
    assert sorted(shown) == sorted(p.name for p in plan.partitions)
    for part in plan.partitions:
        record = shown[part.name]
        assert sorted(expand(record["Nodes"])) == sorted(part.nodes), part.name
        assert record["Default"] == ("YES" if part.default else "NO"), part.name
        assert _minutes(record["MaxTime"]) == _minutes(part.max_time), part.name
        assert record["PriorityTier"] == str(part.priority_tier), part.name
        # 26.05 shows OverSubscribe=EXCLUSIVE as Exclusive=NODE, whichever the file says
        exclusive = record["OverSubscribe"] == "EXCLUSIVE" or record.get("Exclusive") == "NODE"
        assert exclusive == part.exclusive, part.name
        assert record.get("Topology", "(null)") in (
            plan.slurm.partition_topology.get(part.name, "(null)"), "fabric"), part.name
    default = [p.name + "*" for p in plan.partitions if p.default]
    sinfo = cluster.run("sinfo", "-h", "-o", "%P %D").split()
    assert set(default) <= set(sinfo[0::2])
    MATRIX.record(cluster.label, "partitions", True)


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
    MATRIX.record(cluster.label, "log clean", False)
    assert cluster.log_errors("slurmctld") == []
    MATRIX.record(cluster.label, "log clean", True)


# --- slurmd: gres.conf on one registered node of each type --------------------------------------


def test_one_node_of_each_type_registers_with_its_gpus(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    plan, cluster = case
    MATRIX.record(cluster.label, "gpus", False)
    hosts = _first_of_each_type(plan)
    for type_name, host in hosts.items():
        nt = plan.node_types[type_name]
        record = _register(cluster, nt, host)
        assert _gres_found(record) == _expected_node(plan, nt)["Gres"], host
        assert _unexplained_reasons(record) == [], (host, record.get("State"))
    MATRIX.record(cluster.label, "gpus", True)
    # the registrations' log lines, slurmd's and slurmctld's: none the sandbox does not explain
    errors = [e for host in hosts.values() for e in cluster.log_errors(f"slurmd-{host}")]
    errors += cluster.log_errors("slurmctld")
    if errors:
        MATRIX.record(cluster.label, "log clean", False)
    assert errors == []


def test_slurmd_binds_each_gpu_to_its_sockets_cores(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    """`slurmd -G` per node type: every GPU once, of the plan's type, with Cores= the cores of
    the socket the plan puts it on (core IDs count up socket by socket)."""
    plan, cluster = case
    for type_name, host in _first_of_each_type(plan).items():
        nt = plan.node_types[type_name]
        records = cluster.gres_parse(host, nt.sockets, nt.cores_per_socket,
                                     nt.threads_per_core, nt.gpu_count, mig_caps(nt))
        mig = [r for r in records if r["Type"] != nt.gres_type]
        records = [r for r in records if r["Type"] == nt.gres_type]
        assert sorted((r["Type"], r["File"], r["Count"], r.get("Cores", "")) for r in mig) \
            == sorted((d.gres_type, ",".join(d.files), "1", _cores_text(nt, d.gpu))
                      for d in nt.mig), host
        whole = sorted(set(range(nt.gpu_count)) - {d.gpu for d in nt.mig})
        devices = [d for r in records for d in expand(r["File"])]
        assert sorted(devices) == sorted(f"/dev/nvidia{i}" for i in whole), host
        for record in records:
            assert record["Name"] == "gpu" and record["Type"] == nt.gres_type, host
            gpus = [int(d.removeprefix("/dev/nvidia")) for d in expand(record["File"])]
            assert int(record["Count"]) == len(gpus), host
            if nt.gpu_sockets:
                cores = {c for g in gpus for c in _socket_cores(nt, nt.gpu_sockets[g])}
                assert _core_ids(record.get("Cores", "")) == cores, (host, record["File"])


def _cores_text(nt: NodeTypePlan, gpu: int) -> str:
    """'0-55': the cores of the socket a GPU hangs off, as slurmd -G prints them."""
    cores = _socket_cores(nt, nt.gpu_sockets[gpu]) if nt.gpu_sockets else range(0)
    return f"{cores.start}-{cores.stop - 1}" if cores else ""


def _socket_cores(nt: NodeTypePlan, socket: int) -> range:
    return range(socket * nt.cores_per_socket, (socket + 1) * nt.cores_per_socket)


def _core_ids(text: str) -> set[int]:
    """'0-55,112-167' -> the core IDs."""
    return {int(c[1:]) for c in expand(f"c[{text}]")} if text else set()


def test_one_gpu_missing_from_gres_conf_makes_the_node_invalid(
        case: tuple[Plan, harness.SlurmCluster]) -> None:
    """The same check must fail on a gres.conf with one GPU fewer (so the test above can fail)."""
    plan, cluster = case
    gpu_types = [(t, h) for t, h in _first_of_each_type(plan).items()
                 if plan.node_types[t].gpu_count]
    assert gpu_types, "every example has GPU nodes"
    type_name = gpu_types[0][0]
    host = [n.hostname for n in plan.compute_nodes if n.node_type == type_name][-1]
    broken = cluster.work / "etc-one-gpu-fewer"  # inside the work dir a root's sandbox maps
    broken.mkdir()
    for path in cluster.conf.slurmd_directory.iterdir():
        (broken / path.name).write_text(path.read_text())
    gres = broken / "gres.conf"
    gres.write_text(_one_gpu_fewer(gres.read_text(), host))
    record = _register(cluster, plan.node_types[type_name], host, broken)
    assert re.search(r"INVAL|DRAIN", record["State"]), record["State"]
    assert "gres/gpu count reported lower than configured" in record.get("Reason", "")


def _register(cluster: harness.SlurmCluster, nt: NodeTypePlan, host: str,
              conf_dir: Path | None = None) -> dict[str, str]:
    return cluster.register(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                            nt.gpu_count, conf_dir, mig_caps(nt))


def mig_caps(nt: NodeTypePlan) -> tuple[int, ...]:
    """The MIG capability minors of the node type's instances (their stand-in devices)."""
    return tuple(sorted({cap_minor(d.gpu, d.gi, ci) for d in nt.mig for ci in (None, 0)}))


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
    MATRIX.record(cluster.label, "topology", False)
    kind = plan.slurm.topology
    files = {p.name for p in cluster.conf.directory.iterdir()}
    assert ("topology.yaml" in files) == (kind == "per-partition")
    assert ("topology.conf" in files) == (kind in ("tree", "block"))
    if kind == "none":
        assert not cluster.topology()
    elif kind == "block":
        _assert_blocks(plan, cluster.topology("BlockName"))
    elif kind == "per-partition":
        _assert_blocks(plan, cluster.topology("BlockName", "nvlink"))
        _assert_tree(plan, cluster.topology("SwitchName", "fabric"))
    else:
        _assert_tree(plan, cluster.topology())
    MATRIX.record(cluster.label, "topology", True)


def _assert_tree(plan: Plan, switches: dict[str, dict[str, str]]) -> None:
    """The switch levels slurmctld reports are the fabric graph's, named as the plan names
    them."""
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
    """topology/block: one block per rack-scale NVLink domain, holding that domain's Slurm
    nodes."""
    hosts = {n.hostname for n in plan.compute_nodes}
    expected = sorted(fold(set(d.nodes) & hosts) for d in plan.nvlink_domains if d.kind == "rack")
    assert sorted(fold(expand(b["Nodes"])) for b in blocks.values()) == expected


def _expected_levels(plan: Plan) -> list[set[frozenset[str]]]:
    """Node sets per level, from the graph: the first level holds whole nodes (components of
    the node-leaf cabling: a leaf, or a scalable unit's rail leaves); each next level joins
    what the leaf-spine cabling connects; a core tier joins everything."""
    graph = plan.fabric_wiring["compute"].graph
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
    graph = plan.fabric_wiring["compute"].graph
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
