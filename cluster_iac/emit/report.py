"""report.md: what was built, its power, cooling, predicted all_reduce bandwidth and findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cluster_iac.emit import report_goodput, report_html, report_storage
from cluster_iac.emit.base import render_template
from cluster_iac.formats.markdown import markdown_columns, md_cell, md_cells
from cluster_iac.plan import Plan, collectives
from cluster_iac.plan.checkpoint import storage_figures
from cluster_iac.plan.collectives import constants
from cluster_iac.plan.collectives.jobs import Jobs
from cluster_iac.plan.dump import counts
from cluster_iac.plan.goodput import goodputs
from cluster_iac.plan.power import pdu_loads, rack_loads_w
from cluster_iac.plan.power_cap import SOURCES, cap_effects, effect_text
from cluster_iac.plan.power_tables import PduLoad


def render(plan: Plan) -> dict[str, str]:
    """report.md, and report.html: the same text as a page with the drawings
    (emit/report_html.py)."""
    text = markdown(plan)
    return {"report.md": text, "report.html": report_html.page(plan, text)}


def markdown(plan: Plan) -> str:
    """report.md alone (what `cluster-iac report` prints)."""
    return render_template("report/report.md.j2", **report_context(plan))


def report_context(plan: Plan) -> dict[str, Any]:
    """Plain, pre-formatted, sorted sections of the report."""
    jobs = goodputs(plan)
    # each partition's jobs found once, for the busbw table and the goodput sizes
    asked = {p.name: collectives.asked_jobs(plan, p) for p in plan.partitions}
    return {
        "cluster": plan.cluster.name,
        "counts": _counts(plan),
        "bom": _bom(plan),
        "power": _power(plan),
        "cooling": _cooling(plan),
        "busbw": _busbw(plan, asked),
        "storage": _storage(plan),
        "goodput": report_goodput.goodput(plan, jobs, asked),
        "cost": report_goodput.cost(plan, jobs),
        "findings": _findings(plan),
        "caps": _caps(plan),
    }


def _caps(plan: Plan) -> dict[str, Any] | None:
    """The GPU power caps' predicted speed (plan/power_cap.py), or None without a cap."""
    effects = cap_effects(plan)
    if not effects:
        return None
    return {"lines": [md_cell(f"node type {e.node_type}: {effect_text(e)}; a job on it takes "
                              f"up to {1 / e.speed:.3f} x as long to train")
                      for e in effects],
            "sources": md_cell(SOURCES)}


def _kw(watts: float) -> str:
    return f"{watts / 1000:.2f}"


def _counts(plan: Plan) -> list[tuple[str, str]]:
    c = counts(plan)
    rows = [("nodes", str(c["nodes"]))]
    rows += [(f"nodes ({role})", str(n)) for role, n in c["nodes_by_role"].items()]
    rows += [("GPUs", str(c["gpus"])), ("NVLink domains", str(c["nvlink_domains"])),
             ("rows", str(c["rows"])), ("racks", str(c["racks"])), ("PDUs", str(c["pdus"]))]
    rows += [(f"{net} switches ({tier})", str(n))
             for net, tiers in c["switches"].items() for tier, n in tiers.items()]
    rows += [(f"{net} links ({tier})", str(n))
             for net, tiers in c["links"].items() for tier, n in tiers.items()]
    return rows


