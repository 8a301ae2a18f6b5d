"""Writers that know their format: CSV, YAML, JSON, XML, shell words and Markdown cells.

A spec string never reaches an output raw. CSV cells are quoted by RFC 4180's rules, may not
hold a line break (the spec's string types refuse control characters, so one here is a bug),
and a cell that a spreadsheet would read as a formula (=, +, -, @ first) is prefixed with an
apostrophe (OWASP "CSV injection"), unless it is a plain number such as -1.5 or a lone '-'.
YAML and JSON come from yaml_text and json_text (formats/structured.py), XML, shell and Markdown
from xml_text, shell_word and md_cell below, each correct by construction for any string, or
refusing one its format cannot carry.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import chain, islice, repeat
from operator import add, gt, itemgetter, sub
from typing import Any, NamedTuple
from xml.etree.ElementTree import Element

from cluster_iac.base.runs import runs

# YAML and JSON live in structured.py; imported here so that every writer has one address
from cluster_iac.formats.structured import json_lines as json_lines
from cluster_iac.formats.structured import json_text as json_text
from cluster_iac.formats.structured import yaml_scalar as yaml_scalar
from cluster_iac.formats.structured import yaml_text as yaml_text

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


def _csv_lines(header: Sequence[str],
               columns: Sequence[Sequence[object] | Keyed | Runs | Joined]
               ) -> tuple[int, Callable[[int, int], Iterator[str]]]:
    """(rows, lines(start, stop)): the file's data rows, and its header and lines of rows
    [start, stop); the columns are checked and their cells made now, the lines when read.

    Column by column, the cells are checked at once, or each distinct value goes through
    csv_cell once (a column of half a million cells holds a few thousand distinct ones); a
    Keyed group's cells are written once per key, a Runs group's once per run, each with the
    commas (or the line end) on either side of it, a Joined column's two pieces side by side;
    the lines are joined at C speed.
    """
    widths = [column.width if isinstance(column, (Keyed, Runs)) else 1 for column in columns]
    lengths = set(map(_length, columns))
    if sum(widths) != len(header) or len(lengths) > 1:
        raise ValueError(f"CSV needs {len(header)} columns of one length, as the header")
    rows = lengths.pop() if lengths else 0
    columns = _pieces(columns)
    heads, tails, slots = _separators(columns)
    texts: dict[tuple[int, int, str], _KeyedText] = {}  # groups of one table share it
    cells: list[Sequence[str] | _Lookup] = []
    for k, column in enumerate(columns):
        if isinstance(column, Keyed):
            key = (id(column.cells), column.width, tails[k])
            if key not in texts:
                texts[key] = _KeyedText(column.cells, column.width, tails[k])
            cells.append(_Lookup(texts[key], column.keys))
        elif isinstance(column, Runs):
            cells.append(_expand(column, heads[k], tails[k]))
        elif isinstance(column, _Front):
            cells.append(column.values)
        else:
            cells.append(_column(column))
    head = ",".join(csv_cell(h) for h in header) + "\n"

    def lines(start: int, stop: int) -> Iterator[str]:
        # a slice of rows at a time: the lines of a half-million-row file would otherwise all
        # live at once beside the text made of them
        yield head
        for i in range(start, stop, CHUNK):
            end = min(i + CHUNK, stop)
            yield _lines(slots, [c.slice(i, end) if isinstance(c, _Lookup)
                                 else c[i:end] for c in cells])

    return rows, lines


def csv_chunks(header: Sequence[str],
               columns: Sequence[Sequence[object] | Keyed | Runs | Joined]) -> Chunks:
    """The same file as csv_text's from its columns (the plan's tables are stored so), as
    Chunks: the columns are checked and their cells made now, the lines when read."""
    rows, lines = _csv_lines(header, columns)
    return Chunks(partial(lines, 0, rows))


def csv_parts(header: Sequence[str],
              columns: Sequence[Sequence[object] | Keyed | Runs | Joined],
              per_part: int | Sequence[tuple[int, int]]) -> list[Chunks]:
    """csv_chunks' file cut into files of at most ``per_part`` rows, or at the given (start,
    stop) row ranges, each with the header: one part, the whole file, when it has no more
    rows than that."""
    rows, lines = _csv_lines(header, columns)
    bounds = per_part if not isinstance(per_part, int) else [
        (start, min(start + per_part, rows)) for start in range(0, max(rows, 1), per_part)]
    return [Chunks(partial(lines, start, stop)) for start, stop in bounds]


def csv_columns(header: Sequence[str],
                columns: Sequence[Sequence[object] | Keyed | Runs | Joined]) -> str:
    """csv_chunks' file as one text."""
    return csv_chunks(header, columns).text()


