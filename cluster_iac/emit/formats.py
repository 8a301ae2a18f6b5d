"""Writers that know their format: every emitter's CSV goes through here.

A spec string never reaches an output raw: CSV cells are quoted by RFC 4180's rules, may not
hold a line break (the spec's string types refuse control characters, so one here is a bug),
and a cell that a spreadsheet would read as a formula (=, +, -, @ first) is prefixed with an
apostrophe (OWASP "CSV injection"), unless it is a plain number such as -1.5 or a lone '-'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_NEEDS_QUOTES = re.compile(r'[",]')
_BREAKS = re.compile(r"[\n\r\x00]")
_FORMULA_START = ("=", "+", "-", "@", "\t")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: object) -> str:
    """One cell: quoted (as csv.writer's QUOTE_MINIMAL) when it holds a comma or a quote,
    formula-neutralised, single-line."""
    text = str(value)
    if _BREAKS.search(text):
        raise ValueError(f"CSV cell {text[:40]!r} holds a line break or NUL")
    if len(text) > 1 and text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        text = "'" + text
    if _NEEDS_QUOTES.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A whole CSV file: the header, then one line per row, '\\n' line ends."""
    lines = [",".join(csv_cell(h) for h in header)]
    lines += [",".join(csv_cell(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"
