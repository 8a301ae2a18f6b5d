"""report.html: report.md as a page, with the fabric drawings and an index of the sheets.

The page is report.md's own text converted block by block (markdown() here), so it says
exactly what report.md says; its tables sort by a click. A section "Drawings" follows: the
fabric and NVLink drawings embedded, and a table of the rack sheets (emit/drawings.py), each
linked to its page with the sheet's elevations and power one-line. The drawings are files
beside the page: it works offline, opened from the rendered folder.
"""

from __future__ import annotations

import re

from cluster_iac.emit import drawings, fabric_drawings
from cluster_iac.formats import html
from cluster_iac.plan import Plan


def page(plan: Plan, text: str) -> str:
    """report.html of report.md's ``text``."""
    # report.md's first line, the generated-by comment, becomes the page's comment
    out = html.page(f"Cluster report: {plan.cluster.name}")
    out.open("nav")
    out.leaf("a", "Drawings", {"href": "#drawings"})
    out.leaf("a", "report.md", {"href": "report.md"})
    out.close()
    markdown(out, text)
    out.leaf("h2", "Drawings", {"id": "drawings"})
    for path, caption in fabric_drawings.paths(plan):
        html.figure(out, caption, path, caption)
    out.leaf("h3", "Rack elevations and power one-lines")
    out.leaf("p", f"Each row's racks in sheets of at most {drawings.SHEET_RACKS}: the sheet's "
             "page shows their elevations (front and rear, every device at its U) and their "
             "power one-line (panels, feeds, PDUs, each feed's worst-case current against its "
             "breaker).")
    html.table(out, ["Row", "Sheet", "Racks", "First rack", "Last rack", "Page"],
               [[s.row, str(s.number), str(len(s.racks)), s.racks[0].name, s.racks[-1].name,
                 s.page] for s in drawings.sheets(plan)],
               [False, True, True, False, False, False], link=5)
    return html.page_text(out)


# --- report.md as HTML --------------------------------------------------------------------------

_ESCAPE_OR_CODE = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)")
_CELL_EDGE = re.compile(r"(?<!\\)\|")


def inline(out: html.Writer, text: str) -> None:
    """Markdown inline text into the open element: backslash escapes undone, code spans as
    ``<code>``; everything else is text (report.md holds no other inline markup)."""
    pending: list[str] = []
    position = 0
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
        out.text("".join(pending))
        pending.clear()
        code = text[position:close.start()]
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        out.leaf("code", code)
        position = close.end()
    pending.append(text[position:])
    out.text("".join(pending))


def _cells(row: str) -> list[str]:
    inner = row.strip()[1:-1] if row.strip().endswith("|") else row.strip()[1:]
    if "\\" not in inner:  # the usual case: no escaped edge, each "|" is one
        return [cell.strip() for cell in inner.split("|")]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_EDGE.split(inner)]


def markdown(out: html.Writer, text: str) -> None:
    """report.md's blocks as HTML: headings, paragraphs, bullet lists, GFM tables (sortable),
    the generated-by comment as a comment."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
        elif line.startswith("<!--") and line.endswith("-->"):
            out.comment(line[4:-3])
            index += 1
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.open(f"h{min(level, 6)}")
            inline(out, line[level:].strip())
            out.close()
            index += 1
        elif line.startswith("|"):
            block = []
            while index < len(lines) and lines[index].startswith("|"):
                block.append(lines[index])
                index += 1
            _table(out, block)
        elif line.startswith("- "):
            out.open("ul")
            while index < len(lines) and lines[index].startswith("- "):
                out.open("li")
                inline(out, lines[index][2:])
                out.close()
                index += 1
            out.close()
        else:  # a paragraph: this line (an unclosed comment's too) and the plain ones after
            block = [line]
            index += 1
            while index < len(lines) and lines[index].strip() and not any(
                    lines[index].startswith(mark) for mark in ("#", "|", "- ", "<!--")):
                block.append(lines[index])
                index += 1
            out.open("p")
            inline(out, "\n".join(block))
            out.close()


def _table(out: html.Writer, block: list[str]) -> None:
    header = _cells(block[0])
    aligns = _cells(block[1]) if len(block) > 1 else []
    right = tuple(cell.endswith(":") for cell in aligns)
    right += (False,) * (len(header) - len(right))
    out.open("table", {"class": "sortable"})
    out.open("thead")
    out.open("tr")
    for cell, numeric in zip(header, right, strict=False):
        out.open("th", html.NUM if numeric else None)
        inline(out, cell)
        out.close()
    out.close()
    out.close()
    out.open("tbody")
    for line in block[2:]:
        if "\\" not in line and "`" not in line:  # no inline markup: text cells
            out.row(_cells(line), right)
            continue
        out.open("tr")
        for cell, numeric in zip(_cells(line), right, strict=False):
            out.open("td", html.NUM if numeric else None)
            inline(out, cell)
            out.close()
        out.close()
    out.close()
    out.close()
