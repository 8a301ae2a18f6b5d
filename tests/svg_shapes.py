"""Where a rack elevation draws each device, read back from its SVG (emit/elevations.py),
whether the device's rectangle is in its rack face's group (the plain version) or in a symbol
the face's ``use`` places, named by the slot the device's label gives (the render's).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import NamedTuple

SVG = "{http://www.w3.org/2000/svg}"


class Box(NamedTuple):
    """A device's rectangle on one rack face, in the drawing's coordinates."""

    rack: str
    x: int
    y: int
    width: int
    height: int
    fill: str
    role: str


def _box(rect: ET.Element, rack: str, role: str, dx: int = 0, dy: int = 0) -> Box:
    return Box(rack, int(rect.get("x", "0")) + dx, int(rect.get("y", "0")) + dy,
               int(rect.get("width", "0")), int(rect.get("height", "0")),
               rect.get("fill", ""), role)


def device_boxes(text: str) -> dict[tuple[str, str], Box]:
    """(device, face) -> its rectangle, for every device an elevation draws; a device drawn
    twice on one face is an AssertionError."""
    root = ET.fromstring(text)
    symbols = {s.get("id"): {r.get("data-slot"): r for r in s.iter(f"{SVG}rect")}
               for s in root.iter(f"{SVG}symbol")}
    out: dict[tuple[str, str], Box] = {}
    for group in root.iter(f"{SVG}g"):
        rack, face = group.get("data-rack", ""), group.get("data-face", "")
        use = group.find(f"{SVG}use")
        for element in group:
            name = element.get("data-device")
            if name is None:
                continue
            if element.tag == f"{SVG}rect":
                assert element.get("data-face") == face, name
                box = _box(element, rack, element.get("data-role", ""))
            else:
                assert use is not None, f"{name}: a label without a use of a symbol"
                rect = symbols[use.get("href", "")[1:]][element.get("data-slot")]
                box = _box(rect, rack, rect.get("data-role", ""), int(use.get("x", "0")),
                           int(use.get("y", "0")))
            assert (name, face) not in out, f"{name} drawn twice on the {face}"
            out[name, face] = box
    return out


def labels(text: str) -> list[tuple[str, str, str]]:
    """Every text of the drawing: (x, y, text), in document order."""
    return [(t.get("x", ""), t.get("y", ""), t.text or "")
            for t in ET.fromstring(text).iter(f"{SVG}text")]
