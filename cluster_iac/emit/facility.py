"""PDU breaker tables for electricians and DC ops: every circuit line's cords and currents in
normal operation and in its worst single failure, each PDU's worst case, and the totals."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from cluster_iac.emit.base import render_template
from cluster_iac.emit.formats import csv_text
from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PduLoad, PowerCircuit, PowerFeed, PowerLine

LINE_COLUMNS = (
    "row", "rack", "pdu", "feed", "panel", "breaker", "wiring", "voltage_v", "cord_v",
    "breaker_a", "continuous_pct", "limit_a", "line", "outlets", "devices", "normal_a",
    "worst_a", "worst_pct", "worst_case",
)
PDU_COLUMNS = (
    "row", "rack", "pdu", "side", "layout", "feed", "panel", "load_kw", "worst_kw",
    "worst_kw_case", "limit_kw", "worst_breaker", "worst_line", "worst_a", "limit_a",
    "worst_pct", "worst_case",
)
TOTAL_COLUMNS = ("scope", "name", "load_kw", "limit_kw", "load_pct", "facility_kw")


def render(plan: Plan) -> dict[str, str]:
    if not plan.power_devices:
        return {}
    context = facility_context(plan)
    return {
        "facility/pdu_breakers.csv": csv_text(LINE_COLUMNS, [[line[c] for c in LINE_COLUMNS]
                                                         for line in context["lines"]]),
        "facility/pdus.csv": csv_text(PDU_COLUMNS, [[p[c] for c in PDU_COLUMNS]
                                                for p in context["pdus"]]),
        "facility/power_totals.csv": csv_text(TOTAL_COLUMNS, [[t[c] for c in TOTAL_COLUMNS]
                                                          for t in context["totals"]]),
        "facility/pdu_breakers.md": render_template("facility/pdu_breakers.md.j2", **context),
    }


def facility_context(plan: Plan) -> dict[str, Any]:
    """Plain rows: circuit lines and PDUs in plan order (rack, PDU, circuit), grouped by
    rack for the Markdown, and the rack/row/facility totals."""
    rows_of = {r.name: r.row for r in plan.racks}
    feeds = {f.pdu: f for f in plan.power_feeds}
    circuits = {(c.pdu, c.name): c for c in plan.power_circuits}
    lines = [_line(line, circuits[(line.pdu, line.circuit)], feeds[line.pdu], rows_of)
             for line in plan.power_lines]
    pdus = [_pdu(p, feeds[p.pdu], rows_of) for p in plan.power_pdus]
    by_rack: dict[str, dict[str, list[dict[str, str]]]] = defaultdict(
        lambda: {"pdus": [], "lines": []})
    for pdu in pdus:
        by_rack[pdu["rack"]]["pdus"].append(pdu)
    for line in lines:
        by_rack[line["rack"]]["lines"].append(line)
    racks = [{"name": r.name, "row": r.row, **by_rack[r.name]}
             for r in sorted(plan.racks, key=lambda r: r.name)]
    return {"lines": lines, "pdus": pdus, "racks": racks, "totals": totals(plan),
            "pue": f"{plan.settings.power.pue:g}",
            "continuous": f"{plan.settings.policy.breaker_continuous_percent:g}"}


def totals(plan: Plan) -> list[dict[str, str]]:
    """Rack, row and facility loads (sum of maximum draw) against their limits."""
    loads = plan.rack_loads_w
    result = []
    for rack in plan.racks:
        result.append(_total("rack", rack.name, loads[rack.name], rack.max_power_kw))
    for row in plan.rows:
        result.append(_total("row", row.name, sum(loads[r] for r in row.racks), row.max_power_kw))
    it_w = sum(loads.values())
    power = plan.settings.power
    facility = _total("facility", plan.cluster.name, it_w * power.pue, power.facility_capacity_kw)
    facility["load_kw"] = _kw(it_w)  # IT load; facility_kw adds PUE overhead
    result.append(facility)
    return result


def _total(scope: str, name: str, load_w: float, limit_kw: float | None) -> dict[str, str]:
    pct = f"{100 * load_w / (limit_kw * 1000):.1f}" if limit_kw else ""
    return {"scope": scope, "name": name, "load_kw": _kw(load_w),
            "limit_kw": f"{limit_kw:.2f}" if limit_kw else "", "load_pct": pct,
            "facility_kw": _kw(load_w) if scope == "facility" else ""}


def _line(line: PowerLine, c: PowerCircuit, feed: PowerFeed,
          rows_of: dict[str, str]) -> dict[str, Any]:
    outlets = [str(o) if s == line.line else f"{o}:{s}"
               for o, s in zip(line.outlets, line.slots, strict=True)]
    return {
        "row": rows_of[line.rack], "rack": line.rack, "pdu": line.pdu, "feed": feed.name,
        "panel": feed.panel, "breaker": line.circuit, "wiring": c.wiring,
        "voltage_v": f"{c.voltage_v:g}", "cord_v": f"{c.cord_v:.1f}",
        "breaker_a": f"{c.breaker_a:g}", "continuous_pct": f"{c.continuous_percent:g}",
        "limit_a": _amps(line.limit_a), "line": line.line, "outlets": " ".join(outlets),
        "devices": " ".join(line.devices), "normal_a": _amps(line.normal_a),
        "worst_a": _amps(line.worst_a), "worst_pct": f"{line.percent:.1f}",
        "worst_case": line.worst_case,
        "cases": "; ".join(f"{case} {_amps(amps)}" for case, amps in line.cases[1:]) or "-",
        "over": "over" if line.worst_a > line.limit_a + 1e-9 else "ok",
    }


def _pdu(p: PduLoad, feed: PowerFeed, rows_of: dict[str, str]) -> dict[str, str]:
    return {
        "row": rows_of[p.rack], "rack": p.rack, "pdu": p.pdu, "side": p.side,
        "layout": p.layout, "feed": p.feed, "panel": feed.panel, "load_kw": _kw(p.load_w),
        "worst_kw": _kw(p.worst_w), "worst_kw_case": p.worst_w_case, "limit_kw": _kw(p.limit_w),
        "worst_breaker": p.circuit, "worst_line": p.line, "worst_a": _amps(p.worst_a),
        "limit_a": _amps(p.limit_a), "worst_pct": f"{p.percent:.1f}",
        "worst_case": p.worst_case,
    }


def _kw(watts: float) -> str:
    return f"{watts / 1000:.2f}"


def _amps(amps: float) -> str:
    return f"{amps:.1f}"
