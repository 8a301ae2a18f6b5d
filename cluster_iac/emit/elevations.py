"""Rack elevations: each rack of a sheet drawn front-on, every device at its U.

A sheet is a run of one row's racks (drawings.sheets), drawn left to right in the row's
order. The grid: a U is ``U_PX`` pixels; U1's bottom edge is the sheet's baseline, so racks of
different heights stand on one floor; a device from U u of height h spans
[baseline - (u + h - 1) x U_PX, baseline - (u - 1) x U_PX]. The plan's device table
(plan.devices: row, rack, U, height: the table the cabling and NetBox emitters read) is the
only source of where a device is. Every device faces front, as NetBox is told
(emit/netbox.py: each racked device's face is 'front'); 0U PDUs stand beside the rack body,
side A on the left, B on the right, C and D outside them. Each rack's header says its load
(the devices' maximum draw, plan.rack_loads_w) against its max_power_kw, and its cooling:
air against policy.air_cooled_rack_kw, or liquid against the rack's liquid_capacity_kw and the
loop it is on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from xml.etree.ElementTree import Element

from cluster_iac.emit import svg
from cluster_iac.plan import Plan
from cluster_iac.plan.cooling import loop_figures
from cluster_iac.plan.model import Rack
from cluster_iac.plan.physical import Device
from cluster_iac.plan.power import rack_loads_w

U_PX = 12
HEADER = 52  # the rack's name, its power and its cooling, above its tallest neighbour
LABELS = 24  # the U numbers' column, left of each rack
STRIP = 11  # a 0U PDU's width
BODY = 170  # the rack's inside width (19-inch rails)
GAP = 18  # between two racks
MARGIN = 10
LEGEND = 150  # one role's swatch and name


def rack_devices(plan: Plan) -> dict[str, list[Device]]:
    """Each rack's devices, in the device table's order."""
    by_rack: dict[str, list[Device]] = defaultdict(list)
    for device in plan.devices:
        by_rack[device.rack].append(device)
    return by_rack


def _sides(devices: Sequence[Device]) -> tuple[list[Device], list[Device]]:
    """The rack's 0U PDUs: (left of the body, right of it), innermost first. (A device the
    placement could not place has no U, None: it is drawn nowhere; the checks report it.)"""
    zero = [d for d in devices if d.u == 0]
    return zero[0::2], zero[1::2]


def _slot(left: int, right: int) -> int:
    return LABELS + (left + right) * STRIP + BODY + GAP


def rack_loops(plan: Plan) -> dict[str, str]:
    """Each liquid-cooled rack's loop, by rack name."""
    return {rack: fig.name for fig in loop_figures(plan) for rack in fig.racks}


STYLE = (".u { font-size: 8px; text-anchor: end; fill: #78909c; } "
         ".name { font-size: 12px; font-weight: bold; } .note { fill: #455a64; } "
         ".over { fill: #c62828; font-weight: bold; } .d { font-size: 9px; } "
         ".pdu { font-size: 8px; }")


