"""The CSV cell rule, which the plain writer (formats/csv.py) and the columnar engine
(formats/columnar.py) are both made of.

A spec string never reaches a CSV file raw. A cell is quoted by RFC 4180's rules, may not hold
a line break (the spec's string types refuse control characters, so one here is a bug), and a
cell that a spreadsheet would read as a formula (=, +, -, @ first) is prefixed with an
apostrophe (OWASP "CSV injection"), unless it is a plain number such as -1.5 or a lone '-'.
"""

from __future__ import annotations

import re

_NEEDS_QUOTES = re.compile(r'[",]')
BREAKS = re.compile(r"[\n\r\x00]")
_FORMULA_START = ("=", "+", "-", "@", "\t")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: object) -> str:
    """One cell: quoted (as csv.writer's QUOTE_MINIMAL) when it holds a comma or a quote,
    formula-neutralised, single-line."""
    text = str(value)
    if BREAKS.search(text):
        raise ValueError(f"CSV cell {text[:40]!r} holds a line break or NUL")
    if len(text) > 1 and text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        text = "'" + text
    if _NEEDS_QUOTES.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text
