"""The format-aware writers: CSV cells quoted, single-line and formula-neutralised."""

from __future__ import annotations

import csv
import io

import pytest

from cluster_iac.emit.formats import csv_cell, csv_text


@pytest.mark.parametrize(("value", "cell"), [
    ("r01", "r01"),
    ("a,b", '"a,b"'),
    ('say "hi"', '"say ""hi"""'),
    ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
    ("+cmd", "'+cmd"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("-1.5", "-1.5"),
    ("-", "-"),
    ("-x", "'-x"),
    (12, "12"),
])
def test_cells(value: object, cell: str) -> None:
    assert csv_cell(value) == cell


@pytest.mark.parametrize("bad", ["a\nNodeName=x", "a\rb", "a\x00"])
def test_a_line_break_never_reaches_a_cell(bad: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        csv_cell(bad)


def test_csv_module_reads_back_every_row() -> None:
    rows = [["a,b", 'q"q', "=1+1", "-2"], ["", "x", "y", "z"]]
    text = csv_text(("c1", "c2", "c3", "c4"), rows)
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed == [["c1", "c2", "c3", "c4"], ["a,b", 'q"q', "'=1+1", "-2"], ["", "x", "y", "z"]]
