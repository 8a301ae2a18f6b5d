"""Electrical formulas shared by the power pass, the power checks and the PDU tables.

Sources of the constants and rules:
- P = V x I x PF (single phase), P = sqrt(3) x V_LL x I x PF (balanced three phase): the
  definitions of real power in a sinusoidal circuit (IEC 60050-131, "active power").
- Continuous load: 80 % of the overcurrent device's rating unless the device and its assembly
  are listed for 100 % continuous operation (NFPA 70, NEC 210.20(A) branch circuits and
  215.3 feeders); the 80 % is the policy value ``breaker_continuous_percent``.
- Three-phase PDUs at 380, 400 and 415 V are wye (star) with a neutral: IEC 60309 3P+N+E
  inlets (red, 5 pins) on the IEC 60038 systems 220/380, 230/400 and 240/415 V. Their outlets
  sit line-to-neutral at V_LL / sqrt 3 (219, 231, 240 V).
- Three-phase PDUs at 208 V are delta-connected loads in North America: NEMA L15-30 or
  IEC 60309 3P+E (blue, 4 pins) inlets carry no neutral, so C13/C19 outlets sit line-to-line
  at 208 V on the pairs L1-L2, L2-L3, L3-L1.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Sequence

# Phase angle of each line of a three-phase supply (ABC rotation), radians.
_LINE_ANGLE = {"L1": 0.0, "L2": -2 * math.pi / 3, "L3": 2 * math.pi / 3}
PHASES = ("L1", "L2", "L3")
# Line pairs of a delta (line-to-line) PDU, e.g. North American 208 V three-phase.
LINE_PAIRS = ("L1-L2", "L2-L3", "L3-L1")
# A branch current is in phase with its line-to-line voltage, which leads the first line's
# line-to-neutral voltage by 30 degrees (V_12 = sqrt 3 x V_1 at +30 deg).
_PAIR_PHASOR = tuple(cmath.rect(1.0, _LINE_ANGLE[pair[:2]] + math.pi / 6) for pair in LINE_PAIRS)
# Kirchhoff's current law at each line terminal of a delta: I_L1 = I_12 - I_31, ...
_DELTA_TERMINALS = ((0, 2), (1, 0), (2, 1))
# NetBox's feed leg of an outlet on each line of a wye or single-phase circuit.
FEED_LEG = {"L1": "A", "L2": "B", "L3": "C"}


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


def continuous_percent(rated_100_percent: bool, policy_percent: float) -> float:
    """Share of the rating a continuous load may use: 100 % for a breaker listed for it,
    else the policy's (80 %, NEC 210.20(A))."""
    return 100.0 if rated_100_percent else policy_percent


def continuous_limit_w(capacity_w: float, rated_100_percent: bool,
                       continuous_percent: float) -> float:
    """Continuous load allowed: 80 % of the rating (NEC 210.20(A)) unless the breaker and its
    assembly are listed for 100 % continuous duty. ``continuous_percent`` is the policy value."""
    return capacity_w if rated_100_percent else capacity_w * continuous_percent / 100


def is_wye(volts_ll: float) -> bool:
    """Three-phase PDUs at 380-415 V are wye with line-to-neutral outlets (230-240 V, IEC 60309
    5-pin); at 208 V (North America) the outlets sit line-to-line on a delta (L6/C19 pairs)."""
    return volts_ll >= 380


def wiring(volts: float, phases: int) -> str:
    """'single-phase', 'wye' or 'delta': how a circuit's outlets are connected."""
    if phases == 1:
        return "single-phase"
    return "wye" if is_wye(volts) else "delta"


def outlet_volts(volts: float, phases: int, wye: bool) -> float:
    """Voltage a cord sees: line-to-neutral (V_LL / sqrt 3) on a wye three-phase PDU,
    line-to-line on a delta one, the circuit voltage on a single-phase one."""
    return volts / math.sqrt(3) if phases == 3 and wye else volts


def cord_volts(volts: float, phases: int) -> float:
    """The voltage a cord sees on a circuit of this voltage and phase count."""
    return outlet_volts(volts, phases, is_wye(volts))


def cord_slots(volts: float, phases: int) -> tuple[str, ...]:
    """Where a cord can plug on a circuit: a phase (wye), a line pair (delta), or 'L1' (single)."""
    if phases == 1:
        return ("L1",)
    return PHASES if is_wye(volts) else LINE_PAIRS


def circuit_lines(phases: int) -> tuple[str, ...]:
    """The line conductors of a circuit, each protected by one breaker pole."""
    return PHASES if phases == 3 else ("L1",)


def slot_lines(slot: str) -> tuple[str, ...]:
    """The lines a cord on this slot draws through: 'L1' -> L1; 'L1-L2' -> L1 and L2."""
    return tuple(slot.split("-"))


def line_currents(slot_w: Sequence[float], volts: float, phases: int,
                  power_factor: float) -> tuple[float, ...]:
    """Line currents (A), in circuit_lines order, from the real power on each cord slot
    (cord_slots order).

    Single phase: I = P / (V x PF). Wye: each line carries its own cords, I_Lx = P_Lx /
    (V_LN x PF) with V_LN = V_LL / sqrt 3. Delta: the branch currents I_xy = P_xy / (V_LL x PF)
    are combined as phasors at each line terminal (I_L1 = I_12 - I_31 ...), so a balanced load
    gives sqrt(3) x I_branch and one loaded pair loads its two lines with the branch current.
    """
    if phases == 1:
        return (sum(slot_w) / (volts * power_factor),)
    if is_wye(volts):
        v_ln = volts / math.sqrt(3) * power_factor
        return tuple(w / v_ln for w in slot_w)
    branch = [w / (volts * power_factor) * unit for w, unit in zip(slot_w, _PAIR_PHASOR,
                                                                   strict=True)]
    return tuple(abs(branch[a] - branch[b]) for a, b in _DELTA_TERMINALS)


def phase_currents(loads_w: dict[str, float], volts: float, phases: int,
                   power_factor: float) -> dict[str, float]:
    """Line currents (A) of a circuit by line, from the real power on each phase or line pair
    (see line_currents)."""
    slots = cord_slots(volts, phases)
    amps = line_currents([loads_w.get(s, 0.0) for s in slots], volts, phases, power_factor)
    return dict(zip(circuit_lines(phases), amps, strict=True))


def phase_imbalance(currents: dict[str, float]) -> float:
    """max |I_phase - I_avg| / I_avg (0 for an unloaded circuit)."""
    values = list(currents.values())
    average = sum(values) / len(values) if values else 0.0
    if average == 0:
        return 0.0
    return max(abs(i - average) for i in values) / average
