"""report.md's goodput and cost sections: every rate with its source, every term, each partition."""

from __future__ import annotations

from typing import Any

from cluster_iac.plan import Plan
from cluster_iac.plan.cost import costs, per_useful_gpu_h
from cluster_iac.plan.failures import JobFailures, class_rates, sized_jobs
from cluster_iac.plan.goodput import TERMS, Goodput


def _opt(value: float | None, fmt: str, scale: float = 1) -> str:
    return "-" if value is None else format(value * scale, fmt)


def goodput(plan: Plan, jobs: list[Goodput]) -> dict[str, Any]:
    """The failure rates and, for each partition's largest job, its failures and goodput."""
    rates = [{"key": r.key, "name": r.name, "unit": r.unit,
              "rate": _opt(r.per_million_h, ".3f"),
              "basis": (f"{r.events} / ({r.units:,} x {r.hours:g} h)" if r.events is not None
                        else "spec" if r.overridden else "-"),
              "source": r.source} for r in class_rates(plan)]
    rel = plan.settings.reliability
    minimum = plan.settings.policy.min_goodput
    sizes = sized_jobs(plan)
    return {"rates": rates, "jobs": [_job(g, sizes.get(g.job.partition, [])) for g in jobs],
            "detect": f"{rel.detect_s:g}", "drain": f"{rel.drain_s:g}",
            "restart": f"{rel.restart_s:g}",
            "repair": "not given" if rel.repair_h is None else f"{rel.repair_h:g} h",
            "minimum": "none" if minimum is None else f"{100 * minimum:g}%"}


_LABELS = {"partition": "the whole partition", "node": "one node",
           "nvlink_domain": "one NVLink domain", "scalable_unit": "one scalable unit"}


def _job(g: Goodput, sizes: list[tuple[str, JobFailures]]) -> dict[str, Any]:
    job = g.job
    total = job.per_day
    classes = [{"key": t.rate.key, "units": f"{t.units:,}" if t.rate.per_million_h is not None
                else "-", "per_day": f"{t.per_day:.3f}" if t.rate.per_million_h is not None
                else "no rate",
                "share": _opt(t.per_day / total if total else None, ".1f", 100),
                "blast": str(t.blast_nodes) if t.rate.per_million_h is not None else "-",
                "covered": ("-" if not t.per_day else "yes" if t.covered else "no: waits repair")}
               for t in job.terms]
    figures = [
        ("Nodes in the job (partition less hot spares)", f"{job.nodes:,}"),
        ("GPUs in the job", f"{job.gpus:,}"),
        ("Hot spare nodes" + ("" if job.spares_given else " (default: one failure's nodes)"),
         str(job.spares)),
        ("Interruptions per day, sum of rate x units x 24 h", f"{total:.3f}"),
        ("Job MTBF M = 24 h / interruptions per day (h)", _opt(job.mtbf_h, ".2f")),
        ("Checkpoint write delta = size / Lustre write (s)", _opt(g.write_s, ".1f")),
        ("Reload = size / Lustre read (s)", _opt(g.reload_s, ".1f")),
        ("Detect (s)", f"{g.detect_s:g}"), ("Drain (s)", f"{g.drain_s:g}"),
        ("Restart (s)", f"{g.restart_s:g}"),
        ("Repair wait per failure, uncovered share x repair time (s)", f"{g.repair_s:.1f}"),
        ("Recovery R = detect + drain + restart + reload + repair (s)", f"{g.recovery_s:.1f}"),
        ("Young sqrt(2 delta M) (min)", _opt(g.young_s, ".1f", 1 / 60)),
        ("Daly 2006 optimum (min)", _opt(g.daly_s, ".1f", 1 / 60)),
        ("Interval tau used (min)" + (", planned" if g.planned else ", Daly's"),
         _opt(g.interval_s, ".1f", 1 / 60)),
    ]
    figures += [(f"Lost to {term} (first order, %)", _opt(g.losses.get(term), ".2f", 100))
                for term in TERMS]
    missing = "- (needs workload.checkpoint_size_gb and Lustre)"
    figures.append(("Goodput, Daly's complete model (%)",
                    _opt(g.useful, ".2f", 100) if g.useful is not None else missing))
    by_size = [{"job": _LABELS.get(label, label), "nodes": f"{j.nodes:,}", "gpus": f"{j.gpus:,}",
                "per_day": f"{j.per_day:.3f}", "mtbf": _opt(j.mtbf_h, ",.1f")}
               for label, j in sizes]
    return {"name": job.partition, "classes": classes, "sizes": by_size,
            "figures": [{"what": w, "value": v} for w, v in figures]}


def _money(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def cost(plan: Plan, jobs: list[Goodput]) -> dict[str, Any] | None:
    """Capital by item, its hourly share, power, running costs, per (useful) GPU-hour."""
    c = costs(plan)
    if c is None:
        return None
    kwh = plan.settings.cost.price_per_kwh
    useful = [{"name": g.job.partition, "gpus": f"{g.job.partition_gpus:,}",
               "job": f"{g.job.gpus:,}", "goodput": _opt(g.useful, ".2f", 100),
               "cost": _money(per_useful_gpu_h(c, g), 3)} for g in jobs]
    return {
        "currency": c.currency,
        "items": [{"key": i.key, "kind": i.kind, "qty": f"{i.qty:,}",
                   "price": _money(i.price), "total": _money(i.total) if i.total is not None
                   else "not priced"} for i in c.items],
        "capital": _money(c.capital) + ("" if c.complete else " (at least: items not priced)"),
        "years": f"{c.years:g}", "capital_per_h": _money(c.capital_per_h, 2),
        "facility_kw": f"{c.facility_kw:,.1f}", "pue": f"{plan.settings.power.pue:g}",
        "kwh": "not given" if kwh is None else f"{kwh:g}",
        "power_per_h": _money(c.power_per_h, 2), "opex_per_h": _money(c.opex_per_h, 2),
        "per_h": _money(c.per_h, 2), "gpus": f"{c.gpus:,}",
        "per_gpu_h": _money(c.per_gpu_h, 3), "useful": useful}
