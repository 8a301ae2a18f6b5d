"""PDU breaker tables for electricians and DC ops: every circuit line's cords and currents in
normal operation and in its worst single failure, each PDU's worst case, and the totals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Sized
from itertools import groupby
from operator import attrgetter, itemgetter

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


def render(plan: Plan) -> dict[str, str]:
    if not plan.power_devices:
        return {}
    rows_of = {r.name: r.row for r in plan.racks}
    feeds = {f.pdu: f for f in plan.power_feeds}
    lines, line_md = _line_rows(plan, feeds, rows_of)
    pdus, pdu_md = _pdu_rows(plan, feeds, rows_of)
    racks = [{"name": r.name, "row": r.row, "pdus": pdu_md.get(r.name, ""),
              "lines": line_md.get(r.name, "")}
             for r in sorted(plan.racks, key=lambda r: r.name)]
    totals = total_rows(plan)
    context = {"racks": racks, "totals": "\n".join(markdown_rows(totals)),
               "pue": f"{plan.settings.power.pue:g}",
               "continuous": f"{plan.settings.policy.breaker_continuous_percent:g}"}
    return {
        "facility/pdu_breakers.csv": csv_columns(LINE_COLUMNS, lines),
        "facility/pdus.csv": csv_columns(PDU_COLUMNS, pdus),
        "facility/power_totals.csv": csv_text(TOTAL_COLUMNS, totals),
        "facility/pdu_breakers.md": render_template("facility/pdu_breakers.md.j2", **context),
    }


def _line_rows(plan: Plan, feeds: dict[str, PowerFeed], rows_of: dict[str, str],
               ) -> tuple[list[Sequence[str]], dict[str, str]]:
    """The CSV's columns, one row per circuit line (plan order), and the Markdown rows by
    rack. Built column by column: identical racks repeat the same outlets and currents, so
    each distinct one is formatted once and looked up with map."""
    lines = plan.power_lines
    if not lines:
        return [() for _ in LINE_COLUMNS], {}
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
    markdown = markdown_columns([pdu, circuit, line, outlets_col, psus, normal,
                                 _failures(cases, amps), worst, limit, percent,
                                 list(map(_Verdict().__getitem__, against))])
    return columns, _by_rack(rack, markdown)


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
        text = self[key] = "over" if key[0] > key[1] + 1e-9 else "ok"
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
              ) -> tuple[list[Sequence[str]], dict[str, str]]:
    """The CSV's columns, one row per PDU (plan order), and the Markdown rows by rack (a
    rack's PDUs are one run of the table), column by column as the lines are."""
    if not plan.power_pdus:
        return [() for _ in PDU_COLUMNS], {}
    (rack, pdu, side, layout, feed, load_w, worst_w, worst_w_case, limit_w, circuit, line,
     worst_a, limit_a, worst_case) = (list(map(attrgetter(field), plan.power_pdus)) for field in (
        "rack", "pdu", "side", "layout", "feed", "load_w", "worst_w", "worst_w_case", "limit_w",
        "circuit", "line", "worst_a", "limit_a", "worst_case"))
    kw, amps = _Kw(), _Amps()
    load, worst, limit = (list(map(kw.__getitem__, col)) for col in (load_w, worst_w, limit_w))
    worst_amps, limit_amps = (list(map(amps.__getitem__, col)) for col in (worst_a, limit_a))
    percent = list(map(_Percent().__getitem__, zip(worst_a, limit_a, strict=True)))
    panel = _feed_columns(feeds, pdu)[1]
    columns: list[Sequence[str]] = [
        list(map(rows_of.__getitem__, rack)), rack, pdu, side, layout, feed, panel, load,
        worst, worst_w_case, limit, circuit, line, worst_amps, limit_amps, percent, worst_case]
    markdown = markdown_columns([pdu, side, feed, panel, load, worst,
                                 list(map("{} {}".format, circuit, line)), worst_amps,
                                 limit_amps, percent, worst_case])
    return columns, _by_rack(rack, markdown)


def _by_rack(rack: Sequence[str], rows: list[str]) -> dict[str, str]:
    """Rack -> its rows, joined into its table's text (each rack's rows are one run of the
    table; str.join here, the template's join filter is per item)."""
    by_rack: dict[str, list[str]] = {}
    start = 0
    for name, run in groupby(rack):
        size = sum(1 for _ in run)
        by_rack.setdefault(name, []).extend(rows[start:start + size])
        start += size
    return {name: "\n".join(mine) for name, mine in by_rack.items()}


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