class Chunks:
    """A large file's text as the pieces it is made of, made each time they are read: the
    render writes them one by one (writer.StagedTree.write), so the text is never held whole,
    nor copied into one string (at 100,000 GPUs the cabling and NetBox cable files are 190
    MiB, and joining them took 0.25 s of CPU more than making their pieces); ``text()`` is
    the whole text, for a caller that wants it (emit.render_all, a family's ``render``)."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Iterable[str]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[str]:
        return iter(self._make())

    def text(self) -> str:
        return concatenated(self)


def whole(files: Mapping[str, str | Chunks]) -> dict[str, str]:
    """Each file's whole text (Chunks joined)."""
    return {path: text if isinstance(text, str) else text.text()
            for path, text in files.items()}


def concatenated(chunks: Iterable[str]) -> str:
    """The chunks as one text, appended about 8 Mi characters at a time. CPython grows a
    string that nothing else holds in place (a large one by mremap, without a copy), so the
    text is not held twice at its end, as a join of all its chunks would hold it; a block's
    chunks are joined first, so that the growth is a few appends (each would be a copy where a
    string cannot grow in place: at worst the cost of the one join, never quadratic)."""
    text = ""
    block: list[str] = []
    size = 0
    for chunk in chunks:
        block.append(chunk)
        size += len(chunk)
        if size >= BLOCK:
            text += "".join(block)
            block, size = [], 0
    text += "".join(block)
    return text


BLOCK = 1 << 23


def _length(column: Sequence[object] | Keyed | Runs | Joined) -> int:
    if isinstance(column, Runs):
        return column.rows()
    if isinstance(column, Joined):
        if len(column.first) != len(column.second):
            raise ValueError("CSV joined columns must have one length")
        return len(column.first)
    return len(column.keys if isinstance(column, Keyed) else column)


class Joined(NamedTuple):
    """A column whose cells are two columns' values run together, such as a cable's id: the
    text before its port, shared by a device's cables, then the port. When both pieces print
    as they are, so does their run (no character to escape, and it starts as the first piece
    starts), and csv_columns lays the two pieces side by side: no half a million new strings.
    Otherwise the values are joined and written cell by cell."""

    first: Sequence[str]
    second: Sequence[str]


class _Front(NamedTuple):
    """The first piece of a Joined column's cells: no separator follows it."""

    values: Sequence[str]


def _pieces(columns: Sequence[Sequence[object] | Keyed | Runs | Joined]
            ) -> list[Sequence[object] | Keyed | Runs | _Front]:
    """The columns with each Joined one as its two pieces, or as its joined values."""
    found: list[Sequence[object] | Keyed | Runs | _Front] = []
    for column in columns:
        if not isinstance(column, Joined):
            found.append(column)
        elif _plain(column.first) and _plain(column.second):
            found += [_Front(column.first), column.second]
        else:
            found.append(list(map(add, _values(column.first), _values(column.second))))
    return found


def _plain(values: Sequence[object]) -> bool:
    """Whether csv_cell writes every value as it is (a Cells knows already)."""
    return values.plain if isinstance(values, Cells) else plain_column(values)


def _values(column: Sequence[Any]) -> Sequence[Any]:
    """The values of a column, or of the column a Cells was made of."""
    return column.values if isinstance(column, Cells) else column


