"""The CSV writer: what every emitter that writes a CSV file calls, and all it imports for it.

csv_cell (formats/csv_cell.py) is the cell rule. csv_text writes rows, csv_records rows with no
header after '#' comments; csv_columns, csv_chunks and csv_parts write a file from its columns
(the plan's tables are stored so) through the columnar engine (formats/columnar.py), to which
an emitter may hand, besides plain columns, the descriptors re-exported here: Keyed, Runs and
Joined groups, Cells made once for several files, and the RunStops of a table. Whatever the
path, the text is the plain writer's: csv_cell of each cell, joined by ',' and '\\n'
(tests/test_formats.py holds them together).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

from cluster_iac.formats.chunks import Chunks
from cluster_iac.formats.columnar import (
    CHUNK,
    Cells,
    Joined,
    Keyed,
    Runs,
    RunStops,
    by_value,
    cells,
    csv_lines,
    lookup,
    plain_column,
    run_stops,
    table_cells,
    table_stops,
    text_of,
)
from cluster_iac.formats.csv_cell import BREAKS, csv_cell

__all__ = [
    "CHUNK", "Cells", "Joined", "Keyed", "RunStops", "Runs", "by_value", "cells", "csv_cell",
    "csv_chunks", "csv_columns", "csv_parts", "csv_pieces", "csv_records", "csv_text", "lookup",
    "plain_column", "run_stops", "table_cells", "table_stops", "text_of",
]

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
        if BREAKS.search(comment):
            raise ValueError(f"CSV comment {comment[:40]!r} holds a line break")
        lines.append(f"# {comment}")
    for row in rows:
        cells = [csv_cell(v) for v in row]
        if cells and cells[0].startswith("#"):  # quoted, a data line cannot pass for a comment
            cells[0] = '"' + cells[0].replace('"', '""') + '"'
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def csv_chunks(header: Sequence[str],
               columns: Sequence[Sequence[object] | Keyed | Runs | Joined]) -> Chunks:
    """The same file as csv_text's from its columns (the plan's tables are stored so), as
    Chunks: the columns are checked and their cells made now, the lines when read."""
    rows, lines = csv_lines(header, columns)
    return Chunks(partial(lines, 0, rows))


def csv_parts(header: Sequence[str],
              columns: Sequence[Sequence[object] | Keyed | Runs | Joined],
              per_part: int | Sequence[tuple[int, int]]) -> list[Chunks]:
    """csv_chunks' file cut into files of at most ``per_part`` rows, or at the given (start,
    stop) row ranges, each with the header: one part, the whole file, when it has no more
    rows than that."""
    rows, lines = csv_lines(header, columns)
    bounds = per_part if not isinstance(per_part, int) else [
        (start, min(start + per_part, rows)) for start in range(0, max(rows, 1), per_part)]
    return [Chunks(partial(lines, start, stop)) for start, stop in bounds]


def csv_pieces(header: Sequence[str],
               columns: Sequence[Sequence[object] | Keyed | Runs | Joined],
               parts: Sequence[Sequence[tuple[int, int]]]) -> list[Chunks]:
    """csv_chunks' file cut into files each made of the given (start, stop) row ranges, in
    that order, each with the header once: a part of rows that are not side by side in the
    table, without a copy of the table in another order."""
    _rows, lines = csv_lines(header, columns)
    return [Chunks(partial(_ranges, lines, ranges)) for ranges in parts]


def _ranges(lines: Callable[[int, int], Iterator[str]],
            ranges: Sequence[tuple[int, int]]) -> Iterator[str]:
    for n, (start, stop) in enumerate(ranges):
        made = lines(start, stop)
        if n:
            next(made)  # the header, written once
        yield from made


def csv_columns(header: Sequence[str],
                columns: Sequence[Sequence[object] | Keyed | Runs | Joined]) -> str:
    """csv_chunks' file as one text."""
    return csv_chunks(header, columns).text()
