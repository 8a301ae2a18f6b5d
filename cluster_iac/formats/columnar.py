"""The columnar CSV engine behind formats/csv.py's csv_columns, csv_chunks and csv_parts: a file
written a column at a time instead of a cell at a time. Only formats/csv.py imports it; emitters
take the descriptors (Keyed, Runs, Joined, Cells, RunStops...) from there.

Its output is, byte for byte, what csv_cell writes cell by cell and the plain writer joins
(tests/test_formats.py holds the two together on hostile values): the columns are checked
whole, each distinct value goes through csv_cell once, a group of columns that depends on one
key (Keyed) or is constant over runs of rows (Runs) is written once per key or run, and the
lines are laid out and joined at C speed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from operator import add, gt, sub
from typing import Any, NamedTuple

from cluster_iac.base.runs import lookup, runs
from cluster_iac.formats.csv_cell import csv_cell

# --- the descriptors: what an emitter hands csv_columns besides plain columns ----------------

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


class Joined(NamedTuple):
    """A column whose cells are two columns' values run together, such as a cable's id: the
    text before its port, shared by a device's cables, then the port. When both pieces print
    as they are, so does their run (no character to escape, and it starts as the first piece
    starts), and csv_columns lays the two pieces side by side: no half a million new strings.
    Otherwise the values are joined and written cell by cell."""

    first: Sequence[str]
    second: Sequence[str]


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


def by_value(values: Sequence[Hashable]) -> Keyed:
    """A column of few distinct values (line rates, lengths) as a group of one column keyed
    by itself: each distinct value written once, as text_of writes it. Values that are one
    key but print apart (1, 1.0 and True; 0.0 and -0.0) are keyed by their text instead."""
    if not _prints_as_keyed(values):  # every value's type: False may hide behind 0
        keys = text_of(values)
        return Keyed(keys, {text: (text,) for text in set(keys)}, 1)
    return Keyed(values, {value: (value,) for value in set(values)}, 1)


def run_stops(*columns: Sequence[object]) -> list[int]:
    """Where each run of rows equal in every column ends (plan/physical.py runs)."""
    return [stop for _start, stop in runs(*columns)]


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


CHUNK = 4096  # the rows of one slice of lines (csv_lines), the slice a file is written in


# --- the engine -------------------------------------------------------------------------------

def csv_lines(header: Sequence[str],
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


def _length(column: Sequence[object] | Keyed | Runs | Joined) -> int:
    if isinstance(column, Runs):
        return column.rows()
    if isinstance(column, Joined):
        if len(column.first) != len(column.second):
            raise ValueError("CSV joined columns must have one length")
        return len(column.first)
    return len(column.keys if isinstance(column, Keyed) else column)


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
    piece (slice assignment; the commas are there already), and joined once."""
    size, rows = len(slots), len(cells[0])
    laid = [","] * (size * rows)
    for k, slot in enumerate(slots):
        if isinstance(slot, int):
            laid[k::size] = cells[slot]
        elif slot != ",":
            laid[k::size] = [slot] * rows
    return "".join(laid)


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
    """A Keyed group's keys and their text, looked up in a plain dict of the texts made so
    far: its lookups take about half the time of the _KeyedText's (a dict subclass with
    __missing__), which makes a key's text the first time it is missing."""

    def __init__(self, text: _KeyedText, keys: Sequence[Hashable]) -> None:
        self.text, self.keys = text, keys
        self.made = dict(text)

    def slice(self, start: int, stop: int) -> Sequence[str]:
        keys = self.keys[start:stop]
        try:
            return lookup(self.made, keys)
        except KeyError:  # a key the group's cells did not list: its text made now
            found = lookup(self.text, keys)
            self.made.update((key, self.text[key]) for key in set(keys) - self.made.keys())
            return found


def _expand(runs: Runs, head: str, tail: str) -> list[str]:
    """A Runs group's text for every row: each run's text repeated over its rows."""
    # each distinct row of cells (often one object for many runs) formatted once
    ids = list(map(id, runs.cells))
    first = dict(zip(ids, runs.cells, strict=True))
    text = dict(zip(first, _texts(list(first.values()), runs.width, tail, head), strict=True))
    texts = map(text.__getitem__, ids)
    return list(chain.from_iterable(map(repeat, texts, map(sub, runs.stops, runs.starts()))))


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
