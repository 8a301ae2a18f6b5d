"""HTML pages from ElementTree elements, written by the standard library's HTML serializer.

report.html and the drawings' pages are built as elements and printed by
``xml.etree.ElementTree.tostring(method="html")``: text and attribute values are escaped by
the serializer, so no string from a spec can open a tag or end an attribute, and the bytes
depend only on the elements (attributes in insertion order). The page needs nothing from a
network: its style and the table-sorting script are inline, the drawings are SVG files beside
it (``<img>``), and the icon is an empty ``data:`` URL (else a browser asks for /favicon.ico).
Tables with ``class="sortable"`` sort by a click on a column's header: numbers as numbers,
the rest as text, a second click reverses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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


def page(title: str, comment: str | None = None) -> tuple[Element, Element]:
    """A page's ``html`` element and its ``body`` to fill."""
    root = Element("html", {"lang": "en"})
    if comment:
        root.append(Comment(f" {comment} "))
    head = SubElement(root, "head")
    SubElement(head, "meta", {"charset": "utf-8"})
    SubElement(head, "meta", {"name": "viewport", "content": "width=device-width"})
    SubElement(head, "title").text = title
    SubElement(head, "link", {"rel": "icon", "href": "data:,"})
    SubElement(head, "style").text = STYLE
    return root, SubElement(root, "body")


BLOCKS = frozenset({"head", "meta", "title", "link", "style", "body", "nav", "h1", "h2", "h3",
                    "h4", "h5", "h6", "p", "ul", "li", "table", "thead", "tbody", "tr",
                    "figure", "script"})
"""Elements followed by a line break: a table row or a paragraph per line, so that a diff of
two renders (and of a golden snapshot) shows the rows that changed. Between these elements
a line break is not content (HTML: inter-element whitespace)."""


def page_text(root: Element) -> str:
    """The page as HTML: the sorting script last in the body, a line break after each block
    element, then the serializer."""
    body = root.find("body")
    assert body is not None
    SubElement(body, "script").text = SCRIPT
    for element in root.iter():
        if element.tag in BLOCKS and not element.tail:
            element.tail = "\n"
    return DOCTYPE + tostring(root, encoding="unicode", method="html") + "\n"


def table(parent: Element, header: Sequence[str], rows: Sequence[Sequence[str]],
          numeric: Sequence[bool] = ()) -> Element:
    """A sortable table of plain-text cells; ``numeric`` columns are right-aligned."""
    element = SubElement(parent, "table", {"class": "sortable"})
    head = SubElement(SubElement(element, "thead"), "tr")
    aligned = list(numeric) + [False] * (len(header) - len(numeric))
    for name, right in zip(header, aligned, strict=True):
        SubElement(head, "th", {"class": "num"} if right else {}).text = name
    body = SubElement(element, "tbody")
    for row in rows:
        tr = SubElement(body, "tr")
        for cell, right in zip(row, aligned, strict=True):
            SubElement(tr, "td", {"class": "num"} if right else {}).text = cell
    return element


def figure(parent: Element, caption: str, src: str, alt: str) -> Element:
    """A drawing (an SVG file beside the page) with its caption, linked to the file itself
    (opened alone, its devices show their tooltips)."""
    element = SubElement(parent, "figure")
    SubElement(element, "figcaption").text = caption
    link = SubElement(element, "a", {"href": src})
    SubElement(link, "img", {"src": src, "alt": alt})
    return element


# --- report.md as HTML --------------------------------------------------------------------------

_ESCAPE_OR_CODE = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)")
_CELL_EDGE = re.compile(r"(?<!\\)\|")


def inline(parent: Element, text: str) -> None:
    """Markdown inline text into ``parent``: backslash escapes undone, code spans as
    ``<code>``; everything else is text (report.md holds no other inline markup)."""
    last: Element | None = None
    pending: list[str] = []
    position = 0

    def flush() -> None:
        chunk = "".join(pending)
        pending.clear()
        if not chunk:
            return
        if last is None:
            parent.text = (parent.text or "") + chunk
        else:
            last.tail = (last.tail or "") + chunk

    while (match := _ESCAPE_OR_CODE.search(text, position)) is not None:
        pending.append(text[position:match.start()])
        position = match.end()
        if match.group(1) is not None:
            pending.append(match.group(1))
            continue
        fence = match.group(2)
        close = re.compile(f"(?<!`){fence}(?!`)").search(text, position)
        if close is None:
            pending.append(fence)
            continue
        flush()
        code = text[position:close.start()]
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        last = SubElement(parent, "code")
        last.text = code
        position = close.end()
    pending.append(text[position:])
    flush()


def _cells(row: str) -> list[str]:
    inner = row.strip()[1:-1] if row.strip().endswith("|") else row.strip()[1:]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_EDGE.split(inner)]


def markdown(body: Element, text: str) -> None:
    """report.md's blocks as HTML: headings, paragraphs, bullet lists, GFM tables (sortable),
    the generated-by comment as a comment."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
        elif line.startswith("<!--") and line.endswith("-->"):
            body.append(Comment(line[4:-3]))
            index += 1
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            inline(SubElement(body, f"h{min(level, 6)}"), line[level:].strip())
            index += 1
        elif line.startswith("|"):
            block = []
            while index < len(lines) and lines[index].startswith("|"):
                block.append(lines[index])
                index += 1
            _table(body, block)
        elif line.startswith("- "):
            items = SubElement(body, "ul")
            while index < len(lines) and lines[index].startswith("- "):
                inline(SubElement(items, "li"), lines[index][2:])
                index += 1
        else:
            block = []
            while index < len(lines) and lines[index].strip() and not any(
                    lines[index].startswith(mark) for mark in ("#", "|", "- ", "<!--")):
                block.append(lines[index])
                index += 1
            inline(SubElement(body, "p"), "\n".join(block))


def _table(body: Element, block: list[str]) -> None:
    header = _cells(block[0])
    aligns = _cells(block[1]) if len(block) > 1 else []
    right = [cell.endswith(":") for cell in aligns]
    right += [False] * (len(header) - len(right))
    element = SubElement(body, "table", {"class": "sortable"})
    head = SubElement(SubElement(element, "thead"), "tr")
    for cell, numeric in zip(header, right, strict=False):
        inline(SubElement(head, "th", {"class": "num"} if numeric else {}), cell)
    rows = SubElement(element, "tbody")
    for line in block[2:]:
        tr = SubElement(rows, "tr")
        for cell, numeric in zip(_cells(line), right, strict=False):
            td = SubElement(tr, "td", {"class": "num"} if numeric else {})
            if "\\" in cell or "`" in cell:
                inline(td, cell)
            else:
                td.text = cell
