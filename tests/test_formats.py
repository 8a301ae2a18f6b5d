"""The format-aware writers: CSV cells quoted, single-line and formula-neutralised."""

from __future__ import annotations

import csv
import io

import pytest
from ruamel.yaml import YAML

from cluster_iac.formats.csv import csv_cell, csv_records, csv_text
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
