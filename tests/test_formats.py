"""The format-aware writers: CSV cells quoted, single-line and formula-neutralised; the columnar
CSV path (csv_text, csv_columns, csv_chunks, csv_parts) writes what the plain writer writes."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from cluster_iac.formats.csv import (
    csv_cell,
    csv_chunks,
    csv_columns,
    csv_parts,
    csv_records,
    csv_text,
)
from cluster_iac.formats.markdown import markdown_row, markdown_rows
from cluster_iac.formats.yaml import yaml_text


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


def _plain_csv(header: list[str], rows: list[list[object]]) -> str:
    """The plain writer, the oracle of the columnar path: csv_cell of each cell, ',' between
    cells, '\\n' after each line."""
    return "".join(",".join(map(csv_cell, row)) + "\n" for row in [header, *rows])


HOSTILE = ["=1+1", "+cmd", "-x", "-", "-1.5", "+2e3", "@SUM(A1)", "\tx", "'q", 'q"q', '"', "a,b",
           ",", "#x", "", " ", "é", "\U0001f600", "\u2028", "\x85", "\x1b[0m", "1", "01", "True",
           "None", "nan", "-0.0"]
HOSTILE_CELLS = st.one_of(
    st.sampled_from(HOSTILE), st.text(st.characters(blacklist_characters="\n\r\x00"), max_size=8),
    st.integers(), st.floats(), st.booleans(), st.none(), st.sampled_from([0.0, -0.0, 1, 1.0]))


@settings(deadline=None)  # a correctness property; a busy machine must not fail it
@given(st.lists(st.lists(HOSTILE_CELLS, min_size=3, max_size=3), max_size=40),
       st.integers(1, 7))
def test_the_columnar_path_writes_what_the_plain_writer_writes(rows: list[list[object]],
                                                               per_part: int) -> None:
    """csv_text (rows), csv_columns and csv_chunks (columns) and csv_parts (columns cut into
    files, each with the header) all write csv_cell of each cell joined plainly, whatever the
    cells hold: formula starts, quotes, commas, '#', 1/1.0/True and 0.0/-0.0, NaN, non-ASCII."""
    header = ["a", "=b", "c,d"]
    expected = _plain_csv(header, rows)
    columns = [[row[i] for row in rows] for i in range(3)]
    assert csv_text(header, rows) == expected
    assert csv_columns(header, columns) == expected
    assert "".join(csv_chunks(header, columns)) == expected
    parts = csv_parts(header, columns, per_part)
    head, *lines = [line + "\n" for line in expected.split("\n")[:-1]]  # not splitlines: \u2028
    assert [part.text() for part in parts] == [
        head + "".join(lines[start:start + per_part])
        for start in range(0, max(len(rows), 1), per_part)]


def test_a_long_column_of_few_values_is_checked_whole() -> None:
    """A column longer than the sample the plain check takes (ports: few distinct values) is
    checked on every distinct value: one formula or quote far down is still written as the
    plain writer writes it."""
    ports = [f"p{i % 8}" for i in range(6000)]
    for at, bad in ((5999, "=cmd"), (4500, 'a"b'), (4097, "x,y")):
        column = [*ports[:at], bad, *ports[at + 1:]]
        rows = [[value, i] for i, value in enumerate(column)]
        assert csv_columns(["port", "n"], [column, list(range(6000))]) == _plain_csv(
            ["port", "n"], rows)


@pytest.mark.parametrize("value", ["yes", "on", "Off", "n", "1.0", "012", "12:30", "0x1f", "~",
                                   "null", "", "#x", "a: b", "- x", "2001-12-14", "true"])
def test_yaml_strings_read_back_as_the_same_strings_in_yaml_1_1_and_1_2(value: str) -> None:
    """Go's yaml.v2 (Prometheus) reads YAML 1.1, where 'on' and '12:30' are not strings."""
    text = yaml_text({"k": value})
    for version in ((1, 1), (1, 2)):
        yaml = YAML(typ="safe", pure=True)
        yaml.version = version
        assert yaml.load(text) == {"k": value}, (version, text)


def test_yaml_keeps_key_order_long_lines_and_a_comment_header() -> None:
    long_expr = "sum by (rack) (x{rack=~\"" + "|".join(f"r{i}" for i in range(400)) + "\"}) > 1"
    text = yaml_text({"z": 1, "a": [long_expr, "é", "a\nb"]}, ["generated", ""])
    assert text.startswith("# generated\n#\nz: 1\na:\n")
    assert long_expr in text.splitlines()[4]  # one line, never folded
    assert YAML(typ="safe", pure=True).load(text) == {"z": 1, "a": [long_expr, "é", "a\nb"]}
    with pytest.raises(ValueError, match="line break"):
        yaml_text({}, ["a\nb"])


def test_csv_records_have_comments_and_no_header() -> None:
    text = csv_records([["#x", "a,b"], ["y", "z"]], comments=["one, two"])
    assert text == '# one, two\n"#x","a,b"\ny,z\n'
    data = [line for line in text.splitlines() if not line.startswith("#")]
    assert list(csv.reader(io.StringIO("\n".join(data)))) == [["#x", "a,b"], ["y", "z"]]


def test_markdown_rows_escape_pipes_and_refuse_line_breaks() -> None:
    assert markdown_row(["r01-pdu-a", "CB1", 16.4]) == "| r01-pdu-a | CB1 | 16.4 |"
    # A '|' would open a new column; escaped, GFM shows it as text in the same cell.
    assert markdown_row(["a|b", ""]) == "| a\\|b |  |"
    with pytest.raises(ValueError, match="line break"):
        markdown_row(["two\nlines"])


def test_markdown_rows_checked_together_as_one_by_one() -> None:
    rows = [["r01-pdu-a", "CB1", "16.4"], ["r01-pdu-b", "", "0.0"]]
    assert markdown_rows(rows) == [markdown_row(r) for r in rows] == [
        "| r01-pdu-a | CB1 | 16.4 |", "| r01-pdu-b |  | 0.0 |"]
    # One '|' anywhere sends every row through markdown_row, which escapes it.
    assert markdown_rows([*rows, ["a|b", "c"]])[2] == "| a\\|b | c |"
    for bad in ("two\nlines", "cr\r", "nul\x00"):
        with pytest.raises(ValueError, match="line break"):
            markdown_rows([*rows, ["x", bad]])
    assert markdown_rows([]) == []
