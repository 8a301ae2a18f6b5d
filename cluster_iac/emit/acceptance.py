"""acceptance/: the Slurm jobs that prove a delivered cluster meets the plan, and their bars.

One folder per partition (``acceptance/<partition>/``) with one script per kind of job and a
``submit.sh`` that submits a kind for a range of scalable units of the compute fabric: DCGM
diagnostics, GPU burn-in, ib_write_bw and ib_send_lat between host pairs (on one leaf, and
leaf to leaf by rail: ``ib-spine``), nccl-tests' all_reduce per node, per NVLink domain, per
leaf and per SU, and a power step. A unit's job is ``sbatch --nodelist=... --nodes=...
--job-name=... KIND.sbatch UNIT [ARGUMENT ...]``: Slurm gives every task of a job array the
same nodes, so a unit is a job of its own, and its facts (nodes, rail ports, host pairs, the
all_reduce steps) are submit.sh's job lines and the script's arguments, not a file per unit.
The partition's ``bars.json`` holds every threshold and where it comes from, its own and each
unit's (``units``); `cluster-iac acceptance check` (cluster_iac/acceptance/check.py) reads it
beside the jobs' outputs, one results folder per unit. A unit names only its own hosts (and,
for the leaf-to-leaf pairs, the unit before it), so an added SU adds its job lines and its
bars and changes no other unit's; the partition's own jobs (all_reduce over the whole
partition, storage throughput) change with it. A node listed by several partitions has its
unit jobs in the first of them only; each partition has its own partition-wide jobs.

Every spec string in a script is a quoted shell word (formats/shell.py shell_word), and what an
``#SBATCH`` line or a job's sbatch options carry is checked to be a plain Slurm word
(sbatch_value): no string from a spec adds a line or a command. The thresholds' constants,
each with its source, are in emit/acceptance_bars.py and in README.md "Acceptance and burn-in".
"""

from __future__ import annotations

import re

from cluster_iac.base.hostlist import fold
from cluster_iac.emit.acceptance_bars import (
    ACCEPTANCE_CONSTANTS,
    BURN_IN_S,
    DCGM_PHASES,
    IB_DURATION_S,
    IB_TIME_S,
    LATENCY_PER_HOP_US,
    LATENCY_SAME_LEAF_US,
    NCCL_TIME_S,
    PERFTEST_EFFICIENCY,
    POWER_STEP_S,
    STORAGE_MARGIN,
    Shared,
    burn_chunks,
    line_rate,
    nccl_steps,
    place,
    ports,
    power_bars,
    step_bar,
)
from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.formats.json import json_texts
from cluster_iac.formats.shell import shell_comment, shell_word
from cluster_iac.plan import Node, PartitionPlan, Plan
from cluster_iac.plan.durations import slurm_time

UNIT_KINDS = ("dcgm", "burn-in", "ib", "ib-spine", "nccl", "power-step")
"""The kinds of a unit's jobs, in the order submit.sh lists a unit's job lines."""

_SBATCH_VALUE = re.compile(r"[A-Za-z0-9._,:\[\]+-]+")


def sbatch_value(value: object) -> str:
    """A value for an ``#SBATCH`` line or a job's sbatch option: sbatch reads the rest of the
    line itself, without a shell, so only a plain word of name, range and time characters is
    written."""
    text = str(value)
    if not _SBATCH_VALUE.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a plain Slurm word for an #SBATCH line")
    return text


Job = tuple[str, str, int, list[str]]
"""One unit's job: (kind, hostlist, node count, the script's arguments after UNIT)."""


