"""PDU breaker tables for electricians and DC ops: every circuit line's cords and currents in
normal operation and in its worst single failure (the verdict), each PDU's worst case, and
the totals (CSV); and pdu_breakers.md, the page a reviewer reads: the method, the row and
facility totals, how the lines load their breakers, and the racks and lines nearest their
limits, every one over it among them, with each of these lines' current in every single
failure. The page names the CSV files for every row rather than print them again (a
100,000-GPU cluster has 39,000 lines: a second, 10 MB copy of pdu_breakers.csv)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence, Sized
from heapq import nlargest
from operator import attrgetter, itemgetter, truediv
from typing import Any

from cluster_iac.emit.base import render_template
from cluster_iac.formats.csv import csv_columns, csv_text
from cluster_iac.formats.markdown import markdown_columns, markdown_rows
from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PowerFeed

LINE_COLUMNS = (
    "row", "rack", "pdu", "feed", "panel", "breaker", "wiring", "voltage_v", "cord_v",
    "breaker_a", "continuous_pct", "limit_a", "line", "outlets", "devices", "psus", "normal_a",
    "worst_a", "worst_pct", "worst_case",
)
PDU_COLUMNS = (
    "row", "rack", "pdu", "side", "layout", "feed", "panel", "load_kw", "worst_kw",
    "worst_kw_case", "limit_kw", "worst_breaker", "worst_line", "worst_a", "limit_a",
    "worst_pct", "worst_case",
)
TOTAL_COLUMNS = ("scope", "name", "load_kw", "limit_kw", "load_pct", "facility_kw")
TIGHTEST = 20
"""How many lines, and racks, pdu_breakers.md lists nearest their limit besides every one over
it: enough to show the tightest breakers of each kind of rack; the rest are in the CSV files."""
BANDS = (90, 80, 70, 50, 0)
"""The lower bounds (% of the limit) of the bands the page counts lines in, over 100 % apart."""
OVER_A = 1e-9
"""A line is over its limit when its worst current exceeds the limit by more than this (A):
the float error of summing its cords' currents is not an overload."""


def render(plan: Plan) -> dict[str, str]:
    if not plan.power_devices:
        return {}
    rows_of = {r.name: r.row for r in plan.racks}
    feeds = {f.pdu: f for f in plan.power_feeds}
    lines, markdown = _line_rows(plan, feeds, rows_of)
    totals = total_rows(plan)
    worst = [line.worst_a for line in plan.power_lines]
    limit = [line.limit_a for line in plan.power_lines]
    chosen, over = _tightest(worst, limit, OVER_A)
    racks, racks_over, limited = _tightest_racks(plan)
    context = {"totals": "\n".join(markdown_rows(t for t in totals if t[0] != "rack")),
               "lines": "\n".join(markdown_columns(_page_lines(markdown, chosen))),
               "line_count": len(worst), "lines_over": over, "bands": _bands(worst, limit),
               "racks": "\n".join(markdown_rows(racks)), "rack_count": len(plan.racks),
               "racks_over": racks_over, "racks_limited": limited, "tightest": TIGHTEST,
               "pue": f"{plan.settings.power.pue:g}",
               "continuous": f"{plan.settings.policy.breaker_continuous_percent:g}"}
    return {
        "facility/pdu_breakers.csv": csv_columns(LINE_COLUMNS, lines),
        "facility/pdus.csv": csv_columns(PDU_COLUMNS, _pdu_rows(plan, feeds, rows_of)),
        "facility/power_totals.csv": csv_text(TOTAL_COLUMNS, totals),
        "facility/pdu_breakers.md": render_template("facility/pdu_breakers.md.j2", **context),
    }


