"""Writers that know their format: every emitter's CSV and YAML goes through here.

A spec string never reaches an output raw: CSV cells are quoted by RFC 4180's rules, may not
hold a line break (the spec's string types refuse control characters, so one here is a bug),
and a cell that a spreadsheet would read as a formula (=, +, -, @ first) is prefixed with an
apostrophe (OWASP "CSV injection"), unless it is a plain number such as -1.5 or a lone '-'.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import SafeRepresenter
from ruamel.yaml.resolver import VersionedResolver

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
    rows = rows if isinstance(rows, list) else list(rows)
    width = len(header)
    if rows and set(map(len, rows)) != {width}:
        raise ValueError(f"CSV rows must have {width} cells, as the header")
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    return csv_columns(header, columns)


def csv_records(rows: Iterable[Sequence[object]], comments: Sequence[str] = ()) -> str:
    """Rows with no header, after '# ' comment lines (fixed text only): the form of readers
    that skip '#' lines and take every other line as data (dcgm-exporter's collectors file)."""
    lines = []
    for comment in comments:
        if _BREAKS.search(comment):
            raise ValueError(f"CSV comment {comment[:40]!r} holds a line break")
        lines.append(f"# {comment}")
    for row in rows:
        cells = [csv_cell(v) for v in row]
        if cells and cells[0].startswith("#"):  # quoted, a data line cannot pass for a comment
            cells[0] = '"' + cells[0].replace('"', '""') + '"'
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def csv_columns(header: Sequence[str], columns: Sequence[Sequence[object]]) -> str:
    """The same file from its columns (the plan's tables are stored so).

    Column by column, the cells are checked at once, or each distinct value goes through
    csv_cell once (a column of half a million cells holds a few thousand distinct ones); the
    lines are joined at C speed.
    """
    if len(columns) != len(header) or len(set(map(len, columns))) > 1:
        raise ValueError(f"CSV needs {len(header)} columns of one length, as the header")
    cells = [_column(column) for column in columns]
    rows = len(cells[0]) if cells else 0
    # Joined a slice of rows at a time: the lines of a half-million-row file would otherwise
    # all live at once beside the text made of them.
    chunks = [",".join(csv_cell(h) for h in header)]
    chunks += ["\n".join(map(",".join, zip(*(c[i:i + CHUNK] for c in cells), strict=True)))
               for i in range(0, rows, CHUNK)]
    return "\n".join(chunks) + "\n"


CHUNK = 65536


def plain_column(values: Sequence[object]) -> bool:
    """Whether every value is a str that csv_cell leaves as it is, checked on the whole column
    at once: no line break, quote, comma or NUL, and no line that starts like a formula."""
    if set(map(type, values)) != {str}:
        return False
    text = "\n" + "\n".join(values)  # type: ignore[arg-type]
    if text.count("\n") != len(values) or any(c in text for c in _SPECIAL):
        return False
    return not _FORMULA_LINE.search(text)


_SPECIAL = ('"', ",", "\r", "\x00")
_FORMULA_LINE = re.compile("\n[=+@\t-]")


def _column(values: Sequence[object]) -> Sequence[str]:
    """The column's cells as csv_cell writes them; the values themselves when already so."""
    if plain_column(values):
        return values  # type: ignore[return-value]
    types = set(map(type, values))
    # 1, 1.0 and True are one key but print apart, as do 0.0 and -0.0: cell by cell then
    if len(types) > 1 or float in types:
        return [csv_cell(value) for value in values]
    cells = {value: csv_cell(value) for value in set(values)}
    return list(map(cells.__getitem__, values))


# YAML 1.1 reads 'on', 'yes', 'n', '012' and '12:30' as bool or number; Go's yaml.v2 (Prometheus,
# Ansible's older loaders) follows 1.1, so a string any YAML version would re-type is quoted.
_YAML11 = VersionedResolver(version=(1, 1))
_STR_TAG = "tag:yaml.org,2002:str"


class _Representer(SafeRepresenter):
    """Plain data in insertion order; strings quoted when YAML 1.1 or 1.2 would re-type them."""

    def represent_str(self, data: str) -> Any:
        if _YAML11.resolve(ScalarNode, data, (True, False)) != _STR_TAG:
            return self.represent_scalar(_STR_TAG, data, style="'")
        return super().represent_str(data)


_Representer.add_representer(str, _Representer.represent_str)


def yaml_text(data: object, header: Sequence[str] = ()) -> str:
    """A YAML document from plain data (dicts, lists, str, int, float, bool, None): block style,
    keys in insertion order, no line folding, every string re-read as the same string by YAML
    1.1 and 1.2 loaders. ``header`` lines become '# ' comments above it (fixed text only)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Representer = _Representer
    yaml.default_flow_style = False
    yaml.width = 1 << 30  # never fold a long PromQL expression or regex across lines
    yaml.allow_unicode = True
    yaml.representer.sort_base_mapping_type_on_output = False
    out = io.StringIO()
    for line in header:
        if _BREAKS.search(line):
            raise ValueError(f"YAML header line {line[:40]!r} holds a line break")
        out.write(f"# {line}\n" if line else "#\n")
    yaml.dump(data, out)
    return out.getvalue()


def text_of(values: Iterable[object]) -> list[str]:
    """A column of values as text, each distinct value formatted once: None prints empty,
    a float as the shortest decimal (2.5, 20), anything else as str() does."""
    values = list(values)
    types = set(map(type, values))
    if bool in types or (float in types and len(types) > 1):
        # True, 1 and 1.0 are one key but print apart: value by value
        return [_text(v) for v in values]
    text = {v: _text(v) for v in set(values)}
    if float in types and 0.0 in text:
        # 0.0 and -0.0 are one key too: the zeros value by value (falsy, and only they)
        return [text[v] if v else _text(v) for v in values]
    return list(map(text.__getitem__, values))


def _text(value: object) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


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


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shell_word(value: object) -> str:
    """One POSIX shell word that the shell reads back as exactly ``value``: bare when it is
    made of safe characters, else single-quoted (shlex.quote). A line break or another
    control character is refused: a value would otherwise start a new line of the script."""
    import shlex

    text = str(value)
    if _CONTROL.search(text):
        raise ValueError(f"shell word {text[:40]!r} holds a line break or control character")
    return shlex.quote(text)


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