def _bom(plan: Plan) -> list[dict[str, str]]:
    """Equipment by model; cable media and lengths are in cabling/bom.md."""
    rows: list[dict[str, str]] = []
    by_type = Counter(n.node_type for n in plan.nodes)
    for name, n in sorted(by_type.items()):
        nt = plan.node_types[name]
        rows.append({"item": "server", "model": f"{nt.platform_name} ({name})", "qty": str(n)})
    by_switch = Counter((s.model, s.network, s.tier) for s in plan.switches)
    for (switch, network, tier), n in sorted(by_switch.items()):
        name = plan.catalog.switches[switch].name if switch in plan.catalog.switches else switch
        rows.append({"item": f"{network} {tier} switch", "model": name, "qty": str(n)})
    profiles = plan.settings.power.pdu_profiles
    per_profile = Counter(d.model for d in plan.power_devices if d.kind == "pdu")
    for name, n in sorted(per_profile.items()):
        p = profiles[name]
        model_text = (f"{name}: {p.voltage_v:g} V {p.phases}-phase, {p.circuits} x "
                      f"{p.breaker_a:g} A, {p.outlets} outlets")
        rows.append({"item": "rack PDU", "model": model_text, "qty": str(n)})
    shelves = Counter(d.model for d in plan.power_devices if d.kind == "power-shelf")
    for shelf, n in sorted(shelves.items()):
        rows.append({"item": "power shelf", "model": plan.catalog.power_shelves[shelf].name,
                     "qty": str(n)})
    return rows


def _power(plan: Plan) -> dict[str, Any]:
    """Each rack's load against its limit, each PDU's worst line; rows formatted here, column
    by column (a 100,000-GPU cluster has some 10,000 PDUs)."""
    loads = rack_loads_w(plan)
    racks = sorted(plan.racks, key=lambda r: r.name)
    rack_loads = [loads[r.name] for r in racks]
    limits = [r.max_power_kw for r in racks]
    rack_rows = markdown_columns([
        [r.name for r in racks], [r.row for r in racks], _texts(rack_loads, _kw),
        [f"{limit:g}" if limit else "-" for limit in limits],
        [f"{limit - load / 1000:.2f}" if limit else "-"
         for limit, load in zip(limits, rack_loads, strict=True)]])
    pdu_rows = _pdu_rows(pdu_loads(plan))
    it_w = sum(loads.values())
    power = plan.settings.power
    cap = power.facility_capacity_kw
    facility = it_w * power.pue
    capacity = (f"capacity {cap:g} kW, margin {cap - facility / 1000:.2f} kW" if cap else
                "no facility capacity declared (power.facility_capacity_kw)")
    return {"racks": rack_rows, "pdus": pdu_rows, "it": _kw(it_w), "pue": f"{power.pue:g}",
            "facility": _kw(facility), "capacity": capacity, "feeds": _feeds(plan),
            "continuous": f"{plan.settings.policy.breaker_continuous_percent:g}"}


def _feeds(plan: Plan) -> str:
    """Which feeds are given (their profile states inlet_a, POWER-FEED checks them) and which
    assumed (rated breaker_a x circuits, unchecked; POWER-FEED-ASSUMED)."""
    given: Counter[str] = Counter()
    assumed: dict[str, tuple[int, float, float]] = {}  # profile -> (feeds, rating, worst A)
    for feed in plan.power_feeds:
        profile = str(feed.spec_path[2])
        if feed.checked:
            given[profile] += 1
            continue
        n, rating, worst = assumed.get(profile, (0, feed.amperage_a, 0.0))
        assumed[profile] = (n + 1, rating, max(worst, *feed.worst_a))
    parts = [f"{md_cell(name)} ({n} feed(s) of {rating:g} A assumed, worst {worst:.1f} A per "
             f"phase)" for name, (n, rating, worst) in sorted(assumed.items())]
    text = (f"Feeds assumed, not given (no inlet_a: rated breaker_a x circuits and not "
            f"checked, POWER-FEED-ASSUMED): {'; '.join(parts)}." if parts
            else "Every feed's rating is given (inlet_a) and checked.")
    if given and parts:
        text += (" Feeds given (inlet_a, checked): " +
                 ", ".join(f"{md_cell(name)} ({n})" for name, n in sorted(given.items())) + ".")
    return text