def _line_rows(plan: Plan, feeds: dict[str, PowerFeed], rows_of: dict[str, str],
               ) -> tuple[list[Sequence[str]], list[Sequence[Any]]]:
    """The CSV's columns, one row per circuit line (plan order), and the page's columns for
    the same lines (rack first; each line's cases as they are, for _page_lines to format
    those of the lines it shows). Built column by column: identical racks repeat the same
    outlets and currents, so each distinct one is formatted once and looked up with map."""
    lines = plan.power_lines
    if not lines:
        return [() for _ in LINE_COLUMNS], [()] * 12
    (rack, pdu, circuit, line, limit_a, outlets, slots, devices, normal_a, cases, worst_a,
     worst_case, psu_labels) = zip(*lines, strict=True)
    amps = _Amps()
    ratings = list(zip(*map(_ratings(plan).__getitem__, pdu), strict=True))
    outlet_text = _Outlets()
    outlets_col = list(map(outlet_text.__getitem__, zip(outlets, slots, line, strict=True)))
    psus = list(map(" ".join, psu_labels))
    normal, worst, limit = (list(map(amps.__getitem__, col)) for col in (normal_a, worst_a,
                                                                          limit_a))
    against = list(zip(worst_a, limit_a, strict=True))
    percent = list(map(_Percent().__getitem__, against))
    columns: list[Sequence[str]] = [
        list(map(rows_of.__getitem__, rack)), rack, pdu, *_feed_columns(feeds, pdu), circuit,
        *ratings, limit, line, outlets_col, list(map(" ".join, devices)), psus, normal, worst,
        percent, worst_case]
    page = [rack, pdu, circuit, line, outlets_col, psus, normal, cases, worst, limit,
            percent, list(map(_Verdict().__getitem__, against))]
    return columns, page


def _page_lines(page: list[Sequence[Any]], chosen: list[int]) -> list[list[str]]:
    """The page's columns of the chosen lines, each line's single failures (the eighth
    column, its cases) formatted for these lines only."""
    columns = [list(map(column.__getitem__, chosen)) for column in page]
    if columns:
        columns[7] = _failures(columns[7], _Amps())
    return columns


def _tightest(loads: Sequence[float], limits: Sequence[float], margin: float,
              ) -> tuple[list[int], int]:
    """The indexes of every load over its limit (by more than ``margin``) and of the TIGHTEST
    others nearest theirs, the highest share of its limit first (plan order among equals),
    and how many are over."""
    over = sum(1 for load, limit in zip(loads, limits, strict=True) if load > limit + margin)
    shares = list(map(truediv, loads, limits))
    return nlargest(over + TIGHTEST, range(len(shares)), key=shares.__getitem__), over


def _bands(loads: Sequence[float], limits: Sequence[float]) -> str:
    """The page's line-loading table: how many lines are over their limit, and how many load
    it in each band below (identical racks share their lines' currents: each distinct pair
    is placed once)."""
    counts = dict.fromkeys(["over", *BANDS], 0)
    for (load, limit), n in Counter(zip(loads, limits, strict=True)).items():
        if load > limit + OVER_A:
            counts["over"] += n
        else:
            counts[next(b for b in BANDS if 100 * load / limit >= b)] += n
    labels = ["over 100 %", *(f"{low}-{high} %" for low, high in zip(BANDS, (100, *BANDS[:-1]),
                                                                        strict=True))]
    labels[-1] = f"under {BANDS[-2]} %"
    return "\n".join(markdown_rows([label, str(n)] for label, n in zip(labels, counts.values(),
                                                                        strict=True)))


def _tightest_racks(plan: Plan) -> tuple[list[list[str]], int, int]:
    """The page's rack rows (every rack over its max_power_kw and the TIGHTEST others nearest
    it, as _tightest orders lines), how many are over, and how many state a limit."""
    limited = [r for r in plan.racks if r.max_power_kw]
    loads = [plan.rack_loads_w[r.name] for r in limited]
    limits = [1000 * r.max_power_kw for r in limited if r.max_power_kw]
    chosen, over = _tightest(loads, limits, 0.0)
    rows = [[limited[n].name, limited[n].row, _kw(loads[n]), _kw(limits[n]),
             f"{100 * loads[n] / limits[n]:.1f}"] for n in chosen]
    return rows, over, len(limited)


def _feed_columns(feeds: dict[str, PowerFeed], pdu: Sequence[str]) -> list[list[str]]:
    """The feed and panel of each row's PDU."""
    of_pdu = list(map(feeds.__getitem__, pdu))
    return [list(map(attrgetter("name"), of_pdu)), list(map(attrgetter("panel"), of_pdu))]


def _failures(cases: Sequence[tuple[tuple[str, float], ...]], amps: _Amps) -> list[str]:
    """Each line's cases after its first (normal operation), '<case> <amps>' joined by '; ',
    or '-'. The lines of one number of cases are formatted together, one format of all their
    pairs per line (identical racks give their lines the same number of cases)."""
    texts = ["-"] * len(cases)
    for size, where in _by_size(cases).items():
        if size < 2:
            continue
        pairs = zip(*map(itemgetter(slice(1, None)), map(cases.__getitem__, where)),
                    strict=True)  # the lines' first failure, their second, ...
        columns: list[Iterable[str]] = []
        for nth in pairs:
            columns += (map(itemgetter(0), nth), map(amps.__getitem__, map(itemgetter(1), nth)))
        form = "; ".join(["{} {}"] * (size - 1))
        for at, text in zip(where, map(form.format, *columns), strict=True):
            texts[at] = text
    return texts