class RunStops:
    """Where the runs of equal cells of a table's columns end (run_stops), found once per
    column and merged for runs alike in several: emitters that write a table's columns in
    several files share them."""

    def __init__(self, table: object) -> None:
        self.table = table
        self.found: dict[str, list[int]] = {}

    def of(self, *names: str) -> list[int]:
        for name in names:
            if name not in self.found:
                self.found[name] = run_stops(getattr(self.table, name))
        if len(names) == 1:
            return self.found[names[0]]
        return sorted(set().union(*(self.found[name] for name in names)))

    def runs(self, *names: str, cells: Callable[..., Sequence[object]] | None = None,
             width: int = 1) -> Runs:
        """A Runs group over the runs alike in the named columns: each run's cells are its
        values of them, or ``cells(*values)``, made once per distinct values when equal
        values print alike."""
        stops = self.of(*names)
        starts = [0, *stops[:-1]] if stops else []
        columns = [list(map(getattr(self.table, name).__getitem__, starts)) for name in names]
        keys = list(zip(*columns, strict=True))
        if all(map(_prints_as_keyed, columns)):
            made = {key: key if cells is None else cells(*key) for key in set(keys)}
            return Runs(stops, list(map(made.__getitem__, keys)), width)
        return Runs(stops, keys if cells is None else [cells(*key) for key in keys], width)


def table_stops(table: Any) -> RunStops:
    """The RunStops of a table with a ``memo`` (plan.cables), kept there for its next reader."""
    found: RunStops | None = table.memo.get(RunStops)
    if found is None:
        table.memo[RunStops] = found = RunStops(table)
    return found


def table_cells(table: Any, name: str) -> Cells:
    """cells() of a column of a table with a ``memo`` (plan.cables), kept there for its next
    reader: the cabling and NetBox files print the same cable ids and ports."""
    key = (Cells, name)
    found: Cells | None = table.memo.get(key)
    if found is None:
        table.memo[key] = found = cells(getattr(table, name))
    return found


def _prints_as_keyed(values: Sequence[object]) -> bool:
    """Whether values equal as keys print alike: not 1, 1.0 and True, nor 0.0 and -0.0."""
    types = set(map(type, values))
    return not (len(types) > 1 or bool in types or (float in types and 0.0 in values))


def _separators(columns: Sequence[object]) -> tuple[list[str], list[str], list[int | str]]:
    """Where each comma and the line end go: at the end of a Keyed or Runs group's text
    before it, or at the start of a Runs group's after it (each made once per key or run),
    else a piece of its own. The pieces of a line: a column's index, or a separator. (A
    Keyed group takes no head: the two ends of a cable share one table.)"""
    heads, tails = [""] * len(columns), [""] * len(columns)
    slots: list[int | str] = []
    for k, column in enumerate(columns):
        slots.append(k)
        if isinstance(column, _Front):  # the rest of its cells follows at once
            continue
        sep = "," if k + 1 < len(columns) else "\n"
        if isinstance(column, (Keyed, Runs)):
            tails[k] = sep
        elif k + 1 < len(columns) and isinstance(columns[k + 1], Runs):
            heads[k + 1] = sep
        else:
            slots.append(sep)
    return heads, tails, slots


def _lines(slots: list[int | str], cells: list[Sequence[str]]) -> str:
    """Rows of cells as CSV lines: the pieces of every line laid out in one list, piece by
    piece (slice assignment; the commas are there already), and joined once: a few
    nanoseconds a piece."""
    size, rows = len(slots), len(cells[0])
    laid = [","] * (size * rows)
    for k, slot in enumerate(slots):
        if isinstance(slot, int):
            laid[k::size] = cells[slot]
        elif slot != ",":
            laid[k::size] = [slot] * rows
    return "".join(laid)


class Keyed(NamedTuple):
    """Adjacent columns that are all a function of one key column, such as a cable end's
    row, rack and U beside its device's name: csv_columns writes each key's cells once, as
    text_of and csv_cell would write them one by one."""

    keys: Sequence[Hashable]
    cells: Mapping[Any, Sequence[object]]  # key -> its cells, one per column it spans
    width: int