def _pdu_rows(pdus: list[PduLoad]) -> list[str]:
    """Each PDU's row, column by column (the rows are named tuples: their columns at once)."""
    if not pdus:
        return []
    (rack, pdu, _side, layout, _feed, load_w, worst_w, _case, _limit_w, circuit, line,
     worst_a, limit_a, worst_case) = zip(*pdus, strict=True)
    pairs = list(zip(worst_a, limit_a, strict=True))
    return markdown_columns([
        rack, pdu, layout, _texts(load_w, _kw), _texts(worst_w, _kw),
        list(map("{} {}".format, circuit, line)), _texts(worst_a, "{:.1f}".format),
        _texts(limit_a, "{:.1f}".format),
        _texts([p.percent for p in pdus], "{:.0f}".format),
        _pair_texts(pairs, lambda worst, limit: f"{limit - worst:.1f}"), worst_case])


def _pair_texts(pairs: list[tuple[float, float]],
                form: Callable[[float, float], str]) -> list[str]:
    """form(a, b) of each pair, each distinct pair once; pairs with a zero one by one (0.0
    and -0.0 are one key but may print apart)."""
    text = {pair: form(*pair) for pair in set(pairs)}
    return [text[pair] if pair[0] and pair[1] else form(*pair) for pair in pairs]


def _texts(values: Sequence[float], form: Callable[[float], str]) -> list[str]:
    """form(value) of each, each distinct value once (identical racks repeat their loads);
    zeros one by one (0.0 and -0.0 are one key but print apart)."""
    text = {value: form(value) for value in set(values)}
    return [text[value] if value else form(value) for value in values]


def _cooling(plan: Plan) -> dict[str, Any]:
    loads = rack_loads_w(plan)
    air = plan.settings.policy.air_cooled_rack_kw
    rows = []
    ordered = sorted(plan.racks, key=lambda r: r.name)
    for rack, name in zip(ordered, md_cells([r.name for r in ordered]), strict=True):
        heat = loads[rack.name] / 1000
        cap = rack.liquid_capacity_kw if rack.cooling == "liquid" else air
        rows.append((name, rack.cooling, f"{heat:.2f}",
                     f"{cap:g}" if cap else "-", f"{cap - heat:.2f}" if cap else "-"))
    cooling = {kind: md_cell(kind) for kind in {row[1] for row in rows}}
    racks = [f"| {name} | {cooling[kind]} | {heat} | {cap} | {margin} |"
             for name, kind, heat, cap, margin in rows]
    rejection = plan.settings.cooling.heat_rejection_kw
    total = sum(loads.values()) / 1000
    rejection_text = (f"facility heat rejection {rejection:g} kW, margin {rejection - total:.2f} kW"
                      if rejection else "no facility heat rejection declared "
                                        "(cooling.heat_rejection_kw)")
    return {"racks": "\n".join(racks), "total": f"{total:.2f}", "air_limit": f"{air:g}",
            "rejection": rejection_text, "loops": report_storage.loops(plan)}


def _busbw(plan: Plan, asked: Mapping[str, Jobs] | None = None) -> dict[str, Any]:
    """One table per partition: each job size, every algorithm's busbw, NCCL's pick;
    ``asked``: each partition's asked_jobs by name, where the caller has them."""
    policy = plan.settings.policy
    size = collectives.message_bytes(policy.allreduce_message_size)
    tables = []
    for partition in plan.partitions:
        jobs = (asked[partition.name] if asked is not None
                else collectives.asked_jobs(plan, partition))
        rows = [_busbw_row(p) for p in collectives.partition_predictions(plan, partition, jobs)]
        rows += [_unheld_row(job) for job in collectives.oversized(jobs)]
        if rows:
            tables.append({"name": partition.name, "rows": rows})
    job = policy.min_allreduce_busbw_job
    return {
        "size": collectives.size_text(size), "bytes": str(size), "tables": tables,
        "minimum": f"{policy.min_allreduce_busbw_gbs:g} GB/s"
        if policy.min_allreduce_busbw_gbs else "none",
        "job": _JOB_TEXT.get(str(job), f"{job} GPUs"),
        "labels": [collectives.LABELS[a] for a in collectives.ALGORITHMS],
        "nics": str(constants.NICS_PER_DOMAIN),
        "efficiency": [{"arch": arch, "ring": f"{e.ring:g}", "nvls": f"{e.nvls:g}" if e.nvls
                        else "-", "nvls_tree": f"{e.nvls_tree:g}" if e.nvls_tree else "-"}
                       for arch, e in constants.EFFICIENCY.items()],
        "network": ", ".join(f"{k} {v:g}" for k, v in constants.NETWORK_EFFICIENCY.items()),
        "sources": [{"what": w, "value": v, "source": s} for w, v, s in constants.SOURCES]}


