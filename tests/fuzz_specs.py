"""Structural mutations of the examples, for the fuzz test and the corpus measurement script.

A mutation picks a place in the spec's data (any key, list item or value) and deletes it,
empties it, replaces it with a value of another kind (huge, zero, negative, infinite, a
hostile string, a container), scales a number, duplicates a list item, renames a key, or
copies a value from elsewhere in the spec. The result is written as YAML text, so the whole
pipeline runs from the loader on, with positions.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.conftest import ROOT

# Weighted toward the small examples: each run is the whole pipeline, emitters included.
BASES = ["minimal"] * 4 + ["seed-64gpu-h100"] * 3 + ["gb200-nvl72", "mixed-a100-h100"] * 2 + [
    "dgx-h100-superpod-4su"]

HOSTILE = [
    "", " ", "-", "=cmd()", "+1", "@x", "a\nNodeName=x", "x\r\ny", "\x00", "\x1b[2J", "\x0c",
    "\u202e", "\u2028", "a|b", "a,b", "a b", "a;rm -rf /", "$(reboot)", "`id`", "'", '"', "\\",
    "--", "<!-- x -->", "<x>", "&amp;", "a: b", "- x", "#", "yes", "on", "~", "null", "0x10",
    "12:30", "1e3", "../etc", "/a/../b", "/", "a/b", "h-100", "h_100", "h.100", "x" * 70,
    "é", "\U0001f600", "*", "[", "r[1-100000000]", "r[1-3", "@group", "r[0-9]x[0-9]",
    "POWER-BREAKR", "eth0:1", "ib0,ib1", "^docker", "1:0", "0:1", "2:1", "-1", "INFINITE",
    "soon", "gpu##-", "GPU##", "###", "/lustre/$(id)", "mlx5_0", "NCCL_X", "%s%n",
]
NUMBERS = [0, -1, 1, 2, 3, 7, 64, 1000, 65_537, 10**6, 10**9, 2**31, 2**63, 10**30]
FLOATS = [0.0, -0.0, 0.5, 1e-300, 1e300, float("inf"), float("-inf"), float("nan")]
SCALARS = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(NUMBERS), st.sampled_from(FLOATS),
                    st.booleans(), st.none(), st.text(max_size=12), st.integers())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(HOSTILE[:40]) | st.text(
        max_size=8), inner, max_size=3)), max_leaves=6)


@cache
def base_data(name: str) -> Any:
    return YAML(typ="safe", pure=True).load((ROOT / "examples" / f"{name}.yaml").read_text())


def places(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``data``, containers included (the root is ())."""
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found += places(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += places(value, (*path, index))
    return found


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _mutate(draw: Any, data: Any) -> Any:
    path = draw(st.sampled_from(places(data)))
    op = draw(st.sampled_from(["delete", "replace", "scale", "empty", "duplicate", "rename",
                               "insert", "copy", "tweak", "tweak", "tweak", "tweak"]))
    if not path:
        return data if op != "replace" else draw(VALUES)
    parent, key = _get(data, path[:-1]), path[-1]
    value = parent[key]
    if op == "tweak":  # a value of the same kind: the mutations that pass the spec's types
        parent[key] = draw(_same_kind(value))
    elif op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = draw(VALUES)
    elif op == "scale" and isinstance(value, (int, float)) and not isinstance(value, bool):
        parent[key] = value * draw(st.sampled_from([0, -1, 10, 1000, 10**6, 10**9]))
    elif op == "empty" and isinstance(value, (list, dict, str)):
        parent[key] = type(value)()
    elif op == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(value))
    elif op == "rename" and isinstance(parent, dict):
        parent[draw(st.sampled_from(HOSTILE) | st.text(max_size=10))] = parent.pop(key)
    elif op == "insert" and isinstance(value, dict):
        value[draw(st.sampled_from(HOSTILE) | st.text(max_size=10))] = draw(VALUES)
    elif op == "insert" and isinstance(value, list):
        value.insert(draw(st.integers(0, len(value))), draw(VALUES))
    elif op == "copy":
        source = draw(st.sampled_from(places(data)))
        if source and source[:len(path)] != path and path[:len(source)] != source:
            parent[key] = copy.deepcopy(_get(data, source))
    return data


def _same_kind(value: Any) -> Any:
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.sampled_from(NUMBERS) | st.integers(-2, 2 * max(1, value))
    if isinstance(value, float):
        return st.sampled_from(FLOATS) | st.floats(0, 4 * max(1.0, value))
    if isinstance(value, str):
        return st.sampled_from(HOSTILE) | st.just(value + value[-1:]) | st.just(value[:-1])
    if isinstance(value, list) and value:
        return st.just(value[:-1]) | st.just(value + value[:1]) | st.just(value[::-1])
    return st.just(value)


@st.composite
def mutated_specs(draw: Any) -> tuple[str, Any]:
    """(example name, its data after one to four mutations)."""
    name = draw(st.sampled_from(BASES))
    data = copy.deepcopy(base_data(name))
    for _ in range(draw(st.integers(1, 4))):
        data = _mutate(draw, data)
    return name, data
