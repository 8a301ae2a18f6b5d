"""Cabling plan: every cable with both ends, medium, length and labels; a bill of materials."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from cluster_iac.catalog.cables import CableCatalog, CableMedium, cable_catalog
from cluster_iac.emit.base import render_template
from cluster_iac.emit.devices import Device, Link, devices, links
from cluster_iac.emit.formats import csv_text
from cluster_iac.plan import Plan

# Cable-id prefix per network, so a crew can tell a cable's network from its label.
ID_PREFIX = {"compute": "CF", "storage": "SF", "management": "MG", "bmc": "OB", "power": "PW"}
CABLE_COLUMNS = ("cable_id", "network", "a_row", "a_rack", "a_u", "a_device", "a_port",
                 "b_row", "b_rack", "b_u", "b_device", "b_port", "speed_gbps", "medium",
                 "netbox_type", "transceivers", "estimated_m", "length_m")


@dataclass(frozen=True)
class End:
    """Where one end of a cable plugs in."""

    row: str
    rack: str
    u: int | None
    device: str
    port: str


@dataclass(frozen=True)
class Cable:
    """One cable of the plan, with its medium and stocked length."""

    cable_id: str
    network: str
    a: End
    b: End
    speed_gbps: int
    medium: CableMedium
    estimated_m: float
    length_m: float


def render(plan: Plan) -> dict[str, str]:
    cables = plan_cables(plan)
    return {
        "cabling/cables.csv": csv_text(CABLE_COLUMNS, [_cable_row(c) for c in cables]),
        "cabling/labels.csv": csv_text(("cable_id", "end", "label"), _label_rows(cables)),
        "cabling/bom.csv": csv_text(("item", "type", "speed_gbps", "length_m", "quantity"),
                                bom_rows(cables)),
        "cabling/bom.md": render_template("cabling/bom.md.j2", **_bom_context(plan, cables)),
    }


def _bom_context(plan: Plan, cables: list[Cable]) -> dict[str, object]:
    names = {m.key: m.name for m in cable_catalog().media}
    rows = [{"item": item, "name": names[key], "speed": speed if speed != "0" else "-",
             "length": length or "-", "quantity": quantity}
            for item, key, speed, length, quantity in bom_rows(cables)]
    optics = sum(int(r["quantity"]) for r in rows if r["item"] == "transceiver")
    return {"cluster": plan.cluster.name, "total": len(cables), "optics": optics > 0,
            "optics_total": optics, "rows": rows}


# The cabling plan and the NetBox import both need every cable of the same plan: remember
# the last plan's cables (by identity; the plan is immutable) instead of choosing twice.
_LAST: list[tuple[Plan, tuple[Cable, ...]]] = []


def plan_cables(plan: Plan) -> list[Cable]:
    """Every link of the plan as a cable with a unique id, medium and length."""
    if _LAST and _LAST[0][0] is plan:
        return list(_LAST[0][1])
    cables = _plan_cables(plan)
    _LAST[:] = [(plan, tuple(cables))]
    return cables


def _plan_cables(plan: Plan) -> list[Cable]:
    catalog = cable_catalog()
    by_name = {d.name: d for d in devices(plan)}
    geometry = _RackGeometry(plan, catalog)
    psu_ratings = _psu_ratings(plan)
    counters: Counter[str] = Counter()
    cables = []
    for link in links(plan):
        a = _end(by_name, link.a_device, link.a_port, geometry)
        b = _end(by_name, link.b_device, link.b_port, geometry)
        estimated = round(geometry.length_m(a, b), 2)
        psu_w = link.psu_w or psu_ratings.get(link.b_device, 0) if link.network == "power" else 0
        medium, length = choose_medium(catalog, link, psu_w, estimated)
        counters[link.network] += 1
        cable_id = f"{ID_PREFIX.get(link.network, 'XX')}-{counters[link.network]:05d}"
        cables.append(Cable(cable_id, link.network, a, b, link.speed_gbps, medium, estimated,
                            length))
    return cables


class _RackGeometry:
    """Rack positions on the floor and the Manhattan cable route between two ends."""

    def __init__(self, plan: Plan, catalog: CableCatalog) -> None:
        g = catalog.geometry
        self.g = g
        row_index = {row.name: i for i, row in enumerate(plan.rows)}
        self.rack_row = {r.name: r.row for r in plan.racks}
        self.rack_xy = {r.name: (r.position * g.rack_width_mm, row_index[r.row] * g.row_pitch_mm)
                        for r in plan.racks}
        self.rack_top = {r.name: r.height_u * g.u_height_mm for r in plan.racks}

    def height_mm(self, end: End, other: End) -> float:
        """Height of a port above the rack floor: the middle of the device's lowest U.
        0U devices (vertical PDUs) span the rack, so the cord leaves level with its device."""
        if end.u is None or end.u == 0:
            return self.height_mm(other, end) if other.u else self.rack_top.get(end.rack, 0) / 2
        return (end.u - 0.5) * self.g.u_height_mm

    def length_m(self, a: End, b: End) -> float:
        za, zb = self.height_mm(a, b), self.height_mm(b, a)
        if a.rack == b.rack:
            route = abs(za - zb)
            return max(route / 1000, self.g.in_rack_min_m) + self.g.slack_m
        (xa, ya), (xb, yb) = self.rack_xy[a.rack], self.rack_xy[b.rack]
        up = (self.rack_top[a.rack] - za) + (self.rack_top[b.rack] - zb) + 2 * self.g.tray_rise_mm
        return (up + abs(xa - xb) + abs(ya - yb)) / 1000 + self.g.slack_m


def _end(by_name: dict[str, Device], name: str, port: str, geometry: _RackGeometry) -> End:
    device = by_name.get(name)
    rack = device.rack if device else ""
    return End(geometry.rack_row.get(rack, ""), rack, device.u if device else None, name, port)


def _psu_ratings(plan: Plan) -> dict[str, float]:
    """Device -> rating of one of its PSUs, for choosing C13 or C19 cords."""
    ratings = {n.hostname: float(plan.node_types[n.node_type].psu_rating_w) for n in plan.nodes}
    ratings.update({s.name: s.max_power_w / s.psu_required for s in plan.switches})
    return ratings


def choose_medium(catalog: CableCatalog, link: Link, psu_w: float,
                  estimated_m: float) -> tuple[CableMedium, float]:
    """The first (cheapest) medium that carries the link's rate this far, in a stocked length."""
    for medium in catalog.media:
        if not _fits(medium, link, psu_w):
            continue
        reach = math.inf if link.link == "power" else medium.reach_at(link.speed_gbps)
        stocked = medium.stocked_length(estimated_m)
        if reach is not None and stocked is not None and stocked <= reach:
            return medium, stocked
    ends = f"{link.a_device}:{link.a_port} - {link.b_device}:{link.b_port}"
    raise ValueError(f"no cable medium carries {link.speed_gbps} Gb/s {link.link} over "
                     f"{estimated_m} m ({ends})")


