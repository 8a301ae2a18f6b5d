"""Every PSU of every planned device has an outlet: a cord the solver found no free outlet
for (a PDU whose free outlets are held by the cords of retired devices, which the lock keeps
empty) is a located POWER-OUTLET error naming the rack, the PDU, the devices left without and
the retired cords holding outlets, never a silently unpowered node. compile/build_power.py
calls unpowered."""

from __future__ import annotations

from typing import Any

from cluster_iac.base.errors import Diagnostic
from cluster_iac.plan import Plan
from cluster_iac.plan.kept import Entry
from cluster_iac.plan.power import pdu_labels, pdu_name

_SHOWN = 6  # retired cords named in one message; the rest counted


def unpowered(plan: Plan, names: dict[str, tuple[str, ...]],
              templates: list[Any]) -> list[Diagnostic]:
    """One error per PDU with a cord left without an outlet (none when each cord has one)."""
    profiles = plan.settings.power.pdu_profiles
    retired: dict[str, list[Entry]] | None = None  # made for the first problem only
    problems = []
    # each template's cords without an outlet, found once for all of its identical racks
    unplugged: dict[Any, list[Any]] = {}
    for rack, template in zip(plan.racks, templates, strict=True):
        left = unplugged.get(template)
        if left is None:
            left = unplugged[template] = [cord for cord in template.flow.cords if not cord.outlet]
        if not left:
            continue
        profile = profiles[rack.pdu_profile]
        labels = pdu_labels(profile)
        devices = names.get(rack.name, ())
        short: dict[int, list[str]] = {}
        for cord in left:
            short.setdefault(cord.pdu, []).append(f"{devices[cord.device]} PSU{cord.psu + 1}")
        for k, cords in sorted(short.items()):
            if template.flow.outlets_needed.get(k, 0) > profile.outlets:
                continue  # more cords than outlets at all: SPEC-PDU-OUTLETS says so
            if retired is None:
                retired = _retired(plan, names)
            problems.append(_problem(plan, rack.name, pdu_name(rack.name, labels[k]), cords,
                                     retired.get(pdu_name(rack.name, labels[k]), []),
                                     rack.pdu_profile))
    return problems


def _retired(plan: Plan, names: dict[str, tuple[str, ...]]) -> dict[str, list[Entry]]:
    """PDU name -> the retired cords the lock holds there (the lock's 100,000 outlet lines at
    100,000 GPUs are walked only when a cord has no outlet)."""
    retired: dict[str, list[Entry]] = {}
    if plan.lock.exists:
        present = {name for devices in names.values() for name in devices}
        for entry in plan.lock.of_kind_all("outlet"):
            if entry.key[2] not in present:  # retired, or gone in this change
                retired.setdefault(entry.value[0], []).append(entry)
    return retired


def _problem(plan: Plan, rack: str, pdu: str, cords: list[str], held: list[Entry],
             profile: str) -> Diagnostic:
    message = (f"rack {rack} PDU {pdu} has no free outlet for {len(cords)} cord(s) "
               f"({_listed(cords)}): the node would be left without power")
    if not held:
        return Diagnostic("POWER-OUTLET", message, ("power", "pdu_profiles", profile,
                                                    "outlets"),
                          hint="raise outlets in the PDU profile, or put fewer devices in "
                               f"rack {rack}")
    held = sorted(held, key=plan.lock.line_of)
    shown = [f"{e.key[2]} {e.key[1]} outlet {e.value[1]}" for e in held]
    message += f"; the lock keeps {len(held)} outlet(s) of retired cords empty ({_listed(shown)})"
    ways = (["'--reallocate retired'"] if any(e.retired for e in held) else []) + [
        f"'--reallocate {name}'" for name in dict.fromkeys(e.key[2] for e in held
                                                            if not e.retired)]
    return plan.lock.error(held[0], "POWER-OUTLET", message, hint=(
        f"free the outlets of the devices that are gone with {' and '.join(ways)} (or delete "
        f"their outlet lines in {plan.lock.file}), raise outlets in the PDU profile, or "
        f"put fewer devices in rack {rack}"))


def _listed(items: list[str]) -> str:
    more = len(items) - _SHOWN
    return ", ".join(items[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
