"""Power alerts from the plan's power tables: each circuit line and PDU at its continuous
limit, the inlet where its rating is stated, rack and row budgets, the one-PDU-lost margin.

The PDUs are read over SNMP with the ServerTech Sentry4-MIB (snmp.yml, module 'sentry4'). A
plan PDU is one Sentry4 unit (st4UnitIndex 1) with one input cord, its inlet (st4InputCordIndex
1): st4InputCordActivePower is the PDU's real power (W), st4LineCurrent the inlet lines' RMS
currents (hundredths of an ampere, st4LineIndex x = line Lx). Its branch circuits are Sentry4
branches, one per breaker pole: circuit CBn line Lx is st4BranchIndex (n - 1) x lines + x (3
lines on a three-phase circuit, 1 on a single-phase one); st4BranchCurrent is that line's
current through the breaker (hundredths of an ampere). A Sentry4 that numbers its branches
otherwise (per line pair on a delta PDU) needs its own mapping here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import attrgetter
from typing import TypeVar

from cluster_iac.base.sorting import natural_key
from cluster_iac.emit.monitoring.promql import AlertRule, number, one_of, selector
from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PduLoad, PowerCircuit, PowerFeed

JOB = "pdu"
BRANCH_CURRENT = "st4BranchCurrent"
LINE_CURRENT = "st4LineCurrent"
CORD_POWER = "st4InputCordActivePower"
MIB = "ServerTech Sentry4-MIB"
FOR = "5m"  # a breaker's trip curve tolerates short peaks; a sustained overload is the risk


def rule_groups(plan: Plan) -> list[tuple[str, list[AlertRule]]]:
    if not plan.power_circuits:
        return []
    groups = [("power-pdus", pdu_rules(plan)),
              ("power-racks", rack_rules(plan) + redundancy_rules(plan)),
              ("power-rows", row_rules(plan) + facility_rules(plan))]
    return [(name, rules) for name, rules in groups if rules]


def pdu_rules(plan: Plan) -> list[AlertRule]:
    """Per PDU profile (one breaker rating, voltage and circuit count for all its PDUs): each
    circuit line above its breaker's continuous current, each PDU above its circuits'
    continuous power, and each inlet line above the inlet rating where the spec states it."""
    profile_of = {d.name: d.model for d in plan.power_devices}
    circuits: dict[str, list[PowerCircuit]] = defaultdict(list)
    for c in plan.power_circuits:
        circuits[profile_of[c.pdu]].append(c)
    pdus: dict[str, list[PduLoad]] = defaultdict(list)
    for p in plan.power_pdus:
        pdus[profile_of[p.pdu]].append(p)
    feeds: dict[str, list[PowerFeed]] = defaultdict(list)
    for f in plan.power_feeds:
        feeds[profile_of[f.pdu]].append(f)
    rules = []
    for profile in sorted(circuits):
        c = _one(profile, circuits[profile], ("breaker_a", "limit_a", "phases", "voltage_v"),
                 ("limit_w",))
        pdu = _one(profile, pdus[profile], (), ("limit_w",))
        count = len({x.name for x in circuits[profile]})
        rules += [_branch_rule(profile, c), _pdu_power_rule(profile, c, pdu.limit_w, count)]
        feed = _one(profile, feeds[profile], ("limit_a", "checked"))
        if feed.checked:
            rules.append(_inlet_rule(profile, feed))
    return rules


def _branch_rule(profile: str, c: PowerCircuit) -> AlertRule:
    expr = f"{selector(BRANCH_CURRENT, job=JOB, pdu_profile=profile)} / 100 > {number(c.limit_a)}"
    lines = "3" if c.phases == 3 else "1"
    return AlertRule(
        alert="PduCircuitLineOverCurrent", expr=expr, severity="critical", for_=FOR,
        labels={"pdu_profile": profile},
        summary=("{{ $labels.pdu }} branch {{ $labels.st4BranchIndex }} (circuit CBn line Lx "
                 f"= branch (n - 1) x {lines} + x) carries {{{{ $value }}}} A, above the "
                 f"{number(c.limit_a)} A its {number(c.breaker_a)} A breaker may carry "
                 "continuously"),
        threshold=f"{number(c.limit_a)} A = {number(c.breaker_a)} A breaker x {_percent(c)}",
        source=(f"power.pdu_profiles.{profile} (breaker_a, rated_100_percent) and "
                "policy.breaker_continuous_percent (plan.power_circuits limit_a); NEC 210.20(A); "
                f"{MIB} {BRANCH_CURRENT} (hundredths of an ampere)"))


def _pdu_power_rule(profile: str, c: PowerCircuit, limit_w: float, circuits: int) -> AlertRule:
    each = "" if circuits == 1 else f"{circuits} circuits x "
    return AlertRule(
        alert="PduOverPower",
        expr=f"{selector(CORD_POWER, job=JOB, pdu_profile=profile)} > {number(limit_w)}",
        severity="critical", for_=FOR, labels={"pdu_profile": profile},
        summary=(f"{{{{ $labels.pdu }}}} draws {{{{ $value }}}} W, above the {_kw(limit_w)} kW "
                 "its circuits may carry continuously"),
        threshold=f"{_kw(limit_w)} kW = {each}{_formula(c)} x {_percent(c)}",
        source=(f"power.pdu_profiles.{profile} (circuits, voltage_v, phases, breaker_a, "
                "power_factor, rated_100_percent; plan.power_pdus limit_w, plan/electrical.py); "
                f"{MIB} {CORD_POWER} (watts)"))


def _inlet_rule(profile: str, f: PowerFeed) -> AlertRule:
    expr = f"{selector(LINE_CURRENT, job=JOB, pdu_profile=profile)} / 100 > {number(f.limit_a)}"
    return AlertRule(
        alert="PduInletLineOverCurrent", expr=expr, severity="critical", for_=FOR,
        labels={"pdu_profile": profile},
        summary=("{{ $labels.pdu }} inlet line L{{ $labels.st4LineIndex }} carries "
                 f"{{{{ $value }}}} A, above the {number(f.limit_a)} A its "
                 f"{number(f.amperage_a)} A feed breaker may carry continuously"),
        threshold=f"{number(f.limit_a)} A: the feed's continuous current (plan.power_feeds)",
        source=(f"power.pdu_profiles.{profile}.inlet_a and policy.breaker_continuous_percent; "
                f"NEC 210.20(A); {MIB} {LINE_CURRENT} (hundredths of an ampere)"))


def rack_rules(plan: Plan) -> list[AlertRule]:
    """Racks above their power budget (max_power_kw), one rule per distinct budget."""
    by_budget: dict[float, list[str]] = defaultdict(list)
    paths: dict[float, set[str]] = defaultdict(set)
    for rack in plan.racks:
        if rack.max_power_kw:
            by_budget[rack.max_power_kw].append(rack.name)
            paths[rack.max_power_kw].add(f"{_path(rack.spec_path)}.max_power_kw")
    return [AlertRule(
        alert="RackOverPowerBudget",
        expr=f"sum by (rack, row) ({_racks(plan, racks)}) > {number(kw * 1000)}",
        severity="critical", for_=FOR, labels={"limit": f"{kw:g} kW"},
        summary=f"rack {{{{ $labels.rack }}}} draws {{{{ $value }}}} W, above its {kw:g} kW budget",
        threshold=f"{kw:g} kW: the rack's max_power_kw",
        source=f"{_names(paths[kw])}; {MIB} {CORD_POWER} (watts)")
        for kw, racks in sorted(by_budget.items())]


def redundancy_rules(plan: Plan) -> list[AlertRule]:
    """Racks fed by two or three PDUs whose load no longer fits the PDUs left after the worst
    single PDU (or feed) failure: 2N for 'ab', any two of three for 'three'."""
    limits: dict[str, list[float]] = defaultdict(list)
    for p in plan.power_pdus:
        limits[p.rack].append(p.limit_w)
    profile_of = {r.name: r.pdu_profile for r in plan.racks}
    by_margin: dict[float, list[str]] = defaultdict(list)
    for rack, pdus in limits.items():
        if len(pdus) > 1:
            by_margin[round(sum(pdus) - max(pdus), 6)].append(rack)
    return [AlertRule(
        alert="RackPowerRedundancyLost",
        expr=f"sum by (rack, row) ({_racks(plan, racks)}) > {number(watts)}",
        severity="warning", for_="15m", labels={"limit": f"{_kw(watts)} kW"},
        summary=("rack {{ $labels.rack }} draws {{ $value }} W: if one PDU or feed fails, the "
                 f"others ({_kw(watts)} kW of continuous circuit limits) cannot carry it"),
        threshold=f"{_kw(watts)} kW = the rack's PDU limits less its largest PDU's",
        source=(f"{_profiles(racks, profile_of)} (layout, circuits: plan.power_pdus "
                f"limit_w); {MIB} {CORD_POWER} (watts)"))
        for watts, racks in sorted(by_margin.items())]


def row_rules(plan: Plan) -> list[AlertRule]:
    """Rows above their power budget (the row's busway or panel)."""
    return [AlertRule(
        alert="RowOverPowerBudget",
        expr=f"sum by (row) ({selector(CORD_POWER, job=JOB, row=row.name)}) "
             f"> {number(row.max_power_kw * 1000)}",
        severity="critical", for_=FOR,
        summary=(f"row {row.name} draws {{{{ $value }}}} W, above its {row.max_power_kw:g} kW "
                 "budget"),
        threshold=f"{row.max_power_kw:g} kW: the row's max_power_kw",
        source=f"{_path(row.spec_path)}.max_power_kw; {MIB} {CORD_POWER} (watts)")
        for row in plan.rows if row.max_power_kw]


def facility_rules(plan: Plan) -> list[AlertRule]:
    """The IT load above what the facility can supply once cooling and losses (PUE) are paid."""
    power = plan.settings.power
    if not power.facility_capacity_kw:
        return []
    it_w = power.facility_capacity_kw * 1000 / power.pue
    return [AlertRule(
        alert="FacilityOverPowerCapacity",
        expr=f"sum({selector(CORD_POWER, job=JOB)}) > {number(it_w)}",
        severity="critical", for_=FOR,
        summary=(f"the cluster's IT load is {{{{ $value }}}} W: at PUE {power.pue:g} that is "
                 f"above the facility's {power.facility_capacity_kw:g} kW"),
        threshold=(f"{_kw(it_w)} kW = {power.facility_capacity_kw:g} kW facility capacity / "
                   f"PUE {power.pue:g}"),
        source=f"power.facility_capacity_kw and power.pue; {MIB} {CORD_POWER} (watts)")]


Row = TypeVar("Row")


def _one(profile: str, rows: Sequence[Row], fields: tuple[str, ...],
         rounded: tuple[str, ...] = ()) -> Row:
    """The one rating every row of a profile shares (two would be a bug of the power pass):
    ``fields`` compared as they are, ``rounded`` to 6 places; column by column (a profile
    can have 10,000 PDUs)."""
    columns = [map(attrgetter(name), rows) for name in fields]
    columns += [map(round, map(attrgetter(name), rows), repeat(6)) for name in rounded]
    ratings = len(set(zip(*columns, strict=True)))
    if ratings != 1:
        raise ValueError(f"PDU profile {profile!r} has rows of {ratings} ratings")
    return rows[0]


def _racks(plan: Plan, racks: list[str]) -> str:
    """The PDU power series of these racks: by row where they fill whole rows."""
    chosen = set(racks)
    rows = [r for r in plan.rows if set(r.racks) <= chosen]
    if {rack for r in rows for rack in r.racks} == chosen:
        return selector(CORD_POWER, job=JOB, row=one_of(r.name for r in rows))
    return selector(CORD_POWER, job=JOB, rack=one_of(racks))


def _formula(c: PowerCircuit) -> str:
    """A circuit's real power at its rating, said the way its wiring makes it: three-phase
    P = sqrt(3) x V_LL x I x PF, which on a wye circuit is 3 lines x V_LN (its cords'
    voltage, V_LL / sqrt(3)) x I x PF; single phase V x I x PF."""
    amps, pf = f"{number(c.breaker_a)} A", f"PF {number(c.power_factor)}"
    if c.phases != 3:
        return f"{number(c.voltage_v)} V x {amps} x {pf} (single phase)"
    head = f"sqrt(3) x {number(c.voltage_v)} V line-to-line x {amps} x {pf}"
    if c.wiring == "wye":
        return f"{head} (= 3 lines x {c.cord_v:.1f} V line-to-neutral x {amps} x {pf})"
    return f"{head} ({c.wiring})"


def _percent(c: PowerCircuit) -> str:
    share = c.continuous_percent
    why = "breaker rated for 100 % continuous load" if c.rated_100_percent else "continuous"
    return f"{number(share)} % ({why})"


def _kw(watts: float) -> str:
    return f"{watts / 1000:.2f}"


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names, key=natural_key))


def _profiles(racks: list[str], profile_of: dict[str, str]) -> str:
    return _names({f"power.pdu_profiles.{profile_of[r]}" for r in racks})


def _path(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p)
                   for i, p in enumerate(path))
