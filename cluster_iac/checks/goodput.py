"""Goodput and cost checks: the policy's minimum goodput; spares and prices that match nothing."""

from __future__ import annotations

import math
from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity, SpecPath
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.cost import bill_items
from cluster_iac.plan.goodput import Goodput, goodputs


@check("goodput.minimum")
def minimum(plan: Plan) -> Iterator[Diagnostic]:
    """The largest job of each partition spends at least policy.min_goodput of its time on
    useful work; the finding points at what costs the most (the storage a slow checkpoint
    write comes from, the checkpoint interval, a recovery time)."""
    limit = plan.settings.policy.min_goodput
    if limit is None:
        return
    end = plan.settings.policy.goodput_failure_rates
    for g in goodputs(plan, end):
        name = g.job.partition
        if g.useful is None:
            yield Diagnostic(
                "GOODPUT-UNDEFINED",
                f"partition {name}: goodput cannot be computed: it needs "
                f"workload.checkpoint_size_gb and a Lustre file system to write it to",
                ("policy", "min_goodput"), Severity.WARNING)
            continue
        if g.useful >= limit:
            continue
        worst = max(g.losses, key=lambda term: g.losses[term])
        terms = ", ".join(f"{term} {100 * share:.1f}%" for term, share in g.losses.items())
        yield Diagnostic(
            "GOODPUT-MIN",
            f"partition {name}: the largest job ({g.job.gpus:,} GPUs, "
            f"{g.job.per_day:.2f} interruptions a day at the {end} published failure rates) has "
            f"an ETTR of {100 * g.useful:.1f}%, under the policy's {100 * limit:g}%; most is lost "
            f"to {worst} "
            f"({terms}; a {g.write_s:.0f} s checkpoint write every "
            f"{(g.interval_s or 0) / 60:.1f} min)", _cause(plan, g, worst),
            hint=_HINTS[worst],
            details={"measured": round(g.useful, 4), "limit": limit, "unit": "ratio"})


_HINTS = {
    "checkpoint writes": "faster checkpoint storage (more OSSs or OSTs), a smaller checkpoint, "
                         "or asynchronous checkpoints",
    "reload": "faster storage reads, or a smaller checkpoint",
    "rework": "checkpoint more often (the Daly interval in report.md), or fewer failures",
    "persist in flight": "a faster checkpoint store, so an asynchronous checkpoint persists sooner",
    "detect": "detect failures sooner than the collective timeout (reliability.detect_s)",
    "drain": "drain failed nodes faster (reliability.drain_s)",
    "restart": "restart faster (reliability.restart_s)",
    "repair": "more hot spares (reliability.hot_spare_nodes), so failures need no repair",
}


def _cause(plan: Plan, g: Goodput, term: str) -> SpecPath:
    """The spec key behind the term that costs the most, where the spec writes it. Rework at
    Daly's interval is the checkpoint write's doing: that interval grows with the write time."""
    lustre = plan.settings.storage.lustre
    written = plan.settings.reliability.model_fields_set
    if term == "rework" and not g.planned:
        term = "checkpoint writes"  # Daly's interval follows from the write time and M
    work = plan.settings.workload
    if term in ("checkpoint writes", "persist in flight") and work.checkpoint_store != "lustre":
        return ("workload", "checkpoint_store_write_gbs")
    if term == "persist in flight":
        term = "checkpoint writes"
    if term in ("checkpoint writes", "reload") and lustre is not None:
        key = "write_gbs" if term == "checkpoint writes" else "read_gbs"
        if getattr(lustre, key) is not None:
            return ("storage", "lustre", key)
        return ("storage", "lustre", "ost") if lustre.ost is not None else ("storage", "lustre")
    if term == "rework" and g.planned:
        return ("workload", "checkpoint_interval_min")
    keys = {"detect": "detect_s", "drain": "drain_s", "restart": "restart_s",
            "repair": "hot_spare_nodes"}
    if term in keys and keys[term] in written:
        return ("reliability", keys[term])
    return ("policy", "min_goodput")


