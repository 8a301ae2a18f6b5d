"""Rows and rack groups -> one Rack per rack name."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.base.hostlist import expand
from cluster_iac.plan import Plan, Rack, Row
from cluster_iac.spec import ClusterSpec


def expand_racks(spec: ClusterSpec, plan: Plan) -> Plan:
    """Every rack with its row, floor position and limits."""
    rows: list[Row] = []
    racks: list[Rack] = []
    for r, row in enumerate(spec.rows):
        names: list[str] = []
        for g, group in enumerate(row.racks):
            for name in expand(group.names):
                names.append(name)
                racks.append(Rack(
                    name=name, row=row.name, position=len(names), height_u=group.height_u,
                    max_power_kw=group.max_power_kw, max_weight_kg=group.max_weight_kg,
                    cooling=group.cooling, liquid_capacity_kw=group.liquid_capacity_kw,
                    pdu_profile=group.pdu, spec_path=("rows", r, "racks", g),
                    in_rack_cdu=group.in_rack_cdu,
                ))
        rows.append(Row(name=row.name, racks=tuple(names), max_power_kw=row.max_power_kw,
                        spec_path=("rows", r)))
    return replace(plan, rows=tuple(rows), racks=tuple(racks))
