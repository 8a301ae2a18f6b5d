"""Loader: plain data out of YAML, a source map of every key and value, located YAML errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.base.errors import CompileError
from cluster_iac.load.loader import load_spec_file, load_spec_text

SPEC = """\
cluster:
  name: tiny
node_groups:
  - {name: gpu, count: 2}
  - name: head
    count: 1
"""


def _only_error(text: str) -> tuple[str, int, int, str, str | None]:
    with pytest.raises(CompileError) as info:
        load_spec_text(text, "s.yaml")
    [diag] = info.value.diagnostics
    assert diag.line is not None and diag.column is not None
    return diag.code, diag.line, diag.column, diag.message, diag.hint


def test_plain_data_has_python_types() -> None:
    data, _ = load_spec_text(SPEC)
    assert data == {"cluster": {"name": "tiny"},
                    "node_groups": [{"name": "gpu", "count": 2}, {"name": "head", "count": 1}]}
    assert type(data["node_groups"]) is list and type(data["cluster"]) is dict


def test_source_map_locates_values_and_keys() -> None:
    _, source = load_spec_text(SPEC, "s.yaml")
    assert str(source.locate(("cluster", "name"))) == "s.yaml:2:9"
    assert str(source.locate(("cluster", "name"), key=True)) == "s.yaml:2:3"
    assert str(source.locate(("node_groups", 0, "count"))) == "s.yaml:4:24"
    assert str(source.locate(("node_groups", 1, "count"))) == "s.yaml:6:12"
    assert str(source.locate(("node_groups", 1))) == "s.yaml:5:5"


def test_source_map_falls_back_to_the_nearest_parent() -> None:
    _, source = load_spec_text(SPEC, "s.yaml")
    # A default the user never wrote is cited at the mapping that would hold it.
    assert source.locate(("node_groups", 1, "racks")) == source.locate(("node_groups", 1))
    assert str(source.locate(("nowhere", 3))) == "s.yaml:1:1"


def test_empty_file_is_an_empty_mapping() -> None:
    data, _ = load_spec_text("# nothing yet\n")
    assert data == {}


def test_syntax_error_is_located_at_the_offending_token() -> None:
    code, line, column, message, _ = _only_error("cluster:\n  name: a: b\n")
    assert (code, line, column) == ("YAML-SYNTAX", 2, 10)
    assert message == "mapping values are not allowed here"


def test_unclosed_flow_mapping_hints_at_its_opening_brace() -> None:
    code, line, column, _, hint = _only_error("a: {b: 1\nc: 2\n")
    assert (code, line) == ("YAML-SYNTAX", 2)
    assert hint == "while parsing a flow mapping that starts at line 1, column 4"


def test_duplicate_key_is_an_error_at_the_second_key() -> None:
    code, line, column, message, hint = _only_error("cluster:\n  name: a\n  name: b\n")
    assert (code, line, column) == ("YAML-DUPLICATE-KEY", 3, 3)
    assert '"name"' in message
    assert hint == "keep one 'name' in the mapping that starts at line 2, column 3"


def test_end_of_stream_error_points_at_the_last_line() -> None:
    code, line, column, _, hint = _only_error('cluster:\n  name: "tiny\n')
    assert (code, line, column) == ("YAML-SYNTAX", 2, 14)
    assert hint == "while scanning a quoted scalar that starts at line 2, column 9"


def test_root_must_be_a_mapping() -> None:
    code, line, column, _, _ = _only_error("# a list\n- a\n- b\n")
    assert (code, line, column) == ("YAML-ROOT", 2, 1)
    code, line, _, _, _ = _only_error("just text\n")
    assert (code, line) == ("YAML-ROOT", 1)


def test_missing_file_is_a_read_error(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as info:
        load_spec_file(tmp_path / "absent.yaml")
    [diag] = info.value.diagnostics
    assert diag.code == "IO-READ" and "No such file" in diag.message


def test_non_utf8_file_is_located_at_the_bad_byte(tmp_path: Path) -> None:
    spec = tmp_path / "latin1.yaml"
    spec.write_bytes("cluster:\n  name: café\n".encode("latin-1"))
    with pytest.raises(CompileError) as info:
        load_spec_file(spec)
    [diag] = info.value.diagnostics
    assert (diag.code, diag.line, diag.column) == ("IO-ENCODING", 2, 12)
    assert "0xe9" in diag.message
    assert info.value.source is not None
    assert info.value.source.source_line(2) == "  name: caf\ufffd"


KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda k: k not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
SCALARS = st.one_of(st.integers(-10**6, 10**6), st.booleans(),
                    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True).filter(
                        lambda s: s not in {"y", "n", "yes", "no", "on", "off", "true", "false",
                                            "null"}))
TREES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=4),
    st.dictionaries(KEYS, inner, min_size=1, max_size=4)), max_leaves=20)


def _dump(node: object, indent: int = 0) -> list[str]:
    """Block-style YAML, one key per line, so we know each key's line independently."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                lines.append(f"{pad}{key}:")
                lines += _dump(value, indent + 2)
            else:
                lines.append(f"{pad}{key}: {_scalar(value)}")
    else:
        assert isinstance(node, list)
        for value in node:
            if isinstance(value, (dict, list)):
                lines.append(f"{pad}-")
                lines += _dump(value, indent + 2)
            else:
                lines.append(f"{pad}- {_scalar(value)}")
    return lines