@check("goodput.names")
def names(plan: Plan) -> Iterator[Diagnostic]:
    """reliability.hot_spare_nodes names partitions and leaves each a job; cost.prices names
    items of the bill of materials."""
    partitions = {p.name: p for p in plan.partitions}
    compute = {n.hostname for n in plan.compute_nodes}
    for name, spares in sorted(plan.settings.reliability.hot_spare_nodes.items()):
        partition = partitions.get(name)
        if partition is None:
            yield Diagnostic(
                "GOODPUT-UNKNOWN-PARTITION", f"reliability.hot_spare_nodes names partition "
                f"'{name}', which slurm.partitions does not declare",
                ("reliability", "hot_spare_nodes", name),
                hint=did_you_mean(name, partitions) or f"partitions: {', '.join(partitions)}")
            continue
        nodes = sum(1 for host in partition.nodes if host in compute)
        if spares >= nodes:
            yield Diagnostic(
                "GOODPUT-SPARES", f"partition {name} has {nodes} compute node(s): {spares} hot "
                f"spare(s) leave no node for a job", ("reliability", "hot_spare_nodes", name),
                details={"measured": spares, "limit": nodes - 1, "unit": "nodes"})
    prices = plan.settings.cost.prices
    if not prices:
        return
    items = bill_items(plan)
    for key in sorted(prices):
        if key not in items:
            yield Diagnostic(
                "COST-UNKNOWN-ITEM", f"cost.prices names '{key}', which is not in the bill of "
                f"materials", ("cost", "prices", key),
                hint=did_you_mean(key, list(items)) or f"items: {', '.join(items)}")


@check("goodput.job_sizes")
def job_sizes(plan: Plan) -> Iterator[Diagnostic]:
    """Every size policy.allreduce_job_sizes asks for fits each partition it is predicted for: a
    size above a partition's GPUs has no prediction there, and is said so at its line."""
    if not plan.settings.policy.allreduce_job_sizes:
        return
    # on demand: validate without job sizes never loads the collectives model (test_startup)
    from cluster_iac.plan.job_sizes import sized_jobs

    for partition, sizes in sized_jobs(plan).items():
        for s in sizes:
            if s.asked is None or s.gpus or s.index is None:
                continue
            yield Diagnostic(
                "GOODPUT-JOB-SIZE",
                f"policy.allreduce_job_sizes asks for a job of {s.asked:,} GPUs, more than "
                f"partition {partition} holds ({s.available:,}): no busbw, MTTF or goodput for it "
                f"there", ("policy", "allreduce_job_sizes", s.index), Severity.WARNING,
                hint=f"ask for at most {s.available:,} GPUs, or add nodes to {partition}",
                details={"measured": s.asked, "limit": s.available, "unit": "GPUs"})


@check("goodput.checkpoint_store")
def checkpoint_store(plan: Plan) -> Iterator[Diagnostic]:
    """An object or NVMe checkpoint store gives its bandwidth; an asynchronous checkpoint's
    persist (size / store write) ends within the planned interval (CheckFreq, FAST 2021, 4.2)."""
    work = plan.settings.workload
    if work.checkpoint_store != "lustre" and work.checkpoint_store_write_gbs is None:
        per = "per node" if work.checkpoint_store == "nvme" else "aggregate"
        yield Diagnostic(
            "CHECKPOINT-STORE",
            f"workload.checkpoint_store is '{work.checkpoint_store}' but gives no write "
            f"bandwidth: no goodput can be computed for it", ("workload", "checkpoint_store"),
            hint=f"add workload.checkpoint_store_write_gbs (GB/s, {per}, measured)")
        return
    if work.checkpoint_mode != "async" or work.checkpoint_interval_min is None:
        return
    for g in goodputs(plan):
        if g.persist_fits:
            continue
        yield Diagnostic(
            "CHECKPOINT-PERSIST",
            f"partition {g.job.partition}: an asynchronous checkpoint of "
            f"{work.checkpoint_size_gb:g} GB persists to the {g.store} store in "
            f"{g.persist_s:.0f} s, longer than the {work.checkpoint_interval_min:g} min interval: "
            f"the next checkpoint would start before it ends",
            ("workload", "checkpoint_interval_min"),
            hint=f"an interval of at least {math.ceil(g.persist_s / 60)} min, or a faster store",
            details={"measured": round(g.persist_s, 1),
                     "limit": work.checkpoint_interval_min * 60, "unit": "s"})
