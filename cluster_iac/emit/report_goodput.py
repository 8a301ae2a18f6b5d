"""report.md's goodput and cost sections: every rate with its source, every term, each partition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cluster_iac.plan import Plan
from cluster_iac.plan.collectives.jobs import Jobs
from cluster_iac.plan.cost import costs, per_useful_gpu_h
from cluster_iac.plan.failures import class_rates, cluster_generation
from cluster_iac.plan.fleets import ENDS, fleets, generation_fleets, scale
from cluster_iac.plan.goodput import TERMS, Goodput, goodputs
from cluster_iac.plan.job_sizes import SizedJob, sized_jobs


def _opt(value: float | None, fmt: str, scale: float = 1) -> str:
    return "-" if value is None else format(value * scale, fmt)


def goodput(plan: Plan, jobs: list[Goodput],
            asked: Mapping[str, Jobs] | None = None) -> dict[str, Any]:
    """The failure rates with their range, the published fleets, and for each partition its job
    sizes and its largest job's failures and ETTR; ``asked``: each partition's asked_jobs by
    name, where the caller has them (plan/job_sizes.py sized_jobs)."""
    rates = [{"key": r.key, "name": r.name, "unit": r.unit,
              "rate": _opt(r.per_million_h, ".3f"),
              "range": " / ".join(_opt(v, ".3f") for v in r.ends) if r.ends else "-",
              "basis": (f"{r.events} / ({r.units:,} x {r.hours:g} h)" if r.events is not None
                        else "spec, measured" if r.overridden else "-"),
              "source": r.source} for r in class_rates(plan)]
    rel = plan.settings.reliability
    policy = plan.settings.policy
    minimum = policy.min_goodput
    sizes = sized_jobs(plan, asked)
    ends = {end: {g.job.partition: g for g in goodputs(plan, end)} for end in ENDS}
    work = plan.settings.workload
    return {"rates": rates, "fleets": _fleets(plan),
            "jobs": [_job(g, sizes.get(g.job.partition, []),
                          {e: ends[e][g.job.partition] for e in ENDS}) for g in jobs],
            "detect": f"{rel.detect_s:g}", "drain": f"{rel.drain_s:g}",
            "restart": f"{rel.restart_s:g}",
            "repair": "not given" if rel.repair_h is None else f"{rel.repair_h:g} h",
            "minimum": "none" if minimum is None else f"{100 * minimum:g}%",
            "judged": policy.goodput_failure_rates,
            "measured": ", ".join(r.key for r in class_rates(plan) if r.overridden) or "none",
            "mode": work.checkpoint_mode, "store": work.checkpoint_store}


def _fleets(plan: Plan) -> list[dict[str, str]]:
    generation = cluster_generation(plan)
    expected = set(generation_fleets(generation))
    return [{"key": f.key, "name": f.name, "generation": f.generation, "gpus": f"{f.gpus:,}",
             "nodes": f"{f.nodes:,}", "days": f"{f.days:g}", "covers": f.covers,
             "rate": f"{1000 * f.per_node_day:.2f}", "scale": f"{scale(f):.2f}",
             "expected": "yes" if f.key in expected else "-", "source": f.source}
            for f in fleets().values()]


def _range(values: Mapping[str, float | None], fmt: str, factor: float = 1) -> str:
    """'expected (lowest-rate end - highest-rate end)'."""
    if values["expected"] is None:
        return "-"
    low, high = values["lowest"], values["highest"]
    return (f"{_opt(values['expected'], fmt, factor)} ({_opt(low, fmt, factor)} - "
            f"{_opt(high, fmt, factor)})")


def _size_row(s: SizedJob) -> dict[str, str]:
    if not s.failures:
        return {"job": s.label, "nodes": "-", "gpus": "-", "per_day": "-", "mtbf": "-",
                "ettr": "-"}
    per_day = {e: f.per_day for e, f in s.failures.items()}
    mtbf = {e: f.mtbf_h for e, f in s.failures.items()}
    ettr = {e: g.useful for e, g in s.goodput.items()}
    return {"job": s.label, "nodes": f"{s.nodes:,}", "gpus": f"{s.gpus:,}",
            "per_day": _range(per_day, ".3f"), "mtbf": _range(mtbf, ",.1f"),
            "ettr": _range(ettr, ".2f", 100)}


def _job(g: Goodput, sizes: list[SizedJob], ends: dict[str, Goodput]) -> dict[str, Any]:
    job = g.job
    total = job.per_day
    classes = [{"key": t.rate.key, "units": f"{t.units:,}" if t.rate.per_million_h is not None
                else "-", "per_day": f"{t.per_day:.3f}" if t.rate.per_million_h is not None
                else "no rate",
                "share": _opt(t.per_day / total if total else None, ".1f", 100),
                "blast": str(t.blast_nodes) if t.rate.per_million_h is not None else "-",
                "covered": ("-" if not t.per_day else "yes" if t.covered else "no: waits repair")}
               for t in job.terms]
    stop = ("Checkpoint write delta = size / store write (s)" if g.mode == "sync"
            else "Blocking copy to host memory b = delta (s)")
    figures = [
        ("Nodes in the job (partition less hot spares)", f"{job.nodes:,}"),
        ("GPUs in the job", f"{job.gpus:,}"),
        ("Hot spare nodes" + ("" if job.spares_given else " (default: one failure's nodes)"),
         str(job.spares)),
        ("Interruptions per day, expected (lowest - highest published rates)",
         _range({e: x.job.per_day for e, x in ends.items()}, ".3f")),
        ("Job MTTF M = 24 h / interruptions per day (h)",
         _range({e: x.job.mtbf_h for e, x in ends.items()}, ".2f")),
        (f"Checkpoint: {g.mode} to {g.store}", ""),
        (stop, _opt(g.write_s, ".1f")),
        ("Persist to the store after the copy, size / store write (s)",
         f"{g.persist_s:.1f}" if g.mode == "async" else "-"),
        ("Reload = size / store read (s)", _opt(g.reload_s, ".1f")),
        ("Detect (s)", f"{g.detect_s:g}"), ("Drain (s)", f"{g.drain_s:g}"),
        ("Restart (s)", f"{g.restart_s:g}"),
        ("Repair wait per failure, uncovered share x repair time (s)", f"{g.repair_s:.1f}"),
        ("Recovery R = detect + drain + restart + reload + repair (s)", f"{g.recovery_s:.1f}"),
        ("Young sqrt(2 delta M) (min)", _opt(g.young_s, ".1f", 1 / 60)),
        ("Daly 2006 optimum (min)" + (", at least the persist" if g.mode == "async" else ""),
         _opt(g.daly_s, ".1f", 1 / 60)),
        ("Interval tau used (min)" + (", planned" if g.planned else ", Daly's"),
         _opt(g.interval_s, ".1f", 1 / 60)),
    ]
    figures += [(f"Lost to {term} (first order, %)", _opt(g.losses.get(term), ".2f", 100))
                for term in TERMS]
    missing = "- (needs workload.checkpoint_size_gb and a store bandwidth)"
    figures.append(("ETTR (effective training time ratio), Daly's complete model, expected "
                    "(lowest - highest published rates) (%)",
                    _range({e: x.useful for e, x in ends.items()}, ".2f", 100)
                    if g.useful is not None else missing))
    return {"name": job.partition, "classes": classes, "sizes": [_size_row(s) for s in sizes],
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
               "cost": _at_least(per_useful_gpu_h(c, g), c.complete)} for g in jobs]
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
        "per_h": _at_least(c.per_h, c.complete, 2), "gpus": f"{c.gpus:,}",
        "per_gpu_h": _at_least(c.per_gpu_h, c.complete), "useful": useful}


def _at_least(value: float | None, complete: bool, digits: int = 3) -> str:
    """A cost with unpriced items (or no power price) is a lower bound, and says so."""
    text = _money(value, digits)
    return text if complete or value is None else f"at least {text}"
