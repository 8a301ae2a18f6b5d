"""SVG drawings as ElementTree elements, written by the project's XML writer (formats.xml_text).

The drawings (rack elevations, fabric tiers, power one-lines: emit/drawings.py) are laid out
here by the tool itself, on an integer grid, not by Graphviz: a rack elevation is a fixed
grid (a U is so many pixels), a fat tree's tiers are rows of boxes, a one-line is columns of
racks under their row's panels, so a layout engine has nothing to decide, and its output
(coordinates that move between Graphviz releases, a dependency CI must install) would only
make the bytes less stable. Every coordinate is an int, every attribute is set in a fixed
order, and the XML writer prints attributes in insertion order: the bytes depend on the plan
alone.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element, SubElement

from cluster_iac.emit.formats import xml_text

SVG_NS = "http://www.w3.org/2000/svg"
DRAWN = frozenset({"rect", "text", "line", "polyline", "path", "circle"})
"""The tags that draw something: what a page's object count counts."""
FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"

# Role colours: NetBox's where it has one (emit/netbox.py ROLE_COLORS, the colours a design
# shows once imported there), the switches by network, the power chain in ambers.
COLOURS = {"compute": "#76b900", "controller": "#2196f3", "login": "#03a9f4",
           "lustre_mds": "#9c27b0", "lustre_oss": "#673ab7", "service": "#607d8b",
           "pdu": "#ff9800", "power-shelf": "#ffc107", "switch:compute": "#e53935",
           "switch:storage": "#ab47bc", "switch:management": "#8d6e63", "switch:bmc": "#bdbdbd",
           "switch:nvlink": "#00acc1"}
OTHER = "#9e9e9e"
OVER = "#c62828"
"""Text and lines of a figure over its limit."""


# A fabric's tiers in shades of its network's colour, light to dark, leaf to core.
TIERS = {"compute": {"leaf": "#ef9a9a", "spine": "#e57373", "core": "#c62828"},
         "storage": {"leaf": "#ce93d8", "spine": "#ab47bc", "core": "#7b1fa2"}}


def colour(kind: str, role: str) -> str:
    """A device's fill: by node role, by a switch's network (and a fabric switch's tier), the
    power chain's own."""
    if kind == "switch":
        network, _, tier = role.partition("-")
        return TIERS.get(network, {}).get(tier) or COLOURS.get("switch:" + network, OTHER)
    return COLOURS.get(role, OTHER)


def drawing(width: int, height: int, title: str, style: str = "") -> Element:
    """An SVG root of that size (px) with its title (shown by a browser and read by tests)
    and its style sheet (the classes its text() calls name)."""
    root = Element("svg", {"xmlns": SVG_NS, "version": "1.1", "width": str(width),
                           "height": str(height), "viewBox": f"0 0 {width} {height}",
                           "font-family": FONT, "font-size": "10"})
    SubElement(root, "title").text = title
    # the shared look, once: every rectangle's outline (rect()'s stroke is the exception)
    SubElement(root, "style").text = f"rect {{ stroke: #37474f; }} {style}".strip()
    SubElement(root, "rect", {"x": "0", "y": "0", "width": str(width), "height": str(height),
                              "fill": "#ffffff", "stroke": "none"})
    return root


def rect(parent: Element, x: int, y: int, width: int, height: int, fill: str,
         data: dict[str, str] | None = None, stroke: str = "") -> Element:
    """A rectangle (outlined as the drawing's style says, unless ``stroke``); ``data``
    becomes its data- attributes (what the browser tests read)."""
    attrs = {"x": str(x), "y": str(y), "width": str(width), "height": str(height),
             "fill": fill}
    if stroke:
        attrs["stroke"] = stroke
    if data:
        attrs.update({f"data-{key}": value for key, value in data.items()})
    return SubElement(parent, "rect", attrs)


def text(parent: Element, x: int, y: int, value: str, *, size: int = 10,
         anchor: str = "start", fill: str = "#212121", bold: bool = False,
         rotate: bool = False, css: str = "") -> Element:
    """One line of text at (x, y), its baseline; ``rotate`` turns it to read upward; ``css``
    a class of the drawing's style sheet (instead of attributes on each of many texts)."""
    attrs = {"x": str(x), "y": str(y)}
    if css:
        attrs["class"] = css
    if size != 10:
        attrs["font-size"] = str(size)
    if anchor != "start":
        attrs["text-anchor"] = anchor
    if fill != "#212121":
        attrs["fill"] = fill
    if bold:
        attrs["font-weight"] = "bold"
    if rotate:
        attrs["transform"] = f"rotate(-90 {x} {y})"
    element = SubElement(parent, "text", attrs)
    element.text = value
    return element


def line(parent: Element, x1: int, y1: int, x2: int, y2: int, *, stroke: str = "#455a64",
         width: int = 1) -> Element:
    """A straight line."""
    return SubElement(parent, "line", {"x1": str(x1), "y1": str(y1), "x2": str(x2),
                                       "y2": str(y2), "stroke": stroke,
                                       "stroke-width": str(width)})


def tooltip(element: Element, value: str) -> None:
    """A title child: the text a browser shows over the element."""
    SubElement(element, "title").text = value


def group(parent: Element, data: dict[str, str] | None = None) -> Element:
    """A ``g`` element (with data- attributes) to hold one rack's or one tier's shapes."""
    return SubElement(parent, "g", {f"data-{k}": v for k, v in (data or {}).items()})


def drawn(root: Element) -> int:
    """How many drawing elements the SVG holds (rect, text, line, ...)."""
    return sum(1 for element in root.iter() if element.tag in DRAWN)


def svg_text(root: Element) -> str:
    """The SVG document: the project's XML writer, one element per line."""
    return xml_text(root)
