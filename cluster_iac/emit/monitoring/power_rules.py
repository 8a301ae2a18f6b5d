"""Power alerts from the plan's limits: each circuit and line, rack and row budgets, 2N margin.

The PDUs are read over SNMP with the ServerTech Sentry4-MIB (snmp.yml, module 'sentry4'): a
plan PDU is one Sentry4 unit (st4UnitIndex 1), its circuit CBn is input cord n
(st4InputCordIndex) and line Lx is st4LineIndex x. st4LineCurrent is the line's RMS current in
hundredths of an ampere; st4InputCordActivePower the cord's real power in watts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from cluster_iac.emit.monitoring.promql import AlertRule, number, one_of, selector
from cluster_iac.plan import Plan
from cluster_iac.plan.power import CircuitLoad, circuit_loads, pdu_loads
from cluster_iac.sorting import natural_key

JOB = "pdu"
LINE_CURRENT = "st4LineCurrent"
CORD_POWER = "st4InputCordActivePower"
MIB = "ServerTech Sentry4-MIB"
FOR = "5m"  # a breaker's trip curve tolerates short peaks; a sustained overload is the risk


def rule_groups(plan: Plan) -> list[tuple[str, list[AlertRule]]]:
    circuits = circuit_loads(plan)
    if not circuits:
        return []
    groups = [("power-circuits", circuit_rules(plan, circuits)),
              ("power-racks", rack_rules(plan) + redundancy_rules(plan)),
              ("power-rows", row_rules(plan) + facility_rules(plan))]
    return [(name, rules) for name, rules in groups if rules]


def circuit_rules(plan: Plan, circuits: list[CircuitLoad]) -> list[AlertRule]:
    """Per PDU profile: each line above the breaker's continuous current, each circuit above
    its continuous power (every circuit of a profile has the same breaker and voltage)."""
    profile_of = {d.name: d.model for d in plan.power_devices}
    by_profile: dict[str, list[CircuitLoad]] = defaultdict(list)
    for c in circuits:
        by_profile[profile_of[c.pdu]].append(c)
    rules = []
    for profile, members in sorted(by_profile.items()):
        c = _one_rating(profile, members)
        rules += [_line_rule(profile, c), _circuit_rule(profile, c)]
    return rules


def line_limit_a(c: CircuitLoad) -> float:
    """The continuous current a breaker pole may carry: its rating x the continuous fraction
    the plan applied to the circuit (limit_w / capacity_w: 100 % or the policy's 80 %)."""
    return c.breaker_a * c.limit_w / c.capacity_w


def _line_rule(profile: str, c: CircuitLoad) -> AlertRule:
    limit = line_limit_a(c)
    expr = f"{selector(LINE_CURRENT, job=JOB, pdu_profile=profile)} / 100 > {number(limit)}"
    return AlertRule(
        alert="PduLineOverCurrent", expr=expr, severity="critical", for_=FOR,
        labels={"pdu_profile": profile},
        summary=("{{ $labels.pdu }} circuit CB{{ $labels.st4InputCordIndex }} line "
                 "L{{ $labels.st4LineIndex }} carries {{ $value }} A, above the "
                 f"{number(limit)} A its {number(c.breaker_a)} A breaker may carry continuously"),
        threshold=f"{number(limit)} A = {number(c.breaker_a)} A breaker x {_percent(c)}",
        source=(f"power.pdu_profiles.{profile} (breaker_a, rated_100_percent) and "
                f"policy.breaker_continuous_percent; NEC 210.20(A); {MIB} {LINE_CURRENT} "
                "(hundredths of an ampere)"))


def _circuit_rule(profile: str, c: CircuitLoad) -> AlertRule:
    return AlertRule(
        alert="PduCircuitOverPower",
        expr=f"{selector(CORD_POWER, job=JOB, pdu_profile=profile)} > {number(c.limit_w)}",
        severity="critical", for_=FOR, labels={"pdu_profile": profile},
        summary=("{{ $labels.pdu }} circuit CB{{ $labels.st4InputCordIndex }} draws "
                 f"{{{{ $value }}}} W, above its {_kw(c.limit_w)} kW continuous limit"),
        threshold=f"{_kw(c.limit_w)} kW = {_formula(c)} x {_percent(c)}",
        source=(f"power.pdu_profiles.{profile} (voltage_v, phases, breaker_a, power_factor, "
                f"rated_100_percent); plan/electrical.py; {MIB} {CORD_POWER} (watts)"))


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
    for p in pdu_loads(plan):
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
        source=(f"{_profiles(racks, profile_of)} (layout, circuits: plan/power.py pdu_loads "
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


def _one_rating(profile: str, circuits: list[CircuitLoad]) -> CircuitLoad:
    ratings = {(c.breaker_a, c.voltage_v, c.phases, c.power_factor, round(c.limit_w, 6))
               for c in circuits}
    if len(ratings) != 1:  # a profile fixes every circuit's rating; two would be a plan bug
        raise ValueError(f"PDU profile {profile!r} has circuits of {len(ratings)} ratings")
    return circuits[0]


def _racks(plan: Plan, racks: list[str]) -> str:
    """The PDU power series of these racks: by row where they fill whole rows."""
    chosen = set(racks)
    rows = [r for r in plan.rows if set(r.racks) <= chosen]
    if {rack for r in rows for rack in r.racks} == chosen:
        return selector(CORD_POWER, job=JOB, row=one_of(r.name for r in rows))
    return selector(CORD_POWER, job=JOB, rack=one_of(racks))


def _formula(c: CircuitLoad) -> str:
    head = "sqrt(3) x " if c.phases == 3 else ""
    return (f"{head}{number(c.voltage_v)} V x {number(c.breaker_a)} A x PF "
            f"{number(c.power_factor)}")


def _percent(c: CircuitLoad) -> str:
    share = 100 * c.limit_w / c.capacity_w
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
