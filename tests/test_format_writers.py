"""YAML, XML, shell and Markdown writers: any value goes in, the format's own reader reads back
exactly that value, and nothing else (properties over arbitrary text)."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

import pytest
import yaml as pyyaml  # PyYAML: YAML 1.1, as Ansible reads an inventory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from cluster_iac.base.text import CONTROL
from cluster_iac.formats.markdown import md_cell, md_cells
from cluster_iac.formats.shell import env_line, shell_assignment, shell_word
from cluster_iac.formats.xml import xml_comment, xml_text
from cluster_iac.formats.yaml import yaml_text

TRICKY = ["yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "", " ", "1", "012", "0x1f",
          "1_000", "12:30", "1e3", ".inf", "-.inf", ".NaN", "2001-12-14", "true", "=", "<<",
          "- x", "a: b", "a #b", "#x", "&a", "*a", "!tag", "%x", "@x", "`x", "|", ">", "'", '"',
          "[a]", "{a: 1}", "a\nb", "a\rb", "\t", "\x00", "\x1b[31m", "\x7f", "\x85", "\u2028",
          "\ufeff", "é", "\U0001f600", "x ", " x", "---", "...", "?", "a,b", "\\", "\\n"]
SCALARS = st.one_of(st.text(), st.sampled_from(TRICKY), st.integers(), st.booleans(),
                    st.none(), st.floats(allow_nan=False))
KEYS = st.one_of(st.text(min_size=1), st.sampled_from(TRICKY[:40]))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=20)
PRINTABLE = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40).filter(
    lambda s: CONTROL.search(s) is None)


def _yaml_readers(text: str) -> list[Any]:
    ruamel = YAML(typ="safe", pure=True)
    return [ruamel.load(text), pyyaml.safe_load(text)]


@pytest.mark.parametrize("value", TRICKY)
def test_a_tricky_string_reads_back_as_itself_in_yaml_1_1_and_1_2(value: str) -> None:
    text = yaml_text({value or "k": value})
    for loaded in _yaml_readers(text):
        assert loaded == {value or "k": value}, text
    assert len(yaml_text({"k": value}).splitlines()) == 1  # no value ever spans lines


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(DATA)
def test_any_data_reads_back_as_itself(data: Any) -> None:
    text = yaml_text(data)
    for loaded in _yaml_readers(text):
        assert loaded == data, text


def test_yaml_is_block_style_in_insertion_order_under_its_header() -> None:
    text = yaml_text({"z": 1, "a": [{"b": None}, "x"], "e": 1e20}, ["generated", ""])
    assert text.startswith("# generated\n#\nz: 1\na:\n")
    for loaded in _yaml_readers(text):
        assert list(loaded) == ["z", "a", "e"] and loaded["e"] == 1e20
    with pytest.raises(ValueError, match="line break"):
        yaml_text({}, ["a\nb"])


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_xml_attribute_and_comment_read_back(value: str, comment: str) -> None:
    root = ET.Element("system", {"version": "1"})
    ET.SubElement(root, "cpu", {"name": value})
    try:
        text = xml_text(root, comment)
    except ValueError:  # XML 1.0 cannot carry it (or a comment cannot): refused, not written
        assert any(0xD800 <= ord(c) <= 0xDFFF or ord(c) < 0x20 and c not in "\t\n\r"
                   or c in "\ufffe\uffff" for c in value + comment) or (
            "\n" in comment or "\r" in comment)
        return
    parsed = ET.fromstring(text.split("-->\n", 1)[1])  # ElementTree has no comment nodes
    assert parsed.find("cpu").get("name") == value  # type: ignore[union-attr]
    assert text.count("<!--") == 1 and text.count("-->") == 1


def test_xml_comment_cannot_end_early_and_literal_mode_refuses_escapes() -> None:
    assert xml_comment("a -- b --> c-") == "<!-- a - - b - -> c- -->"
    root = ET.Element("pci", {"busid": 'x"y'})
    assert 'busid="x&quot;y"' in xml_text(root)
    with pytest.raises(ValueError, match="escape"):
        xml_text(root, literal=True)


def _shell_reads(words: list[str]) -> list[str]:
    """What sh assigns from each word (a NUL-separated printf of every variable)."""
    script = "".join(shell_assignment(f"v{i}", w) + "\n" for i, w in enumerate(words))
    script += "printf '%s\\0'" + "".join(f' "$v{i}"' for i in range(len(words))) + "\n"
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    out = subprocess.run(["sh"], input=script.encode(), capture_output=True, check=True).stdout
    return out.decode().split("\0")[:-1]


@settings(max_examples=60, deadline=None)
@given(st.lists(PRINTABLE, min_size=1, max_size=8))
def test_a_shell_word_is_read_back_by_sh_as_itself(words: list[str]) -> None:
    assert _shell_reads(words) == words


def test_shell_refuses_line_breaks_and_quotes_what_could_run() -> None:
    assert _shell_reads(["$(touch /tmp/x)", "`id`", "a'b", "; rm -rf /", "*", "~"]) == [
        "$(touch /tmp/x)", "`id`", "a'b", "; rm -rf /", "*", "~"]
    for bad in ("a\nb", "a\rb", "\x1b"):
        with pytest.raises(ValueError):
            shell_word(bad)
    with pytest.raises(ValueError):
        shell_assignment("A B", "x")
    assert env_line("NCCL_IB_HCA", "=mlx5_0") == "NCCL_IB_HCA==mlx5_0"
    for bad in ("a\nNCCL_X=1", " a"):
        with pytest.raises(ValueError):
            env_line("NCCL_X", bad)


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_sh_is_there() -> None:
    assert shutil.which("sh")


@settings(max_examples=300, deadline=None)
@given(PRINTABLE)
def test_a_markdown_cell_never_ends_early_or_starts_markup(value: str) -> None:
    cell = md_cell(value)
    unescaped = cell.replace("\\\\", "")
    for char in "|`*[]<>~":
        assert char not in unescaped.replace("\\" + char, "")
    assert "\n" not in cell


def _cells_outcome(write: Any, values: list[str]) -> object:
    try:
        return write(values)
    except ValueError as error:
        return str(error)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=8), st.sampled_from(TRICKY),
                          st.from_regex(r"[a-z_]{0,3}[0-9]{0,3}_?[a-z]{0,2}", fullmatch=True)),
                max_size=12))
def test_markdown_cells_of_a_column_are_each_its_md_cell(values: list[str]) -> None:
    """md_cells checks a column at once; it writes (or refuses) what md_cell does one by one."""
    assert _cells_outcome(md_cells, values) == _cells_outcome(
        lambda vs: [md_cell(v) for v in vs], values)
