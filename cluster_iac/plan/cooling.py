"""Liquid loops from physics: the heat a loop carries is flow x density x c_p x temperature rise.

Q [kW] = V [m3/s] x rho [kg/m3] x c_p [kJ/(kg K)] x (T_return - T_supply) [K], the steady-flow
energy balance of an incompressible liquid (ASHRAE Handbook - Fundamentals, ch. 3 and ch. 31).
Density and c_p are the coolant's at the loop's mean temperature, from the catalog (water:
NIST/IAPWS-95; PG25: ASHRAE). With one pump down, a loop whose ``required`` pumps each deliver
flow / required keeps min(1, (count - 1) / required) of its flow, and of its heat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cluster_iac.base.errors import SpecPath
from cluster_iac.base.hostlist import HostlistError, expand
from cluster_iac.plan.model import Plan
from cluster_iac.plan.power import rack_loads_w

LITRES_PER_M3 = 1000
SECONDS_PER_MINUTE = 60


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class LoopFigures:
    """One liquid loop: what it must carry and what it can, kW."""

    name: str
    racks: tuple[str, ...]
    coolant: str  # catalog key
    mean_c: float  # mean of supply and return, where the properties are taken
    density: float  # kg/m3 at mean_c
    cp: float  # kJ/(kg K) at mean_c
    rise_k: float  # return - supply
    flow_lpm: float
    heat_kw: float  # IT load of the loop's racks
    flow_kw: float  # what the design flow carries at the rise
    one_pump_down_kw: float  # the same with one pump down
    cdu_kw: float | None  # what its CDUs exchange together (None: no capacity given)
    spec_path: SpecPath
    cdus: int = 1  # CDUs on the loop in parallel
    one_cdu_down_kw: float | None = None  # what the others exchange with one down


def properties_at(points: Sequence[Any], temperature_c: float) -> tuple[float, float]:
    """(density, c_p) at a temperature: linear between the catalog's rows, held at its ends."""
    rows = sorted(points, key=lambda p: p.temperature_c)
    if temperature_c <= rows[0].temperature_c:
        return rows[0].density_kg_m3, rows[0].cp_kj_kg_k
    for low, high in zip(rows, rows[1:], strict=False):
        if temperature_c <= high.temperature_c:
            share = (temperature_c - low.temperature_c) / (high.temperature_c - low.temperature_c)
            return (low.density_kg_m3 + share * (high.density_kg_m3 - low.density_kg_m3),
                    low.cp_kj_kg_k + share * (high.cp_kj_kg_k - low.cp_kj_kg_k))
    return rows[-1].density_kg_m3, rows[-1].cp_kj_kg_k


def loop_heat_kw(flow_lpm: float, density: float, cp: float, rise_k: float) -> float:
    """Heat carried by a liquid flow: V x rho x c_p x dT, in kW."""
    return flow_lpm / LITRES_PER_M3 / SECONDS_PER_MINUTE * density * cp * rise_k


def loop_racks(racks_expr: str) -> list[str]:
    """The rack names of a loop's hostlist (HostlistError when it is not one)."""
    return expand(racks_expr)


def loop_figures(plan: Plan) -> list[LoopFigures]:
    """Figures of every loop whose coolant and racks resolve (the checks report the others)."""
    loads = rack_loads_w(plan)
    known = {r.name for r in plan.racks}
    out = []
    for index, loop in enumerate(plan.settings.cooling.loops):
        coolant = plan.catalog.coolants.get(loop.coolant)
        try:
            racks = tuple(r for r in loop_racks(loop.racks) if r in known)
        except HostlistError:
            continue
        if coolant is None or loop.return_c <= loop.supply_c:
            continue
        mean = (loop.supply_c + loop.return_c) / 2
        density, cp = properties_at(coolant.points, mean)
        rise = loop.return_c - loop.supply_c
        flow_kw = loop_heat_kw(loop.flow_lpm, density, cp, rise)
        pumps = loop.pumps
        share = min(1.0, (pumps.count - 1) / pumps.required)
        out.append(LoopFigures(
            name=loop.name, racks=racks, coolant=loop.coolant, mean_c=mean, density=density,
            cp=cp, rise_k=rise, flow_lpm=loop.flow_lpm,
            heat_kw=sum(loads[r] for r in racks) / 1000, flow_kw=flow_kw,
            one_pump_down_kw=flow_kw * share, cdu_kw=_times(loop.cdu_capacity_kw, loop.cdus),
            spec_path=("cooling", "loops", index), cdus=loop.cdus,
            one_cdu_down_kw=_times(loop.cdu_capacity_kw, loop.cdus - 1)))
    return out


def _times(kw: float | None, count: int) -> float | None:
    """``count`` CDUs of ``kw`` each (None: no capacity given)."""
    return None if kw is None else kw * count
