"""PDU breaker tables for electricians and DC ops: every circuit line's cords and currents in
normal operation and in its worst single failure, each PDU's worst case, and the totals."""

from __future__ import annotations

from collections import defaultdict

from cluster_iac.emit.base import render_template
from cluster_iac.emit.formats import csv_text, markdown_row
from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PduLoad, PowerCircuit, PowerFeed

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
    rows_of = {r.name: r.row for r in plan.racks}
    feeds = {f.pdu: f for f in plan.power_feeds}
    markdown: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"pdus": [], "lines": []})
    lines = _line_rows(plan, feeds, rows_of, markdown)
    pdus = _pdu_rows(plan, feeds, rows_of, markdown)
    racks = [{"name": r.name, "row": r.row, **markdown[r.name]}
             for r in sorted(plan.racks, key=lambda r: r.name)]
    totals = total_rows(plan)
    context = {"racks": racks, "totals": [markdown_row(t) for t in totals],
               "pue": f"{plan.settings.power.pue:g}",
               "continuous": f"{plan.settings.policy.breaker_continuous_percent:g}"}
    return {
        "facility/pdu_breakers.csv": csv_text(LINE_COLUMNS, lines),
        "facility/pdus.csv": csv_text(PDU_COLUMNS, pdus),
        "facility/power_totals.csv": csv_text(TOTAL_COLUMNS, totals),
        "facility/pdu_breakers.md": render_template("facility/pdu_breakers.md.j2", **context),
    }


def _line_rows(plan: Plan, feeds: dict[str, PowerFeed], rows_of: dict[str, str],
               markdown: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """One CSV row per circuit line (plan order), and its Markdown row under its rack."""
    circuits = {(c.pdu, c.name): c for c in plan.power_circuits}
    ratings: dict[tuple[str | int, ...], list[str]] = {}
    amps_of = _Amps()
    rows = []
    for line in plan.power_lines:
        c = circuits[(line.pdu, line.circuit)]
        rating = ratings.get(c.spec_path) or ratings.setdefault(c.spec_path, _rating(c))
        feed = feeds[line.pdu]
        if line.slots.count(line.line) == len(line.slots):  # wye and single phase
            outlets = " ".join(map(str, line.outlets))
        else:  # delta: each outlet with its line pair
            outlets = " ".join(f"{o}:{s}" for o, s in zip(line.outlets, line.slots, strict=True))
        devices = " ".join(line.devices)
        normal, worst, limit = amps_of[line.normal_a], amps_of[line.worst_a], amps_of[line.limit_a]
        pct = f"{line.percent:.1f}"
        rows.append([rows_of[line.rack], line.rack, line.pdu, feed.name, feed.panel,
                     line.circuit, *rating, limit, line.line, outlets, devices, normal, worst,
                     pct, line.worst_case])
        cases = "; ".join(f"{case} {amps_of[amps]}" for case, amps in line.cases[1:]) or "-"
        over = "over" if line.worst_a > line.limit_a + 1e-9 else "ok"
        markdown[line.rack]["lines"].append(markdown_row(
            (line.pdu, line.circuit, line.line, outlets, devices, normal, cases, worst, limit,
             pct, over)))
    return rows


def _rating(c: PowerCircuit) -> list[str]:
    """wiring, voltage_v, cord_v, breaker_a, continuous_pct of a circuit (one per profile)."""
    return [c.wiring, f"{c.voltage_v:g}", f"{c.cord_v:.1f}", f"{c.breaker_a:g}",
            f"{c.continuous_percent:g}"]


def _pdu_rows(plan: Plan, feeds: dict[str, PowerFeed], rows_of: dict[str, str],
              markdown: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    rows = []
    for p in plan.power_pdus:
        row = _pdu(p, feeds[p.pdu], rows_of)
        rows.append(row)
        markdown[p.rack]["pdus"].append(markdown_row(
            (p.pdu, p.side, p.feed, row[6], row[7], row[8], f"{p.circuit} {p.line}", row[13],
             row[14], row[15], p.worst_case)))
    return rows


def _pdu(p: PduLoad, feed: PowerFeed, rows_of: dict[str, str]) -> list[str]:
    return [rows_of[p.rack], p.rack, p.pdu, p.side, p.layout, p.feed, feed.panel,
            _kw(p.load_w), _kw(p.worst_w), p.worst_w_case, _kw(p.limit_w), p.circuit, p.line,
            _amps(p.worst_a), _amps(p.limit_a), f"{p.percent:.1f}", p.worst_case]


def total_rows(plan: Plan) -> list[list[str]]:
    """Rack, row and facility loads (sum of maximum draw) against their limits; the
    facility's load_kw is the IT load, facility_kw adds the PUE's overhead."""
    loads = plan.rack_loads_w
    result = [_total("rack", rack.name, loads[rack.name], rack.max_power_kw)
              for rack in plan.racks]
    result += [_total("row", row.name, sum(loads[r] for r in row.racks), row.max_power_kw)
               for row in plan.rows]
    it_w = sum(loads.values())
    power = plan.settings.power
    facility = _total("facility", plan.cluster.name, it_w * power.pue, power.facility_capacity_kw)
    facility[2], facility[5] = _kw(it_w), _kw(it_w * power.pue)
    return [*result, facility]


def _total(scope: str, name: str, load_w: float, limit_kw: float | None) -> list[str]:
    pct = f"{100 * load_w / (limit_kw * 1000):.1f}" if limit_kw else ""
    return [scope, name, _kw(load_w), f"{limit_kw:.2f}" if limit_kw else "", pct, ""]


def _kw(watts: float) -> str:
    return f"{watts / 1000:.2f}"


def _amps(amps: float) -> str:
    return f"{amps:.1f}"


class _Amps(dict[float, str]):
    """'33.6' for each current, each distinct value formatted once per render (identical
    racks repeat the same currents thousands of times)."""

    def __missing__(self, amps: float) -> str:
        text = self[amps] = f"{amps:.1f}"
        return text
