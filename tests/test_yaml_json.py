"""The column-at-a-time YAML and JSON writers write exactly what the one-value-at-a-time
definitions write: yaml_text as the plain recursive block writer below (the writer before it was
made fast, kept here as the oracle), json_text as json.dumps(indent=2). Wide tables of like
records, records of several shapes, keys 1 and True, and hostile strings go through both."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_iac.formats.json import json_lines, json_text, json_texts
from cluster_iac.formats.yaml import (
    _NEEDS_ESCAPE,
    _NEEDS_ESCAPE_IN_LINE,
    yaml_scalar,
    yaml_strings,
    yaml_text,
)
from tests.test_format_writers import TRICKY


def reference_yaml(data: object) -> str:
    """yaml_text's definition, one value at a time."""
    lines: list[str] = []
    if isinstance(data, (Mapping, list)) and data:
        _block(data, 0, lines)
    else:
        lines.append(_inline(data))
    return "\n".join(lines) + "\n"


def _inline(value: object) -> str:
    if isinstance(value, Mapping):
        if value:
            raise ValueError("a mapping in flow position")
        return "{}"
    if isinstance(value, (list, tuple)):
        if value:
            raise ValueError("a list in flow position")
        return "[]"
    return yaml_scalar(value)


def _block(data: Any, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if isinstance(data, Mapping):
        for key, value in data.items():
            if not isinstance(key, (str, int, bool)):
                raise TypeError(f"YAML key of type {type(key).__name__}")
            head = f"{pad}{yaml_scalar(key)}:"
            if _is_block(value):
                lines.append(head)
                _block(value, indent + 2, lines)
            else:
                lines.append(head if value is None else f"{head} {_inline(value)}")
        return
    for item in data:
        if _is_block(item):
            nested: list[str] = []
            _block(item, indent + 2, nested)
            lines.append(f"{pad}- {nested[0][indent + 2:]}")
            lines.extend(nested[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")


def _is_block(value: object) -> bool:
    return isinstance(value, (Mapping, list, tuple)) and bool(value)


STRINGS = st.one_of(st.text(max_size=12), st.sampled_from(TRICKY),
                    st.from_regex(r"[a-z][a-z0-9]{0,3}", fullmatch=True))
SCALARS = st.one_of(STRINGS, st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))
YAML_KEYS = st.one_of(STRINGS, st.integers(-2, 2), st.booleans())
JSON_KEYS = STRINGS


def _records(keys: st.SearchStrategy[Any], inner: st.SearchStrategy[Any],
             ) -> st.SearchStrategy[Any]:
    """Tables: many records with the same keys, or a name -> record mapping of them."""
    def table(names: list[Any]) -> st.SearchStrategy[Any]:
        row = st.fixed_dictionaries({name: inner for name in names})
        return st.one_of(st.lists(row, max_size=12),
                         st.dictionaries(STRINGS, row, max_size=12))
    return st.lists(keys, max_size=4, unique=True).flatmap(table)


def _data(keys: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(SCALARS, lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.tuples(inner, inner),
        st.dictionaries(keys, inner, max_size=6), _records(keys, inner)), max_leaves=40)


def _outcome(write: Any, data: Any) -> tuple[str, str]:
    """The text written, or the error raised (a tuple at the top is refused by both)."""
    try:
        return "text", write(data)
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)


EXAMPLES = settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow],
                    deadline=None)


@EXAMPLES
@given(_data(YAML_KEYS))
def test_yaml_text_is_the_recursive_writer(data: Any) -> None:
    assert _outcome(yaml_text, data) == _outcome(reference_yaml, data)


@EXAMPLES
@given(_data(JSON_KEYS), st.booleans())
def test_json_text_is_json_dumps_indent_2(data: Any, sort_keys: bool) -> None:
    expected = _outcome(lambda d: json.dumps(d, indent=2, sort_keys=sort_keys) + "\n", data)
    assert _outcome(lambda d: json_text(d, sort_keys=sort_keys), data) == expected