class Runs(NamedTuple):
    """Adjacent columns whose cells are the same over runs of rows, such as a cable's line
    rate and medium (a cable table holds a few thousand runs of them): csv_columns writes
    each run's cells once, as text_of and csv_cell would write them one by one."""

    stops: Sequence[int]  # where each run ends (the next one starts), in order (run_stops)
    cells: Sequence[Sequence[object]]  # each run's cells, one per column it spans
    width: int

    def rows(self) -> int:
        """The rows the runs cover; a ValueError unless each run follows the one before."""
        if len(self.cells) != len(self.stops) or any(map(gt, [0, *self.stops], self.stops)):
            raise ValueError("CSV runs must follow each other from row 0, one row of cells "
                             "each")
        return self.stops[-1] if self.stops else 0

    def starts(self) -> list[int]:
        """Where each run starts: the row to read its cells from."""
        return [0, *self.stops[:-1]] if self.stops else []


def run_stops(*columns: Sequence[object]) -> list[int]:
    """Where each run of rows equal in every column ends (plan/physical.py runs)."""
    return [stop for _start, stop in runs(*columns)]


def by_value(values: Sequence[Hashable]) -> Keyed:
    """A column of few distinct values (line rates, lengths) as a group of one column keyed
    by itself: each distinct value written once, as text_of writes it. Values that are one
    key but print apart (1, 1.0 and True; 0.0 and -0.0) are keyed by their text instead."""
    if not _prints_as_keyed(values):  # every value's type: False may hide behind 0
        keys = text_of(values)
        return Keyed(keys, {text: (text,) for text in set(keys)}, 1)
    return Keyed(values, {value: (value,) for value in set(values)}, 1)


def _texts(rows: Sequence[Sequence[object]], width: int, tail: str, head: str = ""
           ) -> list[str]:
    """Each row of cells as CSV text between head ('' or ',') and tail ('', ',' or '\\n'),
    formatted column by column."""
    if set(map(len, rows)) - {width}:
        raise ValueError(f"CSV needs {width} cells for each key or run")
    if tail not in ("", ",", "\n") or head not in ("", ","):
        raise ValueError(f"CSV separators {head!r}, {tail!r}")
    columns = [_column(text_of(column)) for column in zip(*rows, strict=True)]
    if head == ",":  # one more, empty, cell before
        columns.insert(0, [""] * len(rows))
    if tail == ",":  # and after
        columns.append([""] * len(rows))
    joined = map(",".join, zip(*columns, strict=True))
    return list(map(add, joined, repeat(tail)) if tail == "\n" else joined)


class _KeyedText(dict[Any, str]):
    """Key -> its cells' CSV text (comma-joined, then tail): the keys of the group's table
    formatted column by column, as csv_columns does; any other key on first use."""

    def __init__(self, cells: Mapping[Any, Sequence[object]], width: int, tail: str = ""
                 ) -> None:
        super().__init__()
        self.cells, self.width, self.tail = cells, width, tail
        self.update(zip(cells, _texts(list(cells.values()), width, tail), strict=True))

    def __missing__(self, key: object) -> str:
        values = self.cells[key]
        if len(values) != self.width:
            raise ValueError(f"CSV needs {self.width} cells for {key!r}")
        text = ",".join(csv_cell(_text(value)) for value in values)
        self[key] = text = text + self.tail
        return text


class _Lookup:
    """A Keyed group's keys and their text."""

    def __init__(self, text: _KeyedText, keys: Sequence[Hashable]) -> None:
        self.text, self.keys = text, keys

    def slice(self, start: int, stop: int) -> Sequence[str]:
        return lookup(self.text, self.keys[start:stop])


def lookup(table: Mapping[Any, str], keys: Sequence[Hashable]) -> Sequence[str]:
    """table[key] of each key, by one itemgetter (a third faster than mapping __getitem__)."""
    if len(keys) > 1:
        return itemgetter(*keys)(table)  # type: ignore[no-any-return]
    return [table[key] for key in keys]


def _expand(runs: Runs, head: str, tail: str) -> list[str]:
    """A Runs group's text for every row: each run's text repeated over its rows."""
    # each distinct row of cells (often one object for many runs) formatted once
    ids = list(map(id, runs.cells))
    first = dict(zip(ids, runs.cells, strict=True))
    text = dict(zip(first, _texts(list(first.values()), runs.width, tail, head), strict=True))
    texts = map(text.__getitem__, ids)
    return list(chain.from_iterable(map(repeat, texts, map(sub, runs.stops, runs.starts()))))


CHUNK = 4096