def _fits(medium: CableMedium, link: Link, psu_w: float) -> bool:
    if link.link == "power":
        return medium.link == "power" and (medium.max_psu_w or 0) >= psu_w
    return medium.link in ("any", link.link)


def allowed(medium: CableMedium, speed_gbps: int, length_m: float) -> bool:
    """Whether ``medium`` may carry ``speed_gbps`` over ``length_m`` (power cords: by stock)."""
    if medium.link == "power":
        return length_m <= max(medium.stocked_m)
    reach = medium.reach_at(speed_gbps)
    return reach is not None and length_m <= reach


def _fmt_m(value: float) -> str:
    return f"{value:g}"


def _cable_row(c: Cable) -> list[str]:
    return [c.cable_id, c.network, c.a.row, c.a.rack, _u(c.a), c.a.device, c.a.port,
            c.b.row, c.b.rack, _u(c.b), c.b.device, c.b.port, str(c.speed_gbps), c.medium.key,
            c.medium.netbox_type, str(c.medium.transceivers), _fmt_m(c.estimated_m),
            _fmt_m(c.length_m)]


def _u(end: End) -> str:
    return "" if end.u is None else str(end.u)


def label_text(cable_id: str, near: End, far: End) -> str:
    """TIA-606 style end label: the cable id, then near end > far end as rack.U device:port."""
    return f"{cable_id} {_where(near)} > {_where(far)}"


def _where(end: End) -> str:
    u = f".U{end.u:02d}" if end.u else ""
    return f"{end.rack}{u} {end.device}:{end.port}"


def _label_rows(cables: list[Cable]) -> list[list[str]]:
    rows = []
    for c in cables:
        rows.append([c.cable_id, "A", label_text(c.cable_id, c.a, c.b)])
        rows.append([c.cable_id, "B", label_text(c.cable_id, c.b, c.a)])
    return rows


def bom_rows(cables: list[Cable]) -> list[list[str]]:
    """Cables by medium and length, and transceivers by speed (two per optical link)."""
    cable_count = Counter((c.medium.key, c.speed_gbps, c.length_m) for c in cables)
    optics: Counter[tuple[str, int]] = Counter()
    for c in cables:
        if c.medium.transceivers:
            optics[(c.medium.key, c.speed_gbps)] += c.medium.transceivers
    rows = [["cable", key, str(speed), _fmt_m(length), str(n)]
            for (key, speed, length), n in sorted(cable_count.items())]
    rows += [["transceiver", key, str(speed), "", str(n)]
             for (key, speed), n in sorted(optics.items())]
    return rows
