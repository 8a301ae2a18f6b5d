"""The facts the lock holds of delivered hardware (its 'serial' and 'guid' lines) for the
devices the plan still has: a line of a device that is gone stays in the lock as retired,
and no output names it."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.plan import Plan
from cluster_iac.plan.facts import Facts
from cluster_iac.spec import ClusterSpec


def plan_facts(spec: ClusterSpec, plan: Plan) -> Plan:
    """Facts(serials, guids) from the lock, for planned devices only."""
    devices = {d.name for d in plan.devices}
    serials = {e.key[2]: str(e.value[0]) for e in plan.lock.of_kind("serial", "")
               if e.key[2] in devices}
    guids = {(e.key[2], e.key[1]): int(str(e.value[0]), 16)
             for scope in sorted({s for kind, s in plan.lock.groups if kind == "guid"})
             for e in plan.lock.of_kind("guid", scope) if e.key[2] in devices}
    return replace(plan, facts=Facts(serials, guids))