@EXAMPLES
@given(st.lists(STRINGS, max_size=30), st.sampled_from(["", " ", "- "]))
def test_yaml_strings_decide_as_yaml_scalar(values: list[str], prefix: str) -> None:
    assert yaml_strings(values, prefix) == [prefix + yaml_scalar(v) for v in values]


@pytest.mark.parametrize("values", [
    ["a", "b"], ["10.0.0.1", "10.0.0.2"], ["it's", "x'y"], ["yes", "no", "On"], ["a", "1"],
    [""], ["", ""], ["a\nb", "c"], ["a", "b\x85"], ["r1", "r1", "r2"], ["\u2028", "x"]])
def test_yaml_strings_in_each_of_its_ways(values: list[str]) -> None:
    assert yaml_strings(values, " ") == [" " + yaml_scalar(v) for v in values]


def test_records_of_several_shapes_keys_one_and_true_and_other_mappings() -> None:
    hosts = {f"h{n}": {"rack": f"r{n % 3}", "ip": f"10.0.0.{n}", "u": n} for n in range(40)}
    hosts.update({f"s{n}": {"rack": "net1", "role": "leaf"} for n in range(20)})
    hosts["odd"] = {"rack": None, "tags": [], "more": {}, "ip": "it's"}
    data = {"all": {"hosts": hosts, "groups": {f"g{n}": dict.fromkeys(hosts) for n in range(3)}},
            "flags": [{1: "one"}, {True: "yes"}, {1: "uno"}, {True: "si"}] * 5,
            "proxy": MappingProxyType({"a": [1, {"b": None}], "c": ()}),
            "floats": [0.0, -0.0, 1e20, math.inf, -math.inf, 2.5] * 3}
    assert yaml_text(data) == reference_yaml(data)
    assert "  - true: yes" not in yaml_text(data)  # {1: 'one'} is not written as {True: ...}


def test_json_hands_what_is_not_plain_to_json() -> None:
    data = {"z": [{1: "a", 2: "b"}] * 10, "n": [math.nan, math.inf, -0.0, 1e300], "t": (1, 2),
            "k": {None: 1, 2.5: 2, True: 3}}
    assert json_text(data) == json.dumps(data, indent=2) + "\n"
    with pytest.raises(TypeError):
        json_text({"x": {1, 2}})
    with pytest.raises(TypeError):
        json_text({"x": {"a": 1, 2: 3}}, sort_keys=True)


def test_yaml_refuses_what_it_cannot_write() -> None:
    with pytest.raises(TypeError, match="YAML key of type float"):
        yaml_text([{1.5: "x"}] * 10)
    with pytest.raises(TypeError, match="YAML scalar of type set"):
        yaml_text({"a": [{"x": {1}}] * 10})


@EXAMPLES
@given(st.lists(_data(JSON_KEYS), max_size=8), st.booleans())
def test_json_lines_are_json_dumps_of_each(values: list[Any], sort_keys: bool) -> None:
    expected = _outcome(lambda v: [json.dumps(x, sort_keys=sort_keys) for x in v], values)
    assert _outcome(lambda v: json_lines(v, sort_keys=sort_keys), values) == expected


@EXAMPLES
@given(st.lists(_data(JSON_KEYS), max_size=8), st.booleans())
def test_json_texts_are_json_dumps_indent_2_of_each(values: list[Any], sort_keys: bool) -> None:
    expected = _outcome(lambda v: [json.dumps(x, indent=2, sort_keys=sort_keys) + "\n"
                                   for x in v], values)
    assert _outcome(lambda v: json_texts(v, sort_keys=sort_keys), values) == expected


