"""Electrical formulas shared by the power pass, the power checks and the PDU tables."""

from __future__ import annotations

import cmath
import math

# Phase angle of each line of a three-phase supply (ABC rotation), radians.
_LINE_ANGLE = {"L1": 0.0, "L2": -2 * math.pi / 3, "L3": 2 * math.pi / 3}
PHASES = ("L1", "L2", "L3")
# Line pairs of a delta (line-to-line) PDU, e.g. North American 208 V three-phase.
LINE_PAIRS = ("L1-L2", "L2-L3", "L3-L1")


def single_phase_w(volts: float, amps: float, power_factor: float) -> float:
    """Real power of a single-phase circuit: P = V x I x PF."""
    return volts * amps * power_factor


def three_phase_w(volts_ll: float, amps: float, power_factor: float) -> float:
    """Real power of a balanced three-phase circuit: P = sqrt(3) x V_LL x I x PF."""
    return math.sqrt(3) * volts_ll * amps * power_factor


def circuit_capacity_w(volts: float, phases: int, amps: float, power_factor: float) -> float:
    """What a circuit carries at its full breaker rating (single- or three-phase formula)."""
    if phases == 3:
        return three_phase_w(volts, amps, power_factor)
    return single_phase_w(volts, amps, power_factor)


def continuous_limit_w(capacity_w: float, rated_100_percent: bool,
                       continuous_percent: float) -> float:
    """Continuous load allowed: 80 % of the rating (NEC 210.20(A)) unless the breaker and its
    assembly are listed for 100 % continuous duty. ``continuous_percent`` is the policy value."""
    return capacity_w if rated_100_percent else capacity_w * continuous_percent / 100


def outlet_volts(volts: float, phases: int, wye: bool) -> float:
    """Voltage a cord sees: line-to-neutral (V_LL / sqrt 3) on a wye three-phase PDU,
    line-to-line on a delta one, the circuit voltage on a single-phase one."""
    return volts / math.sqrt(3) if phases == 3 and wye else volts


def is_wye(volts_ll: float) -> bool:
    """Three-phase PDUs at 380-415 V are wye with line-to-neutral outlets (230-240 V, IEC 60309
    5-pin); at 208 V (North America) the outlets sit line-to-line on a delta (L6/C19 pairs)."""
    return volts_ll >= 380


def phase_currents(loads_w: dict[str, float], volts: float, phases: int,
                   power_factor: float) -> dict[str, float]:
    """Line currents (A) of a circuit from the real power on each phase or line pair.

    Wye: I_Lx = P_Lx / (V_LN x PF). Delta: the branch currents I_xy = P_xy / (V_LL x PF) are
    combined as phasors (I_L1 = I_12 - I_31 ...), so a balanced load gives sqrt(3) x I_branch.
    Single phase: one current on 'L1'.
    """
    if phases == 1:
        return {"L1": sum(loads_w.values()) / (volts * power_factor)}
    if is_wye(volts):
        v_ln = volts / math.sqrt(3)
        return {p: loads_w.get(p, 0.0) / (v_ln * power_factor) for p in PHASES}
    branch = {pair: loads_w.get(pair, 0.0) / (volts * power_factor) for pair in LINE_PAIRS}
    # A branch current is in phase with its line-to-line voltage (V_12 leads V_1 by 30 deg).
    phasor = {pair: cmath.rect(i, _LINE_ANGLE[pair[:2]] + math.pi / 6)
              for pair, i in branch.items()}
    return {
        "L1": abs(phasor["L1-L2"] - phasor["L3-L1"]),
        "L2": abs(phasor["L2-L3"] - phasor["L1-L2"]),
        "L3": abs(phasor["L3-L1"] - phasor["L2-L3"]),
    }


def phase_imbalance(currents: dict[str, float]) -> float:
    """max |I_phase - I_avg| / I_avg (0 for an unloaded circuit)."""
    values = list(currents.values())
    average = sum(values) / len(values) if values else 0.0
    if average == 0:
        return 0.0
    return max(abs(i - average) for i in values) / average


def cord_slots(volts: float, phases: int) -> tuple[str, ...]:
    """Where a cord can plug on a circuit: a phase (wye), a line pair (delta), or 'L1' (single)."""
    if phases == 1:
        return ("L1",)
    return PHASES if is_wye(volts) else LINE_PAIRS