_JOB_TEXT = {"partition": "the whole partition", "node": "one node",
             "nvlink_domain": "one NVLink domain", "scalable_unit": "one scalable unit"}


def _busbw_row(p: collectives.JobPrediction) -> dict[str, Any]:
    s = p.shape
    per_algorithm = []
    for algorithm in collectives.ALGORITHMS:
        found = p.of(algorithm)
        per_algorithm.append("-" if found is None else f"{found.busbw_gbs:.1f}")
    chosen = p.chosen
    return {
        "job": _JOB_TEXT.get(p.job, p.job), "nodes": str(s.nodes), "gpus": str(s.gpus),
        "domains": f"{s.domains} x {s.domain_gpus}",
        "nics": f"{s.net_line_gbs:.1f}" if s.domains > 1 and s.net_line_gbs else "-",
        "oversub": f"{s.oversubscription:.3g}:1" if s.domains > 1 and s.net_line_gbs else "-",
        "algorithms": per_algorithm,
        "picks": chosen.label if chosen else "-",
        "busbw": f"{chosen.busbw_gbs:.1f}" if chosen else "-",
        "limit": chosen.limit if chosen else p.missing,
        "latency": f"{100 * chosen.latency_us / chosen.time_us:.1f}" if chosen else "-"}


def _unheld_row(job: str) -> dict[str, Any]:
    """A size policy.allreduce_job_sizes asks for that the partition cannot hold."""
    return {"job": job, "nodes": "-", "gpus": "-", "domains": "-", "nics": "-", "oversub": "-",
            "algorithms": ["-"] * len(collectives.ALGORITHMS), "picks": "-", "busbw": "-",
            "limit": "the partition holds fewer GPUs (GOODPUT-JOB-SIZE)", "latency": "-"}


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _storage(plan: Plan) -> dict[str, Any]:
    f = storage_figures(plan)
    policy = plan.settings.policy
    return {
        "read": _opt(f.read_gbs, ".1f"), "per_gpu": _opt(f.read_gbs_per_gpu, ".3f"),
        "need": _opt(f.need_gbs_per_gpu, "g"), "write": _opt(f.write_gbs, ".1f"),
        "size": _opt(f.checkpoint_size_gb, "g"), "write_s": _opt(f.write_s, ".1f"),
        "interval": _opt(f.interval_min, "g"),
        "overhead": _opt(None if f.overhead is None else 100 * f.overhead, ".2f"),
        "max_overhead": f"{100 * policy.max_checkpoint_overhead:g}",
        "job_mtbf": _opt(f.job_mtbf_h if f.job_gpus else None, ".2f"),
        "job_gpus": f"{f.job_gpus:,}", "job_partition": f.job_partition, "gpus": str(f.gpus),
        "young": _opt(f.young_min, ".1f"), "daly": _opt(f.daly_min, ".1f"),
        "lustre": report_storage.lustre_hardware(plan)}


def _findings(plan: Plan) -> list[dict[str, str]]:
    order = {"error": 0, "warning": 1, "info": 2}
    rows = [{"severity": d.severity.value, "code": d.code,
             "message": d.message.replace("|", "\\|"),
             "path": ".".join(str(p) for p in d.path) or "-"} for d in plan.findings]
    return sorted(rows, key=lambda r: (order[r["severity"]], r["code"], r["path"], r["message"]))