def test_lists_of_one_length_are_written_as_json_writes_them() -> None:
    """Lists of one length (file_sd's one-address targets) are joined a list at a time."""
    data = {"pairs": [[n, str(n)] for n in range(20)], "ones": [["a"], ["b"], [None]],
            "tuples": [(1.5, "x", [])] * 3, "mixed": [[1], [], [2, 3]]}
    for sort_keys in (False, True):
        assert json_text(data, sort_keys=sort_keys) == json.dumps(
            data, indent=2, sort_keys=sort_keys) + "\n"
    records = [{"targets": [f"10.0.0.{n}:9100"], "labels": {"rack": f"r{n}"}} for n in range(9)]
    assert json_lines(records) == [json.dumps(record) for record in records]


def test_what_needs_an_escape_is_outside_the_printable_ranges() -> None:
    """The escape classes, written as the characters that need one, are the complement of
    x20-x7E, xA0-xD7FF, xE000-xFFFD and x10000-x10FFFF, with x2028 and x2029 (and '\\n'
    let through by the one for joined lines): checked on every code point."""
    every = "".join(map(chr, range(0x110000)))

    def printable(code: int) -> bool:
        return (0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
                or code >= 0x10000) and code not in (0x2028, 0x2029)

    needs = "".join(chr(code) for code in range(0x110000) if not printable(code))
    assert "".join(_NEEDS_ESCAPE.findall(every)) == needs
    assert "".join(_NEEDS_ESCAPE_IN_LINE.findall(every)) == needs.replace("\n", "")


def _switch_tables() -> dict[str, Any]:
    """Wide tables in the shapes a fabric's AVD inputs have, large enough for each fast path:
    ports of two shapes in runs and scattered, columns that are one value (the MTU, a nested
    {'enabled': False}), columns equal but not alike (1 and True, 1 and 1.0), names repeated
    in lists, records of one shape, a mapping of names to None."""
    ports: list[dict[str, Any]] = []
    for n in range(400):
        if n % 3:
            port: dict[str, Any] = {
                "name": f"Ethernet{n % 40}", "description": f"gpu-{n}:rdma0 r{n}",
                "shutdown": False, "mtu": 9000, "switchport": {"enabled": False}}
            if n % 5:
                port["ip_address"] = f"10.0.{n % 256}.0/31"
            port["service_profile"] = "ROCE_LOSSLESS"
        else:
            port = {"name": f"Ethernet{n % 40}", "description": "uplink"}
        ports.append(port)
    nodes = [{"name": f"leaf{n}", "id": n, "uplinks": [f"Ethernet{57 + k}" for k in range(8)],
              "switches": ["spine-1"] * 4 + ["spine-2"] * 4, "flags": [True, 1, 1.0, None],
              "ports": ports[n * 10:n * 10 + 10 + n % 7]} for n in range(36)]
    return {"nodes": nodes, "ports": ports,
            "equal": [{"a": 1} if n % 2 else {"a": True} for n in range(100)],
            "floats": [{"a": 1, "b": "x"} if n % 2 else {"a": 1.0, "b": "x"} for n in range(100)],
            "nested": [{"x": {"k": 1}, "y": {"k": True}, "z": "same"} for _ in range(80)],
            "runs": [{"a": n} for n in range(100)] + [{"b": n} for n in range(100)],
            "hosts": dict.fromkeys(f"h{n}" for n in range(100)), "empty": [{}] * 20}


def test_wide_tables_are_written_as_one_value_at_a_time() -> None:
    """The column paths (one text for a whole column, list items dashed where made, names
    written once, shapes gathered by C passes, a document joined once) write what the
    recursive writer and json.dumps write."""
    data = _switch_tables()
    assert yaml_text(data, ["title"], start=True) == "# title\n---\n" + reference_yaml(data)
    for part in data.values():
        assert yaml_text(part) == reference_yaml(part)
    for sort_keys in (False, True):
        assert json_text(data, sort_keys=sort_keys) == json.dumps(
            data, indent=2, sort_keys=sort_keys) + "\n"
    assert json_lines(data["ports"]) == [json.dumps(port) for port in data["ports"]]