def render(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    shared = Shared(plan)
    tested: set[str] = set()  # a node's unit jobs run in the first partition that lists it
    for partition in plan.partitions:
        groups = unit_groups(plan, partition)
        if not groups:
            continue
        units: dict[str, dict[str, object]] = {}
        jobs: list[tuple[str, list[Job]]] = []
        previous: tuple[str, list[Node]] | None = None
        for unit, members in groups:
            nodes = [n for n in members if n.hostname not in tested]
            if nodes:
                units[unit], unit_jobs = _unit(shared, unit, nodes, previous)
                jobs.append((unit, unit_jobs))
                previous = (unit, nodes)
        tested.update(n.hostname for _, ns in groups for n in ns)
        files.update(_partition_files(shared, partition, [n for _, ns in groups for n in ns],
                                      units, jobs))
    files.update(zip(shared.bars, json_texts(list(shared.bars.values())), strict=True))
    return files


def unit_groups(plan: Plan, partition: PartitionPlan) -> list[tuple[str, list[Node]]]:
    """The partition's GPU nodes (MIG-partitioned types left out: nccl-tests has no NVLink
    there) by scalable unit of the compute fabric, 'su<N>' in unit order; one group 'all'
    without a fabric that numbers units."""
    hosts = {n.hostname: n for n in plan.nodes}
    wiring = plan.fabric_wiring.get("compute")
    su = wiring.su if wiring is not None else {}
    groups: dict[str, list[Node]] = {}
    for host in partition.nodes:
        node = hosts.get(host)
        nt = plan.node_types[node.node_type] if node is not None else None
        if node is None or nt is None or nt.gpu_count == 0 or nt.mig:
            continue
        number = su.get(host)
        groups.setdefault(f"su{number}" if number is not None else "all", []).append(node)
    return sorted(groups.items(), key=lambda g: (len(g[0]), g[0]))


def _unit(shared: Shared, unit: str, nodes: list[Node],
          previous: tuple[str, list[Node]] | None) -> tuple[dict[str, object], list[Job]]:
    """A unit's bars (bars.json ``units``) and its jobs."""
    plan = shared.plan
    hosts = sbatch_value(shared.fold(n.hostname for n in nodes))
    wiring = plan.fabric_wiring.get("compute")
    rails = ports(plan, nodes)
    steps = nccl_steps(shared, nodes, unit)
    step_words = [str(s[k]) for s in steps for k in ("scope", "name", "hosts", "nodes", "gpus")]
    count = len(nodes)
    jobs: list[Job] = [("dcgm", hosts, count, []), ("burn-in", hosts, count, [])]
    bars: dict[str, object] = {
        "nodelist": hosts, "count": count,
        "nodes": {n.hostname: place(plan, n) for n in nodes},
        "nccl": [{k: v for k, v in s.items() if k != "gpus"} for s in steps],
        "dcgm": {"levels": [level for level, _ in DCGM_PHASES]},
        "power": power_bars(shared, nodes)}
    if rails and wiring is not None:
        rate = line_rate(plan, nodes)
        write_bar = round(rate * PERFTEST_EFFICIENCY, 2)
        jobs.append(("ib", hosts, count, [" ".join(rails)]))
        ib: dict[str, object] = {
            "ports": rails, "line_gbps": rate, "write_bw_gbps": write_bar,
            "send_lat_us": LATENCY_SAME_LEAF_US,
            "source": f"line rate {rate} Gb/s (min of NIC and switch port) x "
                      f"{PERFTEST_EFFICIENCY}; latency {LATENCY_SAME_LEAF_US} us on one leaf"}
        if previous is not None and plan.fabrics["compute"].tiers > 1:
            other, theirs = previous
            # host k of the unit before with host k of this one (the shorter unit's count)
            both = [n.hostname for pair in zip(theirs, nodes, strict=False) for n in pair]
            jobs.append(("ib-spine", sbatch_value(fold(both)), len(both), [" ".join(rails), *both]))
            ib["spine_pairs_with"] = other
            ib["spine_send_lat_us"] = LATENCY_SAME_LEAF_US + 2 * LATENCY_PER_HOP_US
        bars["ib"] = ib
    if steps:
        jobs.append(("nccl", hosts, count, step_words))
    jobs.append(("power-step", hosts, count, []))
    return bars, jobs


def _context(partition: PartitionPlan) -> dict[str, object]:
    """What every script of the partition says: its name, its jobs' name and results folder."""
    return {"generated_by": shell_comment(GENERATED_BY),
            "partition": sbatch_value(partition.name),
            "job": sbatch_value(f"accept-{partition.name}"),
            "results": shell_word(partition.name)}


def _unit_scripts(shared: Shared, partition: PartitionPlan, kinds: set[str]) -> dict[str, str]:
    """The script of each kind of unit job the partition has (ib-spine's is ib.sbatch)."""
    plan = shared.plan
    base = f"acceptance/{partition.name}"
    context = _context(partition)
    chunks, chunk_s = burn_chunks(partition)
    made = {
        "dcgm": lambda: render_template(
            "acceptance/dcgm.sbatch.j2", **context, phases=DCGM_PHASES,
            time=slurm_time(sum(t for _, t in DCGM_PHASES))),
        "burn-in": lambda: render_template(
            "acceptance/burn-in.sbatch.j2", **context, chunks=chunks, chunk_s=chunk_s,
            total=BURN_IN_S, time=slurm_time(chunk_s + 1800)),
        "ib": lambda: render_template(
            "acceptance/ib.sbatch.j2", **context, duration=IB_DURATION_S,
            time=slurm_time(IB_TIME_S), lat_bar=LATENCY_SAME_LEAF_US,
            spine_lat_bar=LATENCY_SAME_LEAF_US + 2 * LATENCY_PER_HOP_US),
        "nccl": lambda: render_template(
            "acceptance/nccl.sbatch.j2", **context, steps=[],
            size=shell_word(plan.settings.policy.allreduce_message_size),
            time=slurm_time(NCCL_TIME_S)),
        "power-step": lambda: render_template(
            "acceptance/power-step.sbatch.j2", **context, seconds=POWER_STEP_S,
            time=slurm_time(POWER_STEP_S + 1800)),
    }
    scripts = {kind.replace("ib-spine", "ib") for kind in kinds}
    return {f"{base}/{kind}.sbatch": made[kind]() for kind in UNIT_KINDS if kind in scripts}


def _submit(partition: PartitionPlan, jobs: list[tuple[str, list[Job]]], kinds: set[str],
            partition_kinds: list[str]) -> str:
    """submit.sh: a kind of job for a range of units (``kinds``: those the units have), each
    unit's job line a shell command of quoted words."""
    lines = [(unit, [" ".join(map(shell_word, (kind, unit, hosts, count, *args)))
                     for kind, hosts, count, args in unit_jobs])
             for unit, unit_jobs in jobs]
    return render_template(
        "acceptance/submit.sh.j2", **_context(partition), units=lines,
        unit_kinds=[kind for kind in UNIT_KINDS if kind in kinds],
        partition_kinds=partition_kinds)


def _partition_files(shared: Shared, partition: PartitionPlan, nodes: list[Node],
                     units: dict[str, dict[str, object]],
                     jobs: list[tuple[str, list[Job]]]) -> dict[str, str]:
    """The partition's own jobs (all_reduce over it, storage), its units' scripts, submit.sh
    and bars.json (its text made with every partition's: render)."""
    plan = shared.plan
    base = f"acceptance/{partition.name}"
    context = {**_context(partition), "nodelist": sbatch_value(
        shared.fold(n.hostname for n in nodes)), "count": len(nodes)}
    files: dict[str, str] = {}
    bars: dict[str, object] = {"partition": partition.name, "constants": ACCEPTANCE_CONSTANTS}
    bar = step_bar(shared, nodes) if len(nodes) > 1 else None
    if bar is not None:
        step = {"scope": "partition", "name": partition.name,
                "hosts": context["nodelist"], "racks": fold({n.rack for n in nodes}),
                "nodes": len(nodes), **bar}
        bars["nccl"] = [step]
        gpus = min(plan.node_types[n.node_type].gpu_count for n in nodes)
        words = [shell_word(step[k]) for k in ("scope", "name", "hosts", "nodes")]
        files[f"{base}/nccl-partition.sbatch"] = render_template(
            "acceptance/nccl.sbatch.j2", **context, steps=[{**step, "words": [*words, gpus]}],
            size=shell_word(plan.settings.policy.allreduce_message_size),
            time=slurm_time(NCCL_TIME_S))
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    if hardware is not None and plan.lustre.mount:
        bars["storage"] = {
            direction: {"bound_gbs": round(bw.effective, 2),
                        "bar_gbs": round(bw.effective * (1 - STORAGE_MARGIN), 2),
                        "limit": bw.limit,
                        "source": f"derived Lustre {direction} bound (plan/lustre_bandwidth.py"
                                  f"{', plan/raid_engine.py' if bw.raid is not None else ''}, "
                                  f"set by {bw.limit}) x (1 - {STORAGE_MARGIN})"}
            for direction, bw in (("write", hardware.write), ("read", hardware.read))}
        files[f"{base}/storage.sbatch"] = render_template(
            "acceptance/storage.sbatch.j2", **context, mount=shell_word(plan.lustre.mount),
            bars=bars["storage"], time=slurm_time(2 * 3600))
    bars["units"] = units
    kinds = {job[0] for _, unit_jobs in jobs for job in unit_jobs}
    files.update(_unit_scripts(shared, partition, kinds))
    partition_kinds = [kind for kind in ("nccl-partition", "storage")
                       if f"{base}/{kind}.sbatch" in files]
    if jobs or partition_kinds:
        files[f"{base}/submit.sh"] = _submit(partition, jobs, kinds, partition_kinds)
    files[f"{base}/bars.json"] = ""  # its text made with every partition's (render)
    shared.bars[f"{base}/bars.json"] = bars
    return files