def plain_column(values: Sequence[object]) -> bool:
    """Whether every value is a str that csv_cell leaves as it is, checked on the whole column
    at once: no line break, quote, comma or NUL, and no line that starts like a formula. A
    column of few distinct values (ports) has each distinct one checked."""
    if set(map(type, values)) != {str}:
        return False
    if len(values) > 4 * _SAMPLE and len(set(islice(values, _SAMPLE))) * 8 <= _SAMPLE:
        values = list(set(values))
    text = "\n" + "\n".join(values)  # type: ignore[arg-type]
    if text.count("\n") != len(values) or any(c in text for c in _SPECIAL):
        return False
    return not _FORMULA_LINE.search(text)


_SAMPLE = 1024
_SPECIAL = ('"', ",", "\r", "\x00")
_FORMULA_LINE = re.compile("\n[=+@\t-]")


class Cells(tuple[str, ...]):
    """A column's cells as csv_cell writes them, made once for several files (cells());
    ``plain`` says whether they are the values themselves, ``values`` are those."""

    plain: bool
    values: Sequence[object]


def cells(values: Sequence[object]) -> Cells:
    """The column as csv_cell writes it, checked once: csv_columns takes it as it is."""
    made = _column(values)
    found = Cells(made)
    found.plain = made is values
    found.values = values
    return found


def _column(values: Sequence[object]) -> Sequence[str]:
    """The column's cells as csv_cell writes them; the values themselves when already so."""
    if isinstance(values, Cells) or plain_column(values):
        return values  # type: ignore[return-value]
    types = set(map(type, values))
    # 1, 1.0 and True are one key but print apart, as do 0.0 and -0.0: cell by cell then
    if len(types) > 1 or float in types:
        return [csv_cell(value) for value in values]
    cells = {value: csv_cell(value) for value in set(values)}
    return list(map(cells.__getitem__, values))


def text_of(values: Iterable[object]) -> list[str]:
    """A column of values as text, each distinct value formatted once: None prints empty,
    a float as the shortest decimal (2.5, 20), anything else as str() does."""
    values = list(values)
    types = set(map(type, values))
    if types == {str}:
        return values  # type: ignore[return-value]  # str() of a str is itself
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


# --- XML ----------------------------------------------------------------------------------------

_XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# XML 1.0 cannot carry these at all, not even as a character reference (section 2.2).
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# A value with none of these is printed as it is (the usual case: one search, no substitution).
_XML_SPECIAL = re.compile('[&<>"\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
_XML_NAMES: set[str] = set()  # names already checked (a document repeats a few names)
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;",
                "\n": "&#10;", "\r": "&#13;"}


def xml_text(root: Element, comment: str | None = None, *, literal: bool = False) -> str:
    """An XML document from an ElementTree element: one line per element with all its
    attributes (in insertion order), two-space indents, ``<x/>`` when empty, no declaration,
    an optional comment first. Values are escaped; with ``literal`` (a reader such as NCCL's
    that decodes no entity) a value that would need an escape is refused instead."""
    lines = [] if comment is None else [xml_comment(comment)]
    _xml_element(root, 0, lines, literal)
    return "\n".join(lines) + "\n"


def xml_comment(text: str) -> str:
    """``<!-- text -->``: a '--' inside (which ends a comment early in XML) is split by a space,
    and a space follows '<!--' (NCCL reads the first word as a tag name)."""
    _xml_chars(text)
    if "\n" in text or "\r" in text:
        raise ValueError(f"XML comment {text[:40]!r} holds a line break")
    while "--" in text:
        text = text.replace("--", "- -")
    return f"<!-- {text} -->"


def _xml_element(element: Element, indent: int, lines: list[str], literal: bool) -> None:
    pad = " " * indent
    attrs = _xml_attributes(element.attrib, literal) if element.attrib else ""
    head = f"{pad}<{_xml_name(element.tag)}{attrs}"
    text = _xml_value(element.text or "", literal) if element.text else ""
    children = list(element)
    if not children and not text:
        lines.append(head + "/>")
    elif not children:
        lines.append(f"{head}>{text}</{element.tag}>")
    else:
        lines.append(head + ">" + text)
        for child in children:
            _xml_element(child, indent + 2, lines, literal)
        lines.append(f"{pad}</{element.tag}>")


