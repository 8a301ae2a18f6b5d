"""Goodput and cost checks: the policy's minimum goodput; spares and prices that match nothing."""

from __future__ import annotations

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
    for g in goodputs(plan):
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
            f"partition {name}: the largest job ({g.job.gpus} GPUs, "
            f"{g.job.per_day:.2f} interruptions a day) is useful {100 * g.useful:.1f}% of "
            f"the time, under the policy's {100 * limit:g}%; most is lost to {worst} "
            f"({terms}; a {g.write_s:.0f} s checkpoint write every "
            f"{(g.interval_s or 0) / 60:.1f} min)", _cause(plan, g, worst),
            hint=_HINTS[worst],
            details={"measured": round(g.useful, 4), "limit": limit, "unit": "ratio"})


_HINTS = {
    "checkpoint writes": "faster checkpoint storage (more OSSs or OSTs), a smaller checkpoint, "
                         "or asynchronous checkpoints",
    "reload": "faster storage reads, or a smaller checkpoint",
    "rework": "checkpoint more often (the Daly interval in report.md), or fewer failures",
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
