"""Slurm: check what the spec asks of the targeted release, and decide the topology."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, Severity, SpecPath
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.catalog.slurm_releases import (
    MEASURED,
    SlurmRelease,
    slurm_conf_keys,
    slurm_release,
)
from cluster_iac.plan import Plan
from cluster_iac.plan.durations import DurationError, time_limit_seconds
from cluster_iac.plan.slurm import (
    BLOCK_TOPOLOGY,
    SLURM_TIME,
    TIME_FORMATS,
    Block,
    SlurmPlan,
    owned_key,
    value_problem,
)
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.base import shown

TOPOLOGY: SpecPath = ("slurm", "topology")


def plan_slurm(spec: ClusterSpec, plan: Plan) -> Plan:
    """The release's facts, the topology, and slurm.extra checked against the release."""
    release = slurm_release(plan.cluster.slurm_version)
    problems = list(_time_problems(spec))
    extra_findings = list(_extra_problems(spec, release))
    topology, topo_problems = _topology(spec, plan, release)
    problems += [d for d in extra_findings if d.is_error] + topo_problems
    if problems:
        raise CompileError(problems)
    blocks = _blocks(plan) if topology in ("block", "per-partition") else ()
    slurm = SlurmPlan(
        release=release, topology=topology, blocks=_order(blocks, release),
        block_size=min(len(b.nodes) for b in blocks) if blocks else None,
        partition_topology=_partition_topology(plan, blocks) if topology == "per-partition"
        else {},
        extra=tuple((key, str(value)) for key, value in spec.slurm.extra.items()),
        findings=tuple(d for d in extra_findings if not d.is_error),
    )
    return replace(plan, slurm=slurm)


# --- partition time limits ---------------------------------------------------------------------


def _time_problems(spec: ClusterSpec) -> Iterator[Diagnostic]:
    for i, part in enumerate(spec.slurm.partitions):
        path = ("slurm", "partitions", i, "max_time")
        if not SLURM_TIME.fullmatch(part.max_time):
            yield Diagnostic("SLURM-TIME", f"partition '{part.name}': max_time "
                             f"{shown(part.max_time)} is not a Slurm time limit", path,
                             hint="write one of " + ", ".join(TIME_FORMATS)
                             + " (e.g. '7-00:00:00' or '04:00:00')")
            continue
        try:
            time_limit_seconds(part.max_time)
        except DurationError as exc:
            yield Diagnostic("SLURM-TIME", f"partition '{part.name}': max_time {exc}", path,
                             hint="INFINITE is the way to say no limit")


# --- slurm.extra --------------------------------------------------------------------------------


def _extra_problems(spec: ClusterSpec, release: SlurmRelease) -> Iterator[Diagnostic]:
    """Each key a slurm.conf key of the release and not one a spec field sets; each value one
    line that slurm.conf can carry. Keys are compared as Slurm does, ignoring case."""
    seen: dict[str, str] = {}
    for key, value in spec.slurm.extra.items():
        path: SpecPath = ("slurm", "extra", key)
        yield from _key_problems(key, path, release)
        if key.lower() in seen:
            yield Diagnostic("SLURM-EXTRA-DUPLICATE", f"slurm.extra sets '{key}' and "
                             f"'{seen[key.lower()]}': Slurm reads keys ignoring case, so "
                             "the later would silently win", path)
        seen[key.lower()] = key
        problem = value_problem(str(value))
        if problem:
            yield Diagnostic("SLURM-EXTRA-VALUE", f"slurm.extra.{key}: the value {problem}",
                             path, hint="a slurm.conf value is one line; blanks are allowed, "
                             "and then no double quote")


def _key_problems(key: str, path: SpecPath, release: SlurmRelease) -> Iterator[Diagnostic]:
    owned = owned_key(key)
    if owned is not None:
        name, spec_field = owned
        yield Diagnostic("SLURM-EXTRA-OWNED", f"slurm.extra cannot set {name}: the tool writes "
                         f"it from {spec_field}", path, hint=f"set {spec_field} instead")
        return
    known = slurm_conf_keys()
    entry = known.get(key.lower())
    status = release.key_status(key)
    if entry is None:
        names = [k.name for k in known.values() if release.key_status(k.name) != "no"]
        yield Diagnostic("SLURM-EXTRA-KEY", f"'{key}' is not a slurm.conf key of Slurm "
                         f"{release.version}: slurmctld would refuse to start", path,
                         hint=did_you_mean(key, names))
    elif status == "no":
        yield Diagnostic("SLURM-EXTRA-KEY", f"Slurm {release.version} has no slurm.conf key "
                         f"'{entry.name}' ({_span(entry.added, entry.removed)}): slurmctld "
                         "would refuse to start", path,
                         hint="change cluster.slurm_version, or drop the key")
    elif status == "unsure":
        yield Diagnostic("SLURM-EXTRA-KEY-UNSURE", f"whether Slurm {release.version} reads "
                         f"'{entry.name}' is not known ({_span(entry.added, entry.removed)}; "
                         f"the key table was measured on Slurm {', '.join(MEASURED)})", path,
                         severity=Severity.WARNING)
    if entry is not None and status != "no" and entry.name != key:
        yield Diagnostic("SLURM-EXTRA-CASE", f"slurm.extra key '{key}' is written "
                         f"'{entry.name}' in slurm.conf(5)", path, severity=Severity.WARNING,
                         hint=f"write {entry.name}")


