"""Power checks: every line current in normal operation and in each single failure, feeds,
PSU redundancy and failover, phase balance, row and facility budgets.

The verdict is per line current, read from the tables the power pass stored (plan.power_lines,
power_feeds, power_outages): a line over its breaker's continuous current (breaker_a x 100 %
when rated for it, else the policy's 80 %, NEC 210.20(A)) trips it, whatever the kW sums say.
One finding per PDU profile and code: the worst line, and how many more share the problem.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.power_text import amps_formula, case_text, limit_text
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.electrical import phase_imbalance
from cluster_iac.plan.power_tables import NORMAL, PowerCircuit, PowerLine

HINT = ("a larger breaker_a, more circuits per PDU (cords spread over more lines), more PDUs "
        "a side (pdus_per_side: 2 splits each side's cords over two PDUs), or fewer devices in "
        "the rack")


def _line_where(line: PowerLine) -> str:
    return f"rack {line.rack} PDU {line.pdu} breaker {line.circuit} line {line.line}"


def _over(code: str, line: PowerLine, circuit: PowerCircuit, amps: float, when: str,
          verdict: str, **details: object) -> tuple[str, float, Diagnostic]:
    """A line over its breaker's continuous current: the (profile, amps, finding) triple that
    worst_per_profile ranks."""
    return (str(circuit.spec_path[2]), amps, Diagnostic(
        code,
        f"{_line_where(line)} carries {amps:.1f} A {when}, {100 * amps / line.limit_a:.0f}% of "
        f"its {limit_text(circuit)}: {amps_formula(circuit, amps)}; over by "
        f"{amps - line.limit_a:.1f} A{verdict}",
        (*circuit.spec_path, "breaker_a"), hint=HINT,
        details={"measured": round(amps, 1), "limit": round(line.limit_a, 2), "unit": "A",
                 **details}))


@check("power.breaker_load")
def breaker_load(plan: Plan) -> Iterator[Diagnostic]:
    """Each line of each breaker carries its cords' maximum draw, in normal operation, within
    the breaker's continuous current."""
    over = [line for line in plan.power_lines if line.normal_a > line.limit_a + 1e-9]
    circuits = _circuits_of(plan, over)
    found = [_over("POWER-BREAKER", line, circuits[(line.pdu, line.circuit)], line.normal_a,
                   "in normal operation", "") for line in over]
    yield from worst_per_profile(found, "line(s)")


@check("power.redundancy")
def redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """Each line stays within its breaker's continuous current in every single failure: a
    partner PDU down (or its feed, or the row panel on its side) and one PSU failed, with the
    load moved to the PSUs left as the devices' redundancy says."""
    over = [line for line in plan.power_lines
            # over in normal operation: POWER-BREAKER already says so
            if line.normal_a <= line.limit_a + 1e-9 and line.worst_a > line.limit_a + 1e-9]
    circuits = _circuits_of(plan, over)
    feeds = {f.pdu: f for f in plan.power_feeds} if over else {}
    found = [_over("POWER-REDUNDANCY", line, circuits[(line.pdu, line.circuit)], line.worst_a,
                   f"with {case_text(line.worst_case, feeds)}", ", so the rack is not redundant",
                   case=line.worst_case) for line in over]
    yield from worst_per_profile(found, "line(s)")


def _circuits_of(plan: Plan, lines: list[PowerLine]) -> dict[tuple[str, str], PowerCircuit]:
    """(PDU, circuit) -> the circuit of each of these lines (none looked up without lines)."""
    wanted = {(line.pdu, line.circuit) for line in lines}
    return {(c.pdu, c.name): c for c in plan.power_circuits if (c.pdu, c.name) in wanted} \
        if wanted else {}


@check("power.feed")
def feed_load(plan: Plan) -> Iterator[Diagnostic]:
    """Where a PDU profile states its inlet rating (inlet_a), each line of each feed, all its
    circuits together, stays within it in normal operation and every single failure."""
    feeds = {f.pdu: f for f in plan.power_feeds}
    found = []
    for feed in plan.power_feeds:
        if not feed.checked:
            continue
        n = max(range(len(feed.lines)), key=lambda k: feed.worst_a[k])
        amps = feed.worst_a[n]
        if amps <= feed.limit_a + 1e-9:
            continue
        case = feed.worst_case[n]
        when = "in normal operation" if case == NORMAL else f"with {case_text(case, feeds)}"
        found.append((str(feed.spec_path[2]), amps, Diagnostic(
            "POWER-FEED",
            f"rack {feed.rack} feed {feed.name} (panel {feed.panel} to PDU {feed.pdu}) line "
            f"{feed.lines[n]} carries {amps:.1f} A {when}, "
            f"{100 * amps / feed.limit_a:.0f}% of its {feed.limit_a:.1f} A limit "
            f"({feed.amperage_a:g} A inlet x {100 * feed.limit_a / feed.amperage_a:g} %); "
            f"over by {amps - feed.limit_a:.1f} A", (*feed.spec_path, "inlet_a"),
            hint="a larger inlet_a where the facility feed is larger, or more PDUs a side "
                 "(pdus_per_side: 2 splits each side's cords over two PDUs, each on its own "
                 "feed)",
            details={"measured": round(amps, 1), "limit": round(feed.limit_a, 2),
                     "unit": "A"})))
    yield from worst_per_profile(found, "feed(s)")


