"""HTML pages, written as the standard library's HTML serializer writes their elements.

report.html and the drawings' pages are made through one small interface: page() and the
methods of what it returns (open, close, leaf, text, comment, row). Two writers stand behind
it, as behind the SVG drawings (formats/svg.py): TreePage builds ElementTree elements and prints
them with ``xml.etree.ElementTree.tostring(method="html")``, the plain version; Page writes
each element's text as it is made, with the serializer's own rules, for the 100,000-GPU
report's sake (Page's docstring has the figures). The tests render every example's pages, and
the hostile spec's, with both and compare the bytes.

Either way text is escaped as the serializer escapes it (``&``, ``<``, ``>``) and so are
attribute values (``&``, ``>``, ``"``): no string from a spec can open a tag or end an
attribute. Tags and attribute names are this module's callers' constants, and the only text
written raw (HTML reads a script's and a style sheet's text as is) is this module's own
STYLE and SCRIPT. The bytes depend only on the calls (attributes in the order given). The
page needs nothing from a network: its style and the table-sorting script are inline, the
drawings are SVG files beside it (``<img>``), and the icon is an empty ``data:`` URL (else a
browser asks for /favicon.ico). Tables with ``class="sortable"`` sort by a click on a
column's header: numbers as numbers, the rest as text, a second click reverses.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import add
from xml.etree.ElementTree import Comment, Element, SubElement, tostring

DOCTYPE = "<!DOCTYPE html>\n"

STYLE = """
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; margin: 1.5em;
       color: #212121; max-width: 110em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #cfd8dc; padding: 0.2em 0.5em; }