def _xml_attributes(attrib: Mapping[str, object], literal: bool) -> str:
    """' key="value"' of each attribute: the names checked against those seen, the values
    searched at once; one by one only where a value is not text or needs an escape (a
    drawing has a million attributes at 100,000 GPUs, nearly all plain)."""
    keys = list(attrib)
    if not _XML_NAMES.issuperset(keys):
        for key in keys:
            _xml_name(key)
    values = list(attrib.values())
    try:
        plain = not _XML_SPECIAL.search("".join(values))  # type: ignore[arg-type]
    except TypeError:  # a value that is not a str
        plain = False
    if plain:
        return "".join(map(' {}="{}"'.format, keys, values))
    return "".join(f' {k}="{_xml_value(v, literal)}"' for k, v in zip(keys, values,
                                                                          strict=True))


def xml_name(name: object) -> str:
    """``name`` if it is an XML name (a tag or an attribute's), else ValueError."""
    return _xml_name(name)


def xml_value(value: object) -> str:
    """``value`` as XML text or an attribute's value: escaped as xml_text escapes it (a
    character XML 1.0 cannot carry is refused)."""
    return _xml_value(value, False)


def xml_values(values: tuple[str, ...]) -> tuple[str, ...]:
    """Each of these strings as xml_value writes it: at once when none needs an escape (one
    search of them all, the usual case), else one by one."""
    if not _XML_SPECIAL.search("".join(values)):
        return values
    return tuple(_xml_value(value, False) for value in values)


def _xml_name(name: object) -> str:
    if name in _XML_NAMES:
        return name  # type: ignore[return-value]  # only str names are added
    if not isinstance(name, str) or not _XML_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not an XML name")
    _XML_NAMES.add(name)
    return name


def _xml_value(value: object, literal: bool) -> str:
    text = value if type(value) is str else str(value)
    if not _XML_SPECIAL.search(text):
        return text
    _xml_chars(text)
    escaped = re.sub('[&<>"\t\n\r]', lambda m: _XML_ESCAPES[m.group()], text)
    if literal and escaped != text:
        raise ValueError(f"XML value {text[:40]!r} would need an escape its reader does not "
                         "decode")
    return escaped


def _xml_chars(text: str) -> str:
    if _XML_FORBIDDEN.search(text):
        raise ValueError(f"XML text {text[:40]!r} holds a character XML 1.0 cannot carry")
    return text


# --- shell and KEY=value files ------------------------------------------------------------------

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def shell_word(value: object) -> str:
    """One POSIX shell word that the shell reads back as exactly ``value``: bare when it is
    made of safe characters, else single-quoted (shlex.quote). A line break or another control
    character is refused: a script's reader (and its reviewer) should see one line per command."""
    text = str(value)
    if _LINE_BREAKS.search(text):
        raise ValueError(f"shell word {text[:40]!r} holds a line break or control character")
    return shlex.quote(text)


def shell_assignment(name: str, value: object) -> str:
    """``NAME=word``: a variable assignment a POSIX shell (``set -a; . file``) reads back."""
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a shell variable name")
    word = shell_word(value)
    if word.startswith("="):  # NAME==x is right, but reads as a typo (shellcheck SC1097)
        word = "'" + word + "'"  # shlex left it bare: it holds no quote
    return f"{name}={word}"


def shell_comment(text: str) -> str:
    """``# text``, one line."""
    if _LINE_BREAKS.search(text):
        raise ValueError(f"shell comment {text[:40]!r} holds a line break or control character")
    return f"# {text}" if text else "#"


def env_line(name: str, value: object) -> str:
    """``NAME=value`` for a reader that takes the rest of the line verbatim (NCCL's nccl.conf:
    no quotes, no trimming): the value must be one line without surrounding blanks."""
    text = str(value)
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a variable name")
    if _LINE_BREAKS.search(text) or text != text.strip():
        raise ValueError(f"{name}'s value {text[:40]!r} is not one line without outer blanks")
    return f"{name}={text}"


# --- Markdown -----------------------------------------------------------------------------------

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