def _scalar(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _paths(node: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
        node, list) else []
    out = []
    for key, value in items:
        out.append((*path, key))
        out += _paths(value, (*path, key))
    return out


@settings(deadline=None)  # ruamel's first load can be slow on a loaded CI machine
@given(st.dictionaries(KEYS, TREES, min_size=1, max_size=5))
def test_loader_round_trips_and_locates_every_key(tree: dict[str, object]) -> None:
    lines = _dump(tree)
    data, source = load_spec_text("\n".join(lines) + "\n", "p.yaml")
    assert data == tree
    for path in _paths(tree):
        if isinstance(path[-1], str):
            loc = source.locate(path, key=True)
            assert lines[loc.line - 1][loc.column - 1:].startswith(f"{path[-1]}:")


MERGED = """\
node_groups:
  - &gpu {name: gpu, node_type: gpu, racks: r01}
  - <<: *gpu
    name: gpu2
"""


def test_merge_keys_load_and_cite_where_each_value_is_written() -> None:
    data, source = load_spec_text(MERGED, "m.yaml")
    assert data["node_groups"][1] == {"name": "gpu2", "node_type": "gpu", "racks": "r01"}
    # A merged value is cited at the anchored mapping that defines it ...
    assert str(source.locate(("node_groups", 1, "racks"))) == "m.yaml:2:45"
    assert str(source.locate(("node_groups", 1, "racks"), key=True)) == "m.yaml:2:38"
    # ... and a value the item overrides at the override.
    assert str(source.locate(("node_groups", 1, "name"))) == "m.yaml:4:11"


def test_reused_anchor_is_an_error_not_a_raw_warning() -> None:
    code, line, column, message, hint = _only_error("a: &x 1\nb: &x 2\nc: *x\n")
    assert (code, line, column) == ("YAML-DUPLICATE-ANCHOR", 2, 4)
    assert message == "anchor '&x' is defined twice"
    assert hint == "the first '&x' is at line 1, column 4; give each anchor its own name"


@settings(deadline=None)  # ruamel's first load can be slow on a loaded CI machine
@given(st.text(alphabet=list("ab:{}[]-,&*<!|>'\"#\n ?%@`\t2~"), max_size=40))
def test_any_text_loads_or_fails_with_located_diagnostics(text: str) -> None:
    """Whatever the bytes, the loader returns data or raises CompileError (never a crash)."""
    try:
        load_spec_text(text)
    except CompileError as exc:
        assert all(d.line is not None and d.line >= 1 for d in exc.diagnostics)


def test_a_default_the_file_leaves_out_is_cited_at_its_section_key() -> None:
    """Not at the section's first child, which is an unrelated line."""
    _, source = load_spec_text("cluster:\n  name: x\npolicy:\n  air_cooled_rack_kw: 45\n", "s.yaml")
    assert str(source.locate(("policy", "max_phase_imbalance"))) == "s.yaml:3:1"
    assert str(source.locate(("policy", "air_cooled_rack_kw"))) == "s.yaml:4:23"
    assert str(source.locate(("policy", "air_cooled_rack_kw"), key=True)) == "s.yaml:4:3"