th { background: #eceff1; cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25b2"; }
th[aria-sort=descending]::after { content: " \\25bc"; }
td.num, th.num { text-align: right; }
code { background: #f5f5f5; padding: 0 0.2em; }
figure { margin: 1em 0; overflow-x: auto; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
nav a { margin-right: 1em; }
"""

SCRIPT = """
(function () {
  function key(cell) {
    var text = cell.textContent.trim();
    var number = Number(text.replace(/,/g, ""));
    return text !== "" && !isNaN(number) ? [0, number, text] : [1, 0, text];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) { return a[0] - b[0]; }
    if (a[1] !== b[1]) { return a[1] - b[1]; }
    return a[2] === b[2] ? 0 : (a[2] > b[2] ? 1 : -1);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (head, column) {
      head.addEventListener("click", function () {
        var up = head.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        head.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var order = compare(key(a.cells[column]), key(b.cells[column]));
          return up ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""


BLOCKS = frozenset({"head", "meta", "title", "link", "style", "body", "nav", "h1", "h2", "h3",
                    "h4", "h5", "h6", "p", "ul", "li", "table", "thead", "tbody", "tr",
                    "figure", "script"})
"""Elements followed by a line break: a table row or a paragraph per line, so that a diff of
two renders (and of a golden snapshot) shows the rows that changed. Between these elements
a line break is not content (HTML: inter-element whitespace)."""

VOID = frozenset({"area", "base", "basefont", "br", "col", "embed", "frame", "hr", "img",
                  "input", "isindex", "link", "meta", "param", "source", "track", "wbr"})
"""Elements written without an end tag: ElementTree's HTML_EMPTY."""

RAW = frozenset({"script", "style"})
"""Elements whose text the serializer writes unescaped: given by leaf() alone, and only this
module's constants are."""

NUM = {"class": "num"}
"""A right-aligned (numeric) cell's attributes."""


def escape_text(value: str) -> str:
    """Text as ElementTree's HTML serializer writes it (``_escape_cdata``): & < > escaped."""
    return _escaped(value, (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")))


def escape_attribute(value: str) -> str:
    """An attribute's value as the HTML serializer writes it (``_escape_attrib_html``):
    & > " escaped (a ``<`` inside quotes is text)."""
    return _escaped(value, (("&", "&amp;"), (">", "&gt;"), ('"', "&quot;")))


def _escaped(value: str, entities: tuple[tuple[str, str], ...]) -> str:
    """``value`` with each character replaced by its entity, in this order ('&' first)."""
    for char, entity in entities:
        if char in value:
            value = value.replace(char, entity)
    return value


class TreePage:
    """A page built as ElementTree elements and printed by ``tostring(method="html")``: the
    plain version, and the test oracle of Page, which must write the same bytes."""

    def __init__(self) -> None:
        self._root: Element | None = None
        self._open: list[Element] = []

    def open(self, tag: str, attrs: dict[str, str] | None = None) -> None:
        """An element that the next calls fill, until close()."""
        if tag.lower() in RAW:
            raise ValueError(f"<{tag}> takes its text from leaf() alone")
        if self._open:
            self._open.append(SubElement(self._open[-1], tag, attrs or {}))
        else:
            self._root = Element(tag, attrs or {})
            self._open.append(self._root)

    def close(self) -> None:
        """The end of the element last opened."""
        self._open.pop()

    def leaf(self, tag: str, text: str = "", attrs: dict[str, str] | None = None) -> None:
        """An element of text alone."""
        SubElement(self._open[-1], tag, attrs or {}).text = text

    def text(self, value: str) -> None:
        """Text in the open element, after what it holds."""
        if not value:
            return
        parent = self._open[-1]
        if len(parent):
            parent[-1].tail = (parent[-1].tail or "") + value
        else:
            parent.text = (parent.text or "") + value

    def comment(self, value: str) -> None:
        """A comment (``<!--value-->``)."""
        self._open[-1].append(Comment(value))

    def row(self, cells: Sequence[str], numeric: tuple[bool, ...]) -> None:
        """A table row (``tr``) of text cells, a ``td`` per cell, each of the ``numeric``
        columns right-aligned; as many cells as both have."""
        tr = SubElement(self._open[-1], "tr")
        for cell, right in zip(cells, numeric, strict=False):
            SubElement(tr, "td", NUM if right else {}).text = cell

    def document(self) -> str:
        """The page as HTML: a line break after each block element, then the serializer."""
        assert self._root is not None and not self._open
        for element in self._root.iter():
            if element.tag in BLOCKS and not element.tail:
                element.tail = "\n"
        return DOCTYPE + tostring(self._root, encoding="unicode", method="html") + "\n"


class Page:
    """The same page written straight to its text, as TreePage's serializer would print it:
    no element objects. At 100,000 GPUs report.html is 3.7 MB, 19,000 table rows of 182,000
    elements; building and printing that tree was most of the report family's CPU (README,
    Drawings, has the figures). Text and attribute values are escaped
    by escape_text and escape_attribute, the serializer's rules; a row's cells by one search
    of them all (the usual case: none needs an escape)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._open: list[str] = []
        self._break = -1  # len(_parts) just after a block's line break was written
        self._rows: dict[tuple[bool, ...], tuple[str, ...]] = {}

    def open(self, tag: str, attrs: dict[str, str] | None = None) -> None:
        if tag.lower() in RAW:
            raise ValueError(f"<{tag}> takes its text from leaf() alone")
        self._parts.append(f"<{tag}{_attributes(attrs)}>" if attrs else f"<{tag}>")
        self._open.append(tag)

    def close(self) -> None:
        self._end(self._open.pop())

    def leaf(self, tag: str, text: str = "", attrs: dict[str, str] | None = None) -> None:
        self._parts.append(f"<{tag}{_attributes(attrs)}>" if attrs else f"<{tag}>")
        if text:
            self._parts.append(text if tag.lower() in RAW else escape_text(text))
        self._end(tag)

    def _end(self, tag: str) -> None:
        if tag.lower() not in VOID:
            self._parts.append(f"</{tag}>")
        if tag in BLOCKS:
            self._parts.append("\n")
            self._break = len(self._parts)

    def text(self, value: str) -> None:
        if not value:
            return
        if self._break == len(self._parts):  # the tail of a block: no line break (TreePage)
            self._parts.pop()
            self._break = -1
        self._parts.append(escape_text(value))

    def comment(self, value: str) -> None:
        self._parts.append(f"<!--{escape_text(value)}-->")

    def row(self, cells: Sequence[str], numeric: tuple[bool, ...]) -> None:
        starts = self._rows.get(numeric)
        if starts is None:  # each cell's start, the first with the row's
            starts = tuple(("<tr>" if i == 0 else "</td>") + ('<td class="num">' if r else "<td>")
                           for i, r in enumerate(numeric))
            self._rows[numeric] = starts
        joined = "".join(cells)
        if "&" in joined or "<" in joined or ">" in joined:
            cells = [escape_text(cell) for cell in cells]
        written = "".join(map(add, starts, cells))
        self._parts += (written + "</td></tr>" if written else "<tr></tr>", "\n")
        self._break = len(self._parts)

    def document(self) -> str:
        assert not self._open
        return DOCTYPE + "".join(self._parts) + "\n"


def _attributes(attrs: dict[str, str]) -> str:
    """' name="value"' of each attribute, in order, each value escaped."""
    return "".join(f' {name}="{escape_attribute(value)}"' for name, value in attrs.items())


Writer = Page | TreePage
"""A page being written: the callers use only the methods the two share."""

WRITER: type[Writer] = Page
"""What page() makes: Page; the tests set TreePage, the plain version, to compare."""


def page(title: str, comment: str | None = None) -> Writer:
    """A page with its head written and its body open, for the caller to fill and then give
    to page_text."""
    out = WRITER()
    out.open("html", {"lang": "en"})
    if comment:
        out.comment(f" {comment} ")
    out.open("head")
    out.leaf("meta", attrs={"charset": "utf-8"})
    out.leaf("meta", attrs={"name": "viewport", "content": "width=device-width"})
    out.leaf("title", title)
    out.leaf("link", attrs={"rel": "icon", "href": "data:,"})
    out.leaf("style", STYLE)
    out.close()
    out.open("body")
    return out


def page_text(out: Writer) -> str:
    """The page as HTML: the sorting script last in the body."""
    out.leaf("script", SCRIPT)
    out.close()
    out.close()
    return out.document()


def table(out: Writer, header: Sequence[str], rows: Sequence[Sequence[str]],
          numeric: Sequence[bool] = (), link: int | None = None) -> None:
    """A sortable table of plain-text cells; ``numeric`` columns are right-aligned; the cells
    of column ``link`` (0-based) are each a link to the path it holds."""
    aligned = tuple(numeric) + (False,) * (len(header) - len(numeric))
    out.open("table", {"class": "sortable"})
    out.open("thead")
    out.open("tr")
    for name, right in zip(header, aligned, strict=True):
        out.leaf("th", name, NUM if right else None)
    out.close()
    out.close()
    out.open("tbody")
    for row in rows:
        if len(row) != len(aligned):
            raise ValueError(f"a row of {len(row)} cells in a table of {len(aligned)} columns")
        if link is None:
            out.row(row, aligned)
            continue
        out.open("tr")
        for column, (cell, right) in enumerate(zip(row, aligned, strict=True)):
            out.open("td", NUM if right else None)
            if column == link:
                out.leaf("a", cell, {"href": cell})
            else:
                out.text(cell)
            out.close()
        out.close()
    out.close()
    out.close()


def figure(out: Writer, caption: str, src: str, alt: str) -> None:
    """A drawing (an SVG file beside the page) with its caption, linked to the file itself
    (opened alone, its devices show their tooltips)."""
    out.open("figure")
    out.leaf("figcaption", caption)
    out.open("a", {"href": src})
    out.leaf("img", attrs={"src": src, "alt": alt})
    out.close()
    out.close()
