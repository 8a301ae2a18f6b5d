"""Rack elevations: each rack of a sheet drawn front and rear, every device at its U.

A sheet is a run of one row's racks (drawings.sheets), drawn left to right in the row's
order, twice: the front faces above, the rear faces below, each rack's rear under its front.
The grid: a U is ``U_PX`` pixels; U1's bottom edge is a face's baseline, so racks of different
heights stand on one floor; a device from U u of height h spans
[baseline - (u + h - 1) x U_PX, baseline - (u - 1) x U_PX]. The plan's device table
(plan.devices: row, rack, U, height: the table the cabling and NetBox emitters read) is the
only source of where a device is. What each face shows is what NetBox is told: every racked
device is mounted from the front (emit/netbox.py: its face is 'front') and is full depth
(emit/netbox_types.py: is_full_depth for every device type of 1U or more), so it is drawn on
both faces, at the same U; the vertical 0U PDUs are mounted at the rear (compile/
place_devices.py), so they are drawn beside the rear face only, seen from behind: side A on
the right, B on the left, C and D outside them. Each rack's front header says its load (the
devices' maximum draw, plan.rack_loads_w) against its max_power_kw, and its cooling: air
against policy.air_cooled_rack_kw, or liquid against the rack's liquid_capacity_kw and the
loop it is on.

Racks of one contents look alike (at 100,000 GPUs a sheet's 24 compute racks are one face
front and one rear): each distinct face of a sheet is drawn once, as an SVG symbol (the
devices' rectangles, and on the rear the 0U PDUs' strips), and each rack face is a use of it
at the face's body, with what is its own: its header, its body (named, data-rack-body), and a
label per device (its name, and on the front its model) naming the device and the slot of its
rectangle in the symbol (data-device, data-slot). elevation(shared=False) draws every device's
rectangle in its rack instead: the plain version, the tests' oracle (tests/test_drawings.py).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import NamedTuple

from cluster_iac.formats import svg
from cluster_iac.plan import Plan
from cluster_iac.plan.cooling import loop_figures
from cluster_iac.plan.model import Rack
from cluster_iac.plan.physical import Device
from cluster_iac.plan.power import rack_loads_w

U_PX = 12
HEADER = 52  # the rack's name, its power and its cooling, above its tallest neighbour
FACES = 2 * U_PX  # between the front faces' floor and the rear faces' headers
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
    """The rack's 0U PDUs seen from the rear: (left of the body, right of it), innermost
    first: B and D on the left, A and C on the right. (A device the placement could not
    place has no U, None: it is drawn nowhere; the checks report it.)"""
    zero = [d for d in devices if d.u == 0]
    return zero[1::2], zero[0::2]


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
              by_rack: dict[str, list[Device]], loops: dict[str, str], *,
              shared: bool = True, stamps: svg.Stamps | None = None) -> svg.Drawing:
    """The SVG of these racks (one row's, in order) side by side, front faces above rear
    faces; ``loops`` is rack_loops. ``shared``: each distinct face's shapes drawn once, as a
    symbol (_symbols), and each rack face a use of it with its own labels, a stamp (_uses:
    ``stamps`` the render's, shared by its sheets); else every device's rectangle drawn in
    its rack (the plain version, the tests' oracle)."""
    loads = rack_loads_w(plan)
    air_kw = plan.settings.policy.air_cooled_rack_kw
    tallest = max((r.height_u for r in racks), default=42)
    front = MARGIN + HEADER + tallest * U_PX
    rear = front + FACES + HEADER + tallest * U_PX
    sides = {r.name: _sides(by_rack.get(r.name, ())) for r in racks}
    # each rack's racked devices (a U and a height), found once for its symbols and its faces
    racked = {r.name: [d for d in by_rack.get(r.name, ()) if d.u and d.height_u]
              for r in racks}
    width = MARGIN * 2 + sum(_slot(len(a), len(b)) for a, b in sides.values()) - GAP
    roles = sorted({(d.kind, d.role) for r in racks for d in by_rack.get(r.name, ())},
                   key=lambda kind_role: kind_role[1])
    width = max(width, MARGIN * 2 + LEGEND)
    per_line = (width - 2 * MARGIN) // LEGEND
    lines = -(-len(roles) // per_line)
    root = svg.drawing(width, rear + 2 * U_PX + MARGIN + 16 * lines, title, STYLE)
    _legend(root, roles, rear + 2 * U_PX, per_line)
    stamps = {} if stamps is None else stamps
    symbols = _symbols(root, racks, sides, racked, stamps) if shared else {}  # front, rear
    x = MARGIN
    numbered = 0  # the height of the last rack whose U numbers were drawn
    for rack in racks:
        left, right = sides[rack.name]
        body_x = x + LABELS + len(left) * STRIP
        devices = racked[rack.name]
        # the U numbers, right-aligned left of the strips: the first rack's, and each of
        # another height than the last numbered one's
        labels = x + LABELS - 3 if rack.height_u != numbered else None
        numbered = rack.height_u
        x += _slot(len(left), len(right))
        if shared:
            face = _Face(rack, devices, left, right, body_x, labels)
            _uses(root, stamps, face, symbols[rack.name],
                  (front, rear), (loads.get(rack.name, 0.0), air_kw, loops.get(rack.name)))
            continue
        with root.group(_face(rack, "front")):
            _header(root, rack, body_x, front - rack.height_u * U_PX - 6,
                    loads.get(rack.name, 0.0), air_kw, loops.get(rack.name))
            _body(root, rack, "front", body_x, front, labels)
            for device in devices:
                _device(root, device, body_x, front, "front")
        with root.group(_face(rack, "rear")):
            top = rear - rack.height_u * U_PX
            root.text(body_x, top - 6, f"{rack.name}, rear", css="name")
            _body(root, rack, "rear", body_x, rear, labels)
            for index, pdu in enumerate(left):
                _strip(root, pdu, body_x - (index + 1) * STRIP, top, rack.height_u)
            for index, pdu in enumerate(right):
                _strip(root, pdu, body_x + BODY + index * STRIP, top, rack.height_u)
            for device in devices:
                _device(root, device, body_x, rear, "rear")
    return root


class _Face(NamedTuple):
    """A rack as its faces are drawn on a sheet: its racked devices, its 0U PDUs left and
    right of the rear face, its body's left edge, and where its U numbers are (or None)."""

    rack: Rack
    devices: list[Device]
    left: list[Device]
    right: list[Device]
    body_x: int
    labels: int | None


def _uses(root: svg.Drawing, stamps: svg.Stamps, face: _Face, ids: tuple[str, str],
          baselines: tuple[int, int], header: tuple[float, float, str | None]) -> None:
    """A rack's front and rear: its header and body, a use of the face's symbol (``ids``)
    and the labels. Each face is a stamp: what it draws depends on the rack's figures and
    places (the key) and on the names of the rack and its devices."""
    rack, devices, left, right, body_x, labels = face
    front, rear = baselines
    names = [d.name for d in devices]

    def front_face(named: Sequence[str]) -> None:
        own = replace(rack, name=named[0])
        with root.group(_face(own, "front")):
            _header(root, own, body_x, front - rack.height_u * U_PX - 6, *header)
            _body(root, own, "front", body_x, front, labels)
            root.use(ids[0], body_x, front)
            for slot, (device, name) in enumerate(zip(devices, named[1:], strict=True)):
                _label(root, device._replace(name=name), body_x, front, "front", slot)

    def rear_face(named: Sequence[str]) -> None:
        own = replace(rack, name=named[0])
        pdus = [d._replace(name=name) for d, name in zip((*left, *right), named[1:],
                                                          strict=False)]
        with root.group(_face(own, "rear")):
            root.text(body_x, rear - rack.height_u * U_PX - 6, f"{own.name}, rear", css="name")
            _body(root, own, "rear", body_x, rear, labels)
            root.use(ids[1], body_x, rear)
            _rear_labels(root, [d._replace(name=name) for d, name in
                                zip(devices, named[1 + len(pdus):], strict=True)],
                         pdus[:len(left)], pdus[len(left):], body_x, rear)

    place = (rack.height_u, rack.row, body_x, labels)
    root.stamp(stamps, ("front", ids[0], front, *place, rack.max_power_kw, rack.cooling,
                        rack.liquid_capacity_kw, *header), [rack.name, *names], front_face)
    root.stamp(stamps, ("rear", ids[1], rear, *place),
               [rack.name, *(d.name for d in (*left, *right)), *names], rear_face)


def _look(device: Device) -> tuple[object, ...]:
    """What a device's shape on a face depends on (not its name)."""
    return device.u, device.height_u, device.kind, device.role, device.model, device.position


def _face_id(face: tuple[object, ...]) -> str:
    """A face's symbol id: its side and the first 12 hex digits of the SHA-256 of what it
    shows (its height and each device's _look), the same wherever and whenever it is drawn."""
    return f"{face[0]}-{hashlib.sha256(repr(face[1:]).encode()).hexdigest()[:12]}"


def _symbols(root: svg.Drawing, racks: Sequence[Rack],
             sides: dict[str, tuple[list[Device], list[Device]]],
             racked: dict[str, list[Device]], stamps: svg.Stamps) -> dict[str, tuple[str, str]]:
    """Each distinct rack face of the sheet drawn once as a symbol, its origin the face's
    body's left edge at its floor: the devices' rectangles, and on the rear the 0U PDUs'
    strips (left ones, right ones, then the devices: the order of their slots, data-slot,
    which each rack's labels name). Its id is its face's digest (_face_id), so a rack's use
    and a symbol's lines change only where that face does; its lines are a stamp of the
    face (the same on every sheet); ``racked``: each rack's devices that have a U and a
    height. Each rack's (front symbol, rear symbol)."""
    made: dict[tuple[object, ...], str] = {}
    out = {}
    for rack in racks:
        left, right = sides[rack.name]
        devices = racked[rack.name]
        looks = tuple(map(_look, devices))
        front = ("front", rack.height_u, looks)
        front_id = made.get(front)
        if front_id is None:
            front_id = made[front] = _face_id(front)
            root.stamp(stamps, front, (), partial(_front_symbol, root, front_id, devices))
        rear = ("rear", rack.height_u, tuple(map(_look, left)), tuple(map(_look, right)), looks)
        rear_id = made.get(rear)
        if rear_id is None:
            rear_id = made[rear] = _face_id(rear)
            root.stamp(stamps, rear, (), partial(_rear_symbol, root, rear_id, rack.height_u,
                                                 (left, right), devices))
        out[rack.name] = front_id, rear_id
    return out


def _front_symbol(root: svg.Drawing, ident: str, devices: Sequence[Device],
                  _names: Sequence[str]) -> None:
    with root.symbol(ident):
        for slot, device in enumerate(devices):
            _shape(root, device, "front", slot)


def _rear_symbol(root: svg.Drawing, ident: str, height_u: int,
                 sides: tuple[Sequence[Device], Sequence[Device]], devices: Sequence[Device],
                 _names: Sequence[str]) -> None:
    left, right = sides
    height = height_u * U_PX
    with root.symbol(ident):
        for index, pdu in enumerate(left):
            _strip_shape(root, pdu, -(index + 1) * STRIP, -height, height, index)
        for index, pdu in enumerate(right):
            _strip_shape(root, pdu, BODY + index * STRIP, -height, height, len(left) + index)
        for slot, device in enumerate(devices, len(left) + len(right)):
            _shape(root, device, "rear", slot)


def _shape(root: svg.Drawing, device: Device, face: str, slot: int) -> None:
    """A racked device's rectangle in a symbol (at the symbol's origin's floor)."""
    u, height = device.u or 0, device.height_u
    last = u + height - 1
    span = f"U{u:02d}" if height == 1 else f"U{u:02d}-U{last:02d}"
    root.rect(1, -last * U_PX, BODY - 2, height * U_PX, svg.colour(device.kind, device.role),
              {"slot": str(slot), "role": device.role},
              tip=f"{device.role}, {device.model}, {span}, {face}")


def _strip_shape(root: svg.Drawing, pdu: Device, x: int, top: int, height: int,
                 slot: int) -> None:
    root.rect(x, top, STRIP - 1, height, svg.colour(pdu.kind, pdu.role),
              {"slot": str(slot), "role": pdu.role},
              tip=f"{pdu.role}, {pdu.model}, 0U {pdu.position}, rear")


def _label(root: svg.Drawing, device: Device, body_x: int, baseline: int, face: str,
           slot: int) -> None:
    """A racked device's name (and on the front its model) over its rectangle, naming the
    device and the slot of its rectangle in the face's symbol (whose data-role is the
    device's; the face is the rack face's group's)."""
    u, height = device.u or 0, device.height_u
    top = baseline - (u + height - 1) * U_PX
    label = f"{device.name}  {device.model}" if face == "front" else device.name
    root.text(body_x + 5, top + height * U_PX // 2 + 4, label, css="d" if height == 1 else "",
              data={"device": device.name, "slot": str(slot)})


def _rear_labels(root: svg.Drawing, devices: Sequence[Device], left: Sequence[Device],
                 right: Sequence[Device], body_x: int, baseline: int) -> None:
    """The rear face's labels: each 0U PDU's name up its strip, then each device's name."""
    for index, pdu in enumerate(left):
        _strip_label(root, pdu, body_x - (index + 1) * STRIP, baseline, index)
    for index, pdu in enumerate(right):
        _strip_label(root, pdu, body_x + BODY + index * STRIP, baseline, len(left) + index)
    for slot, device in enumerate(devices, len(left) + len(right)):
        _label(root, device, body_x, baseline, "rear", slot)


def _strip_label(root: svg.Drawing, pdu: Device, x: int, baseline: int, slot: int) -> None:
    root.text(x + STRIP - 3, baseline - 4, pdu.name, css="pdu", rotate=True,
              data={"device": pdu.name, "slot": str(slot)})


def _face(rack: Rack, face: str) -> dict[str, str]:
    """The data- attributes of a rack face's group (what the browser test reads)."""
    return {"rack": rack.name, "face": face, "height-u": str(rack.height_u), "u-px": str(U_PX)}


def _body(root: svg.Drawing, rack: Rack, face: str, body_x: int, baseline: int,
          labels: int | None) -> None:
    """A rack face's body and its U numbers (right-aligned at x = ``labels``, unless None)."""
    top = baseline - rack.height_u * U_PX
    root.rect(body_x, top, BODY, rack.height_u * U_PX, "#eceff1", {"rack-body": rack.name},
              tip=f"{rack.name}: {rack.height_u}U, row {rack.row}, {face}")
    if labels is not None:
        for u in (1, *range(5, rack.height_u + 1, 5)):
            root.text(labels, baseline - (u - 1) * U_PX - 2, str(u), css="u")


def _legend(root: svg.Drawing, roles: list[tuple[str, str]], y: int, per_line: int) -> None:
    """A swatch and the name of each role on the sheet, ``per_line`` to a line."""
    for index, (kind, role) in enumerate(roles):
        x = MARGIN + index % per_line * LEGEND
        top = y + index // per_line * 16
        root.rect(x, top, 10, 10, svg.colour(kind, role))
        root.text(x + 14, top + 9, role, css="d")


def _header(root: svg.Drawing, rack: Rack, x: int, y: int, load_w: float, air_kw: float,
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
    root.text(x, y - 28, rack.name, css="name")
    root.text(x, y - 14, power, css="over" if over else "")
    root.text(x, y, cooling, css="over" if hot else "note")


def _strip(root: svg.Drawing, pdu: Device, x: int, top: int, height_u: int) -> None:
    root.rect(x, top, STRIP - 1, height_u * U_PX, svg.colour(pdu.kind, pdu.role),
              {"device": pdu.name, "role": pdu.role, "face": "rear"},
              tip=f"{pdu.name}: {pdu.model}, 0U {pdu.position}, rear")
    root.text(x + STRIP - 3, top + height_u * U_PX - 4, pdu.name, css="pdu", rotate=True)


def _device(root: svg.Drawing, device: Device, body_x: int, baseline: int, face: str) -> None:
    """A racked device on one face; the front's label names its model too."""
    u, height = device.u or 0, device.height_u
    top = baseline - (u + height - 1) * U_PX
    last = u + height - 1
    span = f"U{u:02d}" if height == 1 else f"U{u:02d}-U{last:02d}"
    root.rect(body_x + 1, top, BODY - 2, height * U_PX, svg.colour(device.kind, device.role),
              {"device": device.name, "role": device.role, "face": face},
              tip=f"{device.name}: {device.role}, {device.model}, {span}, {face}")
    label = f"{device.name}  {device.model}" if face == "front" else device.name
    root.text(body_x + 5, top + height * U_PX // 2 + 4, label, css="d" if height == 1 else "")