def _span(added: tuple[tuple[int, int], tuple[int, int]],
          removed: tuple[tuple[int, int], tuple[int, int]] | None) -> str:
    def text(rng: tuple[tuple[int, int], tuple[int, int]]) -> str:
        low, high = (f"{v[0]}.{v[1]:02d}" for v in rng)
        return low if low == high else f"between {low} and {high}"

    first = "in 22.05 and before" if added[0] == (22, 5) else f"added {text(added)}"
    return first + (f", removed {text(removed)}" if removed else "")


# --- topology -----------------------------------------------------------------------------------


def _topology(spec: ClusterSpec, plan: Plan,
              release: SlurmRelease) -> tuple[str, list[Diagnostic]]:
    """The topology the files describe, or the errors of an explicit choice that cannot be."""
    choice = spec.slurm.topology
    compute = {n.hostname for n in plan.compute_nodes}
    in_racks = {h for d in plan.nvlink_domains if d.kind == "rack" for h in d.nodes} & compute
    fabric = "compute" in plan.fabrics
    outside = len(compute - in_racks)
    if choice == "none":
        return "none", []
    if choice == "tree":
        return "tree", [] if fabric else [Diagnostic(
            "SLURM-TOPOLOGY-TREE", "slurm.topology is 'tree' but the spec has no compute "
            "fabric to describe", TOPOLOGY, hint="declare fabric.compute, or use 'auto'")]
    if choice == "block":
        problem = _block_problem(release, in_racks, outside)
        if problem:
            return "none", [problem]
        return ("block" if not outside else "per-partition"), []
    if release.topology_block and in_racks and (not outside or release.topology_yaml):
        return ("block" if not outside else "per-partition"), []
    return ("tree" if fabric else "none"), []


def _block_problem(release: SlurmRelease, in_racks: set[str], outside: int) -> Diagnostic | None:
    version = release.version
    if not release.topology_block:
        return Diagnostic("SLURM-TOPOLOGY-BLOCK", f"slurm.topology is 'block' but Slurm {version} "
                          "has no topology/block (23.11 and later): slurmctld would not start",
                          TOPOLOGY, hint="set cluster.slurm_version to 23.11 or later, or use "
                          "'auto' or 'tree'")
    if not in_racks:
        return Diagnostic("SLURM-TOPOLOGY-BLOCK", "slurm.topology is 'block' but no compute node "
                          "is in a rack-scale NVLink domain: there would be no block (24.11 "
                          "logs 'No blocks configured', 26.05 refuses to start)", TOPOLOGY,
                          hint="use 'auto' or 'tree'")
    if outside and not release.topology_yaml:
        return Diagnostic("SLURM-TOPOLOGY-BLOCK", f"slurm.topology is 'block' but {outside} "
                          "compute node(s) are in no NVLink rack: under topology/block Slurm "
                          f"{version} cannot place jobs on them ('blocks lack access to "
                          f"{outside} nodes'); 25.05 and later give each partition its own "
                          "topology", TOPOLOGY, hint="set cluster.slurm_version to 25.05 or "
                          "later, or use 'auto' or 'tree'")
    return None


def _blocks(plan: Plan) -> tuple[Block, ...]:
    compute = {n.hostname for n in plan.compute_nodes}
    return tuple(Block(d.name, tuple(h for h in d.nodes if h in compute))
                 for d in plan.nvlink_domains if d.kind == "rack" and set(d.nodes) & compute)


def _order(blocks: tuple[Block, ...], release: SlurmRelease) -> tuple[Block, ...]:
    """Without BlockSizes (23.11) Slurm takes the base block size from the first block and
    refuses a later, smaller one: list the smallest first (stable, so even racks keep their
    order)."""
    if release.block_sizes:
        return blocks
    return tuple(sorted(blocks, key=lambda b: len(b.nodes)))


def _partition_topology(plan: Plan, blocks: tuple[Block, ...]) -> dict[str, str]:
    """Partitions whose every node is in a block use the block topology; the rest the
    cluster default."""
    in_blocks = {h for b in blocks for h in b.nodes}
    return {p.name: BLOCK_TOPOLOGY for p in plan.partitions
            if p.nodes and set(p.nodes) <= in_blocks}
