"""How the power findings state a line current: its limit, its formula, its failure case."""

from __future__ import annotations

from cluster_iac.plan.power import shares_its_panel
from cluster_iac.plan.power_tables import NORMAL, PowerCircuit, PowerFeed


def limit_text(c: PowerCircuit) -> str:
    """'25.6 A limit (32 A breaker x 80 %, NEC 210.20(A))'."""
    why = ("listed for 100 % continuous load" if c.rated_100_percent
           else "continuous load, NEC 210.20(A)")
    return (f"{c.limit_a:.1f} A limit ({c.breaker_a:g} A breaker x "
            f"{c.continuous_percent:g} %, {why})")


def amps_formula(c: PowerCircuit, amps: float) -> str:
    """How the current follows from the line's real power, with the circuit's numbers."""
    if c.wiring == "delta":
        return (f"branch currents P_xy / ({c.voltage_v:g} V x {c.power_factor:g} PF) of the "
                f"line pairs through it, combined as phasors (I_L1 = |I_12 - I_31|)")
    watts = amps * c.cord_v * c.power_factor
    formula = f"{watts / 1000:.2f} kW / ({c.cord_v:.1f} V x {c.power_factor:g} PF)"
    if c.wiring == "wye":
        return f"{formula}, line to neutral {c.voltage_v:g} V / sqrt 3 = {c.cord_v:.1f} V"
    return formula


def case_text(case: str, feeds: dict[str, PowerFeed]) -> str:
    """A failure case as a finding says it: a PDU down names its feed and panel too (its feed
    only, when its side has several PDUs: the panel down is then the case 'panel P down', all
    of that side's PDUs)."""
    if case == NORMAL:
        return "all feeds up"
    if case.startswith("PDU ") and case.endswith(" down"):
        feed = feeds.get(case[4:-5])
        if feed is not None and shares_its_panel(feed.pdu):
            return f"{case} (or its feed {feed.name})"
        if feed is not None:
            return f"{case} (or its feed {feed.name}, or panel {feed.panel})"
    if case.startswith("panel ") and case.endswith(" down"):
        return f"{case} (every PDU of its side in the rack)"
    return case
