"""The Markdown writer: table cells and rows (GitHub-flavoured tables) that show a value as text.

md_cell escapes what would start markup, md_code makes a code span, markdown_row one table row;
markdown_rows and markdown_columns write many rows at once, checked together, and fall back to
markdown_row row by row when a cell needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_BREAKS = re.compile(r"[\n\r\x00]")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")
_MD_ALWAYS = re.compile(r"([\\|`*\[\]<>~])")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_cell(value: object) -> str:
    """A Markdown table cell that shows ``value`` as text: '|' cannot end the cell, and no
    emphasis, code, link, HTML or strike-through starts in it (CommonMark backslash escapes;
    an underscore inside a word, as in lustre_oss, needs none)."""
    text = str(value)
    if _LINE_BREAKS.search(text):
        raise ValueError(f"Markdown cell {text[:40]!r} holds a line break or control character")
    text = _MD_ALWAYS.sub(r"\\\1", text)
    return _MD_UNDERSCORE.sub(r"\\_", text)


def md_cells(values: Sequence[str]) -> list[str]:
    """md_cell of each string, checked on the whole column at once: where no string holds a
    control character or anything md_cell escapes, the strings as they are (the line breaks
    that join them stand where md_cell sees a string's start and end)."""
    text = "\n".join(values)
    if (text.count("\n") == len(values) - 1 and not _LINE_BREAKS.search(text.replace("\n", ""))
            and not _MD_ALWAYS.search(text) and not _MD_UNDERSCORE.search(text)):
        return list(values)
    return [md_cell(value) for value in values]


def md_code(value: object) -> str:
    """``value`` as a Markdown code span in a table cell: fenced by one more backtick than its
    longest run, '|' escaped (GFM splits cells at '|' even inside code spans)."""
    text = str(value)
    if _LINE_BREAKS.search(text):
        raise ValueError(f"Markdown code {text[:40]!r} holds a line break or control character")
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def markdown_row(cells: Sequence[object]) -> str:
    """One row of a Markdown (GFM) table: '| a | b |'; a '|' in a cell is escaped so it
    cannot open a column, and a cell may not hold a line break (it would end the table)."""
    try:
        texts: Sequence[str] = cells  # type: ignore[assignment]  # all text: the usual case
        row = " | ".join(texts)
    except TypeError:
        texts = [str(cell) for cell in cells]
        row = " | ".join(texts)
    if _BREAKS.search(row):
        raise ValueError(f"Markdown cell in {row[:60]!r} holds a line break or NUL")
    if row.count("|") != len(texts) - 1:  # a cell holds a '|' (rare): escape cell by cell
        row = " | ".join(t.replace("|", "\\|") for t in texts)
    return f"| {row} |"


def markdown_rows(rows: Iterable[Sequence[str]]) -> list[str]:
    """Many rows of text cells as markdown_row writes them, checked together: the joined
    rows hold one line break fewer than rows and one '|' more per row than cells (a cell
    with a '|' or a line break sends the rows through markdown_row one by one)."""
    rows = rows if isinstance(rows, list) else list(rows)
    lines = ["| " + " | ".join(cells) + " |" for cells in rows]
    text = "\n".join(lines)
    bars = sum(map(len, rows)) + len(rows)
    if (text.count("\n") == max(len(lines) - 1, 0) and text.count("|") == bars
            and "\r" not in text and "\x00" not in text):
        return lines
    return [markdown_row(cells) for cells in rows]


def markdown_columns(columns: Sequence[Sequence[str]]) -> list[str]:
    """Rows of a Markdown table from its columns of text cells (as markdown_rows writes
    them): formatted at C speed, checked together."""
    if not columns or not columns[0]:
        return []
    if len(set(map(len, columns))) > 1:
        raise ValueError("Markdown columns must have one length")
    form = "| " + " | ".join(["{}"] * len(columns)) + " |"
    lines = list(map(form.format, *columns))
    text = "\n".join(lines)
    if (text.count("\n") == len(lines) - 1 and text.count("|") == (len(columns) + 1) * len(lines)
            and "\r" not in text and "\x00" not in text):
        return lines
    return [markdown_row(cells) for cells in zip(*columns, strict=True)]