def _by_size(rows: Sequence[Sized]) -> dict[int, list[int]]:
    """Length -> the indexes of the rows of that length."""
    where: dict[int, list[int]] = {}
    for at, size in enumerate(map(len, rows)):
        where.setdefault(size, []).append(at)
    return where


class _Outlets(dict[tuple[tuple[int, ...], tuple[str, ...], str], str]):
    """(outlets, slots, line) -> '1 4 7' on a wye or single-phase line; '1:L1-L2 3:L3-L1' on
    a delta line (each outlet with its line pair); each distinct one formatted once."""

    def __missing__(self, key: tuple[tuple[int, ...], tuple[str, ...], str]) -> str:
        outlets, slots, line = key
        if slots.count(line) == len(slots):
            text = " ".join(map(str, outlets))
        else:
            text = " ".join(f"{o}:{s}" for o, s in zip(outlets, slots, strict=True))
        self[key] = text
        return text


class _Percent(dict[tuple[float, float], str]):
    """(amps, limit) -> '53.3', each distinct pair formatted once."""

    def __missing__(self, key: tuple[float, float]) -> str:
        text = self[key] = f"{100 * key[0] / key[1]:.1f}"
        return text


class _Verdict(dict[tuple[float, float], str]):
    """(worst amps, limit) -> 'over' or 'ok', each distinct pair decided once."""

    def __missing__(self, key: tuple[float, float]) -> str:
        text = self[key] = "over" if key[0] > key[1] + OVER_A else "ok"
        return text


def _ratings(plan: Plan) -> dict[str, list[str]]:
    """PDU -> wiring, voltage_v, cord_v, breaker_a, continuous_pct of its circuits (one
    profile per PDU, formatted once per profile)."""
    by_profile: dict[str, list[str]] = {}
    for c in plan.power_circuits:
        profile = str(c.spec_path[2])
        if profile not in by_profile:
            by_profile[profile] = [c.wiring, f"{c.voltage_v:g}", f"{c.cord_v:.1f}",
                                   f"{c.breaker_a:g}", f"{c.continuous_percent:g}"]
    return {d.name: by_profile[d.model] for d in plan.power_devices
            if d.kind == "pdu" and d.model in by_profile}


def _pdu_rows(plan: Plan, feeds: dict[str, PowerFeed], rows_of: dict[str, str],
              ) -> list[Sequence[str]]:
    """The CSV's columns, one row per PDU (plan order), column by column as the lines are."""
    if not plan.power_pdus:
        return [() for _ in PDU_COLUMNS]
    (rack, pdu, side, layout, feed, load_w, worst_w, worst_w_case, limit_w, circuit, line,
     worst_a, limit_a, worst_case) = (list(map(attrgetter(field), plan.power_pdus)) for field in (
        "rack", "pdu", "side", "layout", "feed", "load_w", "worst_w", "worst_w_case", "limit_w",
        "circuit", "line", "worst_a", "limit_a", "worst_case"))
    kw, amps = _Kw(), _Amps()
    load, worst, limit = (list(map(kw.__getitem__, col)) for col in (load_w, worst_w, limit_w))
    worst_amps, limit_amps = (list(map(amps.__getitem__, col)) for col in (worst_a, limit_a))
    percent = list(map(_Percent().__getitem__, zip(worst_a, limit_a, strict=True)))
    panel = _feed_columns(feeds, pdu)[1]
    return [list(map(rows_of.__getitem__, rack)), rack, pdu, side, layout, feed, panel, load,
            worst, worst_w_case, limit, circuit, line, worst_amps, limit_amps, percent,
            worst_case]


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


class _Kw(dict[float, str]):
    """'12.34' kW for each power in W, each distinct value formatted once per render."""

    def __missing__(self, watts: float) -> str:
        text = self[watts] = _kw(watts)
        return text


class _Amps(dict[float, str]):
    """'33.6' for each current, each distinct value formatted once per render (identical
    racks repeat the same currents thousands of times)."""

    def __missing__(self, amps: float) -> str:
        text = self[amps] = f"{amps:.1f}"
        return text