def elevation(plan: Plan, racks: Sequence[Rack], title: str,
              by_rack: dict[str, list[Device]], loops: dict[str, str]) -> Element:
    """The SVG of these racks (one row's, in order) side by side; ``loops`` is rack_loops."""
    loads = rack_loads_w(plan)
    air_kw = plan.settings.policy.air_cooled_rack_kw
    tallest = max((r.height_u for r in racks), default=42)
    baseline = MARGIN + HEADER + tallest * U_PX
    sides = {r.name: _sides(by_rack.get(r.name, ())) for r in racks}
    width = MARGIN * 2 + sum(_slot(len(a), len(b)) for a, b in sides.values()) - GAP
    roles = sorted({(d.kind, d.role) for r in racks for d in by_rack.get(r.name, ())},
                   key=lambda kind_role: kind_role[1])
    width = max(width, MARGIN * 2 + LEGEND)
    per_line = (width - 2 * MARGIN) // LEGEND
    lines = -(-len(roles) // per_line)
    root = svg.drawing(width, baseline + 2 * U_PX + MARGIN + 16 * lines, title, STYLE)
    _legend(root, roles, baseline + 2 * U_PX, per_line)
    x = MARGIN
    numbered = 0  # the height of the last rack whose U numbers were drawn
    for rack in racks:
        left, right = sides[rack.name]
        body_x = x + LABELS + len(left) * STRIP
        group = svg.group(root, {"rack": rack.name, "height-u": str(rack.height_u),
                                 "u-px": str(U_PX)})
        _header(group, rack, body_x, baseline - rack.height_u * U_PX - 6,
                loads.get(rack.name, 0.0), air_kw, loops.get(rack.name))
        top = baseline - rack.height_u * U_PX
        body = svg.rect(group, body_x, top, BODY, rack.height_u * U_PX, "#eceff1",
                        {"rack-body": rack.name})
        svg.tooltip(body, f"{rack.name}: {rack.height_u}U, row {rack.row}, front")
        if rack.height_u != numbered:  # the first rack, and each of another height
            numbered = rack.height_u
            for u in (1, *range(5, rack.height_u + 1, 5)):
                svg.text(group, body_x - len(left) * STRIP - 3, baseline - (u - 1) * U_PX - 2,
                         str(u), css="u")
        for index, pdu in enumerate(left):
            _strip(group, pdu, body_x - (index + 1) * STRIP, top, rack.height_u)
        for index, pdu in enumerate(right):
            _strip(group, pdu, body_x + BODY + index * STRIP, top, rack.height_u)
        for device in by_rack.get(rack.name, ()):
            if device.u and device.height_u:
                _device(group, device, body_x, baseline)
        x += _slot(len(left), len(right))
    return root


def _legend(root: Element, roles: list[tuple[str, str]], y: int, per_line: int) -> None:
    """A swatch and the name of each role on the sheet, ``per_line`` to a line."""
    for index, (kind, role) in enumerate(roles):
        x = MARGIN + index % per_line * LEGEND
        top = y + index // per_line * 16
        svg.rect(root, x, top, 10, 10, svg.colour(kind, role))
        svg.text(root, x + 14, top + 9, role, css="d")


def _header(group: Element, rack: Rack, x: int, y: int, load_w: float, air_kw: float,
            loop: str | None) -> None:
    kw = load_w / 1000
    limit = rack.max_power_kw
    over = limit is not None and limit > 0 and kw > limit
    power = f"{kw:.2f} kW of {limit:g} kW" if limit else f"{kw:.2f} kW (no limit)"
    if rack.cooling == "liquid":
        cap = rack.liquid_capacity_kw
        cooling = f"liquid {cap:g} kW" if cap else "liquid"
        cooling += f", loop {loop}" if loop else ""
        hot = cap is not None and cap > 0 and kw > cap
    else:
        cooling = f"air, {air_kw:g} kW"
        hot = bool(air_kw) and kw > air_kw
    svg.text(group, x, y - 28, rack.name, css="name")
    svg.text(group, x, y - 14, power, css="over" if over else "")
    svg.text(group, x, y, cooling, css="over" if hot else "note")


def _strip(group: Element, pdu: Device, x: int, top: int, height_u: int) -> None:
    shape = svg.rect(group, x, top, STRIP - 1, height_u * U_PX, svg.colour(pdu.kind, pdu.role),
                     {"device": pdu.name, "role": pdu.role})
    svg.tooltip(shape, f"{pdu.name}: {pdu.model}, 0U {pdu.position}")
    svg.text(group, x + STRIP - 3, top + height_u * U_PX - 4, pdu.name, css="pdu",
             rotate=True)


def _device(group: Element, device: Device, body_x: int, baseline: int) -> None:
    u, height = device.u or 0, device.height_u
    top = baseline - (u + height - 1) * U_PX
    shape = svg.rect(group, body_x + 1, top, BODY - 2, height * U_PX,
                     svg.colour(device.kind, device.role),
                     {"device": device.name, "role": device.role, "face": "front"})
    last = u + height - 1
    span = f"U{u:02d}" if height == 1 else f"U{u:02d}-U{last:02d}"
    svg.tooltip(shape, f"{device.name}: {device.role}, {device.model}, {span}, front")
    svg.text(group, body_x + 5, top + height * U_PX // 2 + 4, f"{device.name}  {device.model}",
             css="d" if height == 1 else "")