@check("power.phase_imbalance")
def phase_balance(plan: Plan) -> Iterator[Diagnostic]:
    """Line currents of each three-phase PDU (its feed: all circuits) stay within the policy's
    imbalance in normal operation: an unbalanced PDU strands capacity and loads the neutral.
    PDUs loaded below policy.phase_imbalance_min_load_percent of their limit are not checked."""
    policy = plan.settings.policy
    limits = {p.pdu: p.limit_w for p in plan.power_pdus}
    found = []
    known: dict[tuple[float, ...], float] = {}  # identical racks have identical currents
    for feed in plan.power_feeds:
        if feed.phases != 3:
            continue
        imbalance = known.get(feed.normal_a)
        if imbalance is None:
            imbalance = known[feed.normal_a] = phase_imbalance(
                dict(zip(feed.lines, feed.normal_a, strict=True)))
        limit = limits[feed.pdu]
        if imbalance <= policy.max_phase_imbalance:
            continue
        if 100 * feed.load_w < policy.phase_imbalance_min_load_percent * limit:
            continue
        amps = ", ".join(f"{line} {a:.1f} A"
                         for line, a in zip(feed.lines, feed.normal_a, strict=True))
        found.append((str(feed.spec_path[2]), imbalance, Diagnostic(
            "POWER-PHASE-IMBALANCE",
            f"rack {feed.rack} PDU {feed.pdu} phase imbalance {100 * imbalance:.0f}% ({amps}) "
            f"at {100 * feed.load_w / limit:.0f}% load exceeds the policy's "
            f"{100 * policy.max_phase_imbalance:.0f}% by "
            f"{100 * (imbalance - policy.max_phase_imbalance):.0f} points",
            ("policy", "max_phase_imbalance"), Severity.WARNING,
            hint="spread the rack's cords over the three lines (a PDU with more circuits), "
                 "or set policy.max_phase_imbalance",
            decided_by=(feed.spec_path,),
            details={"measured": round(imbalance, 3), "limit": policy.max_phase_imbalance,
                     "unit": "ratio"})))
    yield from worst_per_profile(found, "PDU(s)")


def worst_per_profile(found: Iterable[tuple[str, float, Diagnostic]],
                      noun: str) -> Iterator[Diagnostic]:
    """One finding per PDU profile: the worst line (or PDU), with how many more share the
    problem (a 1,000-rack cluster gets one line per profile, not one per breaker)."""
    groups: dict[str, list[tuple[float, Diagnostic]]] = defaultdict(list)
    for profile, measured, diag in found:
        groups[profile].append((measured, diag))
    for profile in sorted(groups):
        items = groups[profile]
        measured, diag = max(items, key=lambda item: item[0])  # first of equals: sorted order
        if len(items) > 1:
            diag = replace(diag, message=f"{diag.message} (and {len(items) - 1} more {noun} "
                                         f"of PDU profile {profile})")
        yield diag


@check("power.row_budget")
def row_budget(plan: Plan) -> Iterator[Diagnostic]:
    """A row's racks draw no more than its busway or panel delivers (row max_power_kw)."""
    loads = plan.rack_loads_w
    for row in plan.rows:
        if row.max_power_kw is None:
            continue
        kw = sum(loads[r] for r in row.racks) / 1000
        if kw > row.max_power_kw:
            yield Diagnostic(
                "POWER-ROW",
                f"row {row.name} draws {kw:.1f} kW at maximum, {100 * kw / row.max_power_kw:.0f}% "
                f"of its {row.max_power_kw:g} kW budget; over by {kw - row.max_power_kw:.1f} kW",
                (*row.spec_path, "max_power_kw"),
                details={"measured": round(kw, 3), "limit": row.max_power_kw, "unit": "kW"})


def facility_load_kw(plan: Plan) -> tuple[float, float]:
    """(IT load, facility load = IT load x PUE) in kW."""
    it_kw = sum(plan.rack_loads_w.values()) / 1000
    return it_kw, it_kw * plan.settings.power.pue


@check("power.facility_budget")
def facility_budget(plan: Plan) -> Iterator[Diagnostic]:
    """IT load x PUE within the facility's power capacity (power.facility_capacity_kw)."""
    capacity = plan.settings.power.facility_capacity_kw
    if capacity is None:
        return
    it_kw, total_kw = facility_load_kw(plan)
    if total_kw > capacity:
        yield Diagnostic(
            "POWER-FACILITY",
            f"the cluster draws {it_kw:.1f} kW IT load x PUE {plan.settings.power.pue:g} = "
            f"{total_kw:.1f} kW, {100 * total_kw / capacity:.0f}% of the facility's "
            f"{capacity:g} kW; over by {total_kw - capacity:.1f} kW",
            ("power", "facility_capacity_kw"),
            hint=f"fewer or lower-power devices (the cluster may draw {capacity:g} kW / PUE "
                 f"{plan.settings.power.pue:g} = {capacity / plan.settings.power.pue:.1f} kW "
                 f"of IT load), or power.facility_capacity_kw: {math.ceil(total_kw):d} or "
                 f"more where the site has that capacity",
            details={"measured": round(total_kw, 3), "limit": capacity, "unit": "kW"})
