"""PDU breaker tables for electricians and DC ops: every breaker's devices, loads and failover."""

from __future__ import annotations

from typing import Any

from cluster_iac.emit.base import render_template
from cluster_iac.emit.formats import csv_text
from cluster_iac.plan import Plan, electrical
from cluster_iac.plan.power import CircuitLoad, PduLoad, circuit_loads, pdu_loads, rack_loads_w

BREAKER_COLUMNS = (
    "row", "rack", "pdu", "feed_side", "breaker", "phase", "voltage_v", "breaker_a",
    "continuous_pct", "limit_kw", "devices", "outlets", "load_kw", "load_pct",
    "i_l1_a", "i_l2_a", "i_l3_a", "failover_case", "failover_kw", "failover_pct",
    "failover_max_a",
)
TOTAL_COLUMNS = ("scope", "name", "load_kw", "limit_kw", "load_pct", "facility_kw")


def render(plan: Plan) -> dict[str, str]:
    if plan.graphs.get("power") is None:
        return {}
    context = facility_context(plan)
    return {
        "facility/pdu_breakers.csv": csv_text(BREAKER_COLUMNS, [_breaker_row(b) for b in
                                                            context["breakers"]]),
        "facility/power_totals.csv": csv_text(TOTAL_COLUMNS, [[t[c] for c in TOTAL_COLUMNS]
                                                          for t in context["totals"]]),
        "facility/pdu_breakers.md": render_template("facility/pdu_breakers.md.j2", **context),
    }


def facility_context(plan: Plan) -> dict[str, Any]:
    """Plain, sorted rows: breakers, PDUs per rack, and rack/row/facility totals."""
    rows_of = {r.name: r.row for r in plan.racks}
    continuous = plan.settings.policy.breaker_continuous_percent
    breakers = [_breaker(c, rows_of[c.rack], continuous) for c in circuit_loads(plan)]
    pdus = [_pdu(p, rows_of[p.rack]) for p in pdu_loads(plan)]
    racks = [{"name": r.name, "row": r.row,
              "pdus": [p for p in pdus if p["rack"] == r.name],
              "breakers": [b for b in breakers if b["rack"] == r.name]}
             for r in sorted(plan.racks, key=lambda r: r.name)]
    return {"breakers": breakers, "racks": racks, "totals": totals(plan),
            "pue": f"{plan.settings.power.pue:g}", "continuous": f"{continuous:g}"}


def totals(plan: Plan) -> list[dict[str, str]]:
    """Rack, row and facility loads (sum of maximum draw) against their limits."""
    loads = rack_loads_w(plan)
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


def _breaker(c: CircuitLoad, row: str, continuous: float) -> dict[str, Any]:
    currents = c.phase_current_a
    return {
        "row": row, "rack": c.rack, "pdu": c.pdu, "feed_side": c.side, "breaker": c.name,
        "phase": _phase(c), "voltage_v": f"{c.voltage_v:g}", "breaker_a": f"{c.breaker_a:g}",
        "continuous_pct": "100" if c.rated_100_percent else f"{continuous:g}",
        "limit_kw": _kw(c.limit_w), "devices": " ".join(c.devices),
        "outlets": " ".join(c.outlets), "load_kw": _kw(c.load_w), "load_pct": f"{c.percent:.1f}",
        "i_l1_a": _amps(currents.get("L1")), "i_l2_a": _amps(currents.get("L2")),
        "i_l3_a": _amps(currents.get("L3")),
        "currents": "/".join(_amps(currents[p]) for p in sorted(currents)),
        "failover_case": c.failover_case or "-",
        "failover_kw": _kw(c.failover_w), "failover_pct": f"{c.failover_percent:.1f}",
        "failover_max_a": _amps(max(c.failover_phase_current_a.values(), default=0.0)),
    }


def _pdu(p: PduLoad, row: str) -> dict[str, str]:
    return {"row": row, "rack": p.rack, "pdu": p.pdu, "side": p.side, "layout": p.layout,
            "load_kw": _kw(p.load_w), "failover_kw": _kw(p.failover_w),
            "failover_case": p.failover_case or "-", "limit_kw": _kw(p.limit_w),
            "failover_pct": f"{100 * p.failover_w / p.limit_w:.1f}"}


def _phase(c: CircuitLoad) -> str:
    if c.phases == 1:
        return "1-phase"
    return "3-phase wye" if electrical.is_wye(c.voltage_v) else "3-phase delta"


def _breaker_row(b: dict[str, Any]) -> list[str]:
    return [b[c] for c in BREAKER_COLUMNS]


def _kw(watts: float) -> str:
    return f"{watts / 1000:.2f}"


def _amps(amps: float | None) -> str:
    return "" if amps is None else f"{amps:.1f}"
