"""SVG drawings: rectangles, lines and text on an integer grid, written as XML.

Two writers behind one interface (drawing() and the methods of what it returns): TreeCanvas
builds ElementTree elements and prints them with the project's XML writer (formats.xml_text),
the plain version; Canvas writes each element's line as it is drawn, with the same escaping,
the same attribute order and the same layout, for the 100,000-GPU render's sake (Canvas's
docstring has the figures). The tests render every drawing of every example with both and
compare the bytes.

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

import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from xml.etree.ElementTree import Element, SubElement

from cluster_iac.formats.xml import xml_name, xml_text, xml_value, xml_values

SVG_NS = "http://www.w3.org/2000/svg"
DRAWN = frozenset({"rect", "text", "line", "polyline", "path", "circle", "use"})
"""The tags that draw something: what a page's object count counts (a symbol's shapes
count once, each use of it once more)."""
FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"

# Role colours: NetBox's where it has one (emit/netbox.py ROLE_COLORS, the colours a design
# shows once imported there), the switches by network, the power chain in ambers.
COLOURS = {"compute": "#76b900", "controller": "#2196f3", "login": "#03a9f4",
           "lustre_mds": "#9c27b0", "lustre_oss": "#673ab7", "service": "#607d8b",
           "pdu": "#ff9800", "power-shelf": "#ffc107", "switch:compute": "#e53935",
           "switch:storage": "#ab47bc", "switch:management": "#8d6e63", "switch:bmc": "#bdbdbd",
           "switch:nvlink": "#00acc1"}
OTHER = "#9e9e9e"
BASE_STYLE = "rect { stroke: #37474f; }"
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


class TreeCanvas:
    """An SVG drawing built as ElementTree elements and written by the project's XML writer
    (formats.xml_text): the plain version, and the test oracle of Canvas, which must write
    the same bytes (tests/test_drawings.py renders every example with both)."""

    def __init__(self, width: int, height: int, title: str, style: str = "") -> None:
        self.root = Element("svg", {"xmlns": SVG_NS, "version": "1.1", "width": str(width),
                                    "height": str(height), "viewBox": f"0 0 {width} {height}",
                                    "font-family": FONT, "font-size": "10"})
        SubElement(self.root, "title").text = title
        # the shared look, once: every rectangle's outline (rect()'s stroke is the exception)
        SubElement(self.root, "style").text = f"{BASE_STYLE} {style}".strip()
        SubElement(self.root, "rect", {"x": "0", "y": "0", "width": str(width),
                                       "height": str(height), "fill": "#ffffff",
                                       "stroke": "none"})
        self._parent = self.root

    def rect(self, x: int, y: int, width: int, height: int, fill: str,
             data: dict[str, str] | None = None, stroke: str = "", tip: str | None = None
             ) -> None:
        """A rectangle (outlined as the drawing's style says, unless ``stroke``); ``data``
        becomes its data- attributes (what the browser tests read), ``tip`` its tooltip (a
        title child: the text a browser shows over it)."""
        attrs = {"x": str(x), "y": str(y), "width": str(width), "height": str(height),
                 "fill": fill}
        if stroke:
            attrs["stroke"] = stroke
        if data:
            attrs.update({f"data-{key}": value for key, value in data.items()})
        element = SubElement(self._parent, "rect", attrs)
        if tip is not None:
            SubElement(element, "title").text = tip

    def text(self, x: int, y: int, value: str, *, size: int = 10, anchor: str = "start",
             fill: str = "#212121", bold: bool = False, rotate: bool = False,
             css: str = "", data: dict[str, str] | None = None) -> None:
        """One line of text at (x, y), its baseline; ``rotate`` turns it to read upward;
        ``css`` a class of the drawing's style sheet (instead of attributes on each text);
        ``data`` its data- attributes."""
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
        if data:
            attrs.update({f"data-{key}": value for key, value in data.items()})
        SubElement(self._parent, "text", attrs).text = value

    def line(self, x1: int, y1: int, x2: int, y2: int, *, stroke: str = "#455a64",
             width: int = 1) -> None:
        """A straight line."""
        SubElement(self._parent, "line", {"x1": str(x1), "y1": str(y1), "x2": str(x2),
                                          "y2": str(y2), "stroke": stroke,
                                          "stroke-width": str(width)})

    @contextmanager
    def group(self, data: dict[str, str] | None = None) -> Iterator[None]:
        """A ``g`` element (with data- attributes) holding what is drawn inside the block:
        one rack's or one tier's shapes."""
        outer = self._parent
        self._parent = SubElement(outer, "g", {f"data-{k}": v for k, v in (data or {}).items()})
        try:
            yield
        finally:
            self._parent = outer

    @contextmanager
    def symbol(self, ident: str) -> Iterator[None]:
        """A ``symbol`` element, ``ident`` its id, holding what is drawn inside the block:
        drawn only where a use() places it (its shapes may lie left of or above its origin:
        it does not clip them)."""
        outer = self._parent
        self._parent = SubElement(outer, "symbol", {"id": ident, "overflow": "visible"})
        try:
            yield
        finally:
            self._parent = outer

    def use(self, ident: str, x: int, y: int) -> None:
        """The symbol ``ident`` drawn with its origin at (x, y)."""
        SubElement(self._parent, "use", {"href": f"#{ident}", "x": str(x), "y": str(y)})

    def stamp(self, store: Stamps, key: Hashable, names: Sequence[str],
              draw: Callable[[Sequence[str]], None]) -> None:
        """What draw(names) draws, where what it draws depends on ``key`` and ``names`` alone
        and each name is written as it is (a text's or an attribute's value, or part of one):
        drawn here each time (the plain version); Canvas.stamp draws a key once."""
        draw(names)

    def svg_text(self) -> str:
        """The SVG document: one element per line."""
        return xml_text(self.root)


class Canvas:
    """The same drawing written straight to its lines, as xml_text would print the tree:
    no element objects. At 100,000 GPUs the elevations and one-lines are 158 sheets of up to
    2,000 elements each; building and walking their trees was most of the drawings' time
    (README, Drawings). Every value is escaped as xml_text escapes it (formats.xml_values:
    one search of an element's values, then each value that needs it) and every attribute
    name checked by formats.xml_name."""

    def __init__(self, width: int, height: int, title: str, style: str = "") -> None:
        self._lines = [f'<svg xmlns="{SVG_NS}" version="1.1" width="{width}" '
                       f'height="{height}" viewBox="0 0 {width} {height}" '
                       f'font-family="{FONT}" font-size="10">',
                       _element("  ", "title", "", title),
                       _element("  ", "style", "", f"{BASE_STYLE} {style}".strip()),
                       f'  <rect x="0" y="0" width="{width}" height="{height}" '
                       'fill="#ffffff" stroke="none"/>']
        self._pad = "  "

    def rect(self, x: int, y: int, width: int, height: int, fill: str,
             data: dict[str, str] | None = None, stroke: str = "", tip: str | None = None
             ) -> None:
        # one search of all its values (the usual case: none needs an escape)
        values = (fill, stroke, tip or "", *data.values()) if data else (fill, stroke, tip or "")
        fill, stroke, note, *escaped = xml_values(values)
        head = f'{self._pad}<rect x="{x}" y="{y}" width="{width}" height="{height}" fill="{fill}"'
        if stroke:
            head += f' stroke="{stroke}"'
        if data:
            head += "".join(map(' data-{}="{}"'.format, _keys(data), escaped))
        if tip is None:
            self._lines.append(head + "/>")
        elif note:
            self._lines += (f"{head}>", f"{self._pad}  <title>{note}</title>",
                            f"{self._pad}</rect>")
        else:
            self._lines += (f"{head}>", f"{self._pad}  <title/>", f"{self._pad}</rect>")

    def text(self, x: int, y: int, value: str, *, size: int = 10, anchor: str = "start",
             fill: str = "#212121", bold: bool = False, rotate: bool = False,
             css: str = "", data: dict[str, str] | None = None) -> None:
        # one search of all its values, as rect()
        if data:
            value, css, anchor, fill, *escaped = xml_values(
                (value, css, anchor, fill, *data.values()))
        else:
            value, css, anchor, fill = xml_values((value, css, anchor, fill))
        attrs = f' x="{x}" y="{y}"'
        if css:
            attrs += f' class="{css}"'
        if size != 10:
            attrs += f' font-size="{size}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if fill != "#212121":
            attrs += f' fill="{fill}"'
        if bold:
            attrs += ' font-weight="bold"'
        if rotate:
            attrs += f' transform="rotate(-90 {x} {y})"'
        if data:
            attrs += "".join(map(' data-{}="{}"'.format, _keys(data), escaped))
        self._lines.append(f"{self._pad}<text{attrs}>{value}</text>" if value
                           else f"{self._pad}<text{attrs}/>")

    def line(self, x1: int, y1: int, x2: int, y2: int, *, stroke: str = "#455a64",
             width: int = 1) -> None:
        self._lines.append(f'{self._pad}<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
                           f'stroke="{xml_value(stroke)}" stroke-width="{width}"/>')

    @contextmanager
    def group(self, data: dict[str, str] | None = None) -> Iterator[None]:
        outer = self._pad
        opened = len(self._lines)
        self._lines.append(f"{outer}<g{_data(data) if data else ''}>")
        self._pad = outer + "  "
        try:
            yield
        finally:
            self._pad = outer
            if len(self._lines) == opened + 1:  # nothing drawn in it: <g/>, as xml_text
                self._lines[opened] = self._lines[opened][:-1] + "/>"
            else:
                self._lines.append(f"{outer}</g>")

    @contextmanager
    def symbol(self, ident: str) -> Iterator[None]:
        outer = self._pad
        opened = len(self._lines)
        self._lines.append(f'{outer}<symbol id="{xml_value(ident)}" overflow="visible">')
        self._pad = outer + "  "
        try:
            yield
        finally:
            self._pad = outer
            if len(self._lines) == opened + 1:
                self._lines[opened] = self._lines[opened][:-1] + "/>"
            else:
                self._lines.append(f"{outer}</symbol>")

    def use(self, ident: str, x: int, y: int) -> None:
        self._lines.append(f'{self._pad}<use href="#{xml_value(ident)}" x="{x}" y="{y}"/>')

    def stamp(self, store: Stamps, key: Hashable, names: Sequence[str],
              draw: Callable[[Sequence[str]], None]) -> None:
        """TreeCanvas.stamp's drawing, its lines made once per key (and indentation) in
        ``store``, which drawings share: drawn with a mark in place of each name, the lines
        are a template the names (escaped) are filled into. A template is kept once it has
        given the first names' drawing, byte for byte (else that key is drawn each time)."""
        held = (key, self._pad, len(names))
        template = store.get(held, _NEW)
        if template is _NEW:
            start = len(self._lines)
            draw([_MARK.format(index) for index in range(len(names))])
            made = _template("\n".join(self._lines[start:]))
            del self._lines[start:]
            draw(names)
            drawn = "\n".join(self._lines[start:])
            store[held] = made if made is not None and _filled(made, names) == drawn else None
        elif template is None:
            draw(names)
        elif template[0] != ("",):  # something drawn
            self._lines.append(_filled(template, names))

    def svg_text(self) -> str:
        return "\n".join(self._lines) + "\n</svg>\n"


Template = tuple[tuple[str, ...], tuple[int, ...]]
"""Canvas.stamp's lines: the texts between the names, and which name goes after each."""
Stamps = dict[tuple[Hashable, str, int], Template | None]
"""Canvas.stamp's templates by key, indentation and number of names (None where a key's
drawing did not make one): one per render, shared by its drawings."""
_MARK = "\ue000{}\ue001"  # private-use characters: XML text that needs no escape
_MARKS = re.compile("\ue000([0-9]+)\ue001")
_NEW: Template = ((), ())  # what stamp() finds for a key it has not drawn yet


def _template(text: str) -> Template | None:
    """The drawn lines cut at each mark; None when the text holds a mark's character
    elsewhere (a name that is not written as it is, or a drawing's own text)."""
    parts = _MARKS.split(text)
    texts = tuple(parts[0::2])
    if any("\ue000" in part or "\ue001" in part for part in texts):
        return None
    return texts, tuple(map(int, parts[1::2]))


def _filled(template: Template, names: Sequence[str]) -> str:
    """The template's texts with the names (escaped) between them."""
    texts, order = template
    values = xml_values(tuple(names))
    pieces = [""] * (2 * len(texts) - 1)
    pieces[0::2] = texts
    pieces[1::2] = [values[at] for at in order]
    return "".join(pieces)


_KEYS: set[str] = set()  # data- keys already checked


def _keys(data: dict[str, str]) -> dict[str, str]:
    """``data``, its keys checked as the names of data- attributes (once each)."""
    if not _KEYS.issuperset(data):
        for key in data:
            xml_name("data-" + key)
        _KEYS.update(data)
    return data


def _data(data: dict[str, str]) -> str:
    """' data-key="value"' of each item, names checked and values escaped."""
    return "".join(map(' data-{}="{}"'.format, _keys(data), xml_values(tuple(data.values()))))


def _element(pad: str, tag: str, attrs: str, text: str) -> str:
    """One childless element's line: ``<tag attrs>text</tag>``, or ``<tag attrs/>``."""
    if not text:
        return f"{pad}<{tag}{attrs}/>"
    return f"{pad}<{tag}{attrs}>{xml_value(text)}</{tag}>"


Drawing = Canvas | TreeCanvas
"""A drawing being made: the emitters call only the methods the two share."""

WRITER: type[Drawing] = Canvas
"""What drawing() makes: Canvas; the tests set TreeCanvas, the plain version, to compare."""


def drawing(width: int, height: int, title: str, style: str = "") -> Drawing:
    """An SVG drawing of that size (px) with its title (shown by a browser and read by tests)
    and its style sheet (the classes its text() calls name)."""
    return WRITER(width, height, title, style)
