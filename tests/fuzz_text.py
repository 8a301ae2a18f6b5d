"""Mutations of the examples' YAML *text*, for tests/test_fuzz_text.py.

tests/fuzz_specs.py mutates the examples' data and writes it back with a serializer, so it
never makes what only text can hold: a mapping or list used as a key, anchors and aliases,
merge keys, tags, flow collections in odd places, duplicate keys, broken indentation. These
mutations edit the lines themselves: a value, a key or a whole line at a time, drawn from a
seeded random.Random so that a run is reproducible.
"""

from __future__ import annotations

import random
import re

from tests.conftest import ROOT

BASES = ["minimal", "seed-64gpu-h100", "hgx-h200", "gb200-nvl72"]

# What a value may become: other kinds (mappings, lists, nested ones), huge and negative
# numbers, YAML 1.1 spellings, tags, anchors and aliases, unicode, empties.
VALUES = [
    "{a: {b: 1}}", "[1, [2, [3]]]", "{}", "[]", "~", "null", "''", '""', "{? [a]: 1}",
    "{[a, b]: c}", "{{a: 1}: 2}", "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [{a: 1}]",
    "!!timestamp 2020-01-01", "2020-01-01", "2020-01-01T10:00:00Z", "12:30:00", "0o777",
    "0x1F", "0b101", "1_000", "+12", ".inf", "-.inf", ".nan", "1e400", "-1e400", "-1", "0",
    "-0", "-65537", "99999999999999999999", "18446744073709551617", "1" * 90, "2.5e-320",
    "yes", "no", "on", "off", "Y", "True", "!!str 5", "!!int '5'", "!!float 1", "!!bool yes",
    "!!null x", "!!int abc", "!!float x", "!!bool 2", "!!set 5", "!!omap 5", "!!pairs 5",
    "!!seq 5", "!!map 5", "!!timestamp 2020-13-01", "2026-02-30", "2020-01-01 25:00:00",
    "!!binary @@@", "!!str {a: 1}", "!!python/name:os.system",
    "!!python/object/apply:os.system ['id']",
    "!local x", "!<tag:example.com,2000:x> y", "*undefined", "&a x", "&a {b: 1}",
    "\"\\u202e\"", "\"\\0\"", "\"\\x1b[2J\"", "\"\\t\"", "\"a\\nb\"", "é", "\U0001f600",
    "ǅ", "\u00a0x", "\"\\ud800\"", "'#'", "x #", "'", '"', "[", "{", "]", "}", ",", "?", ":",
    "- x", "|", ">", "|-\n    block", "x" * 300, "r[1-1000000000]", "../../etc/passwd",
    "/dev/../etc", "$(reboot)", "%s%n", "gpu##-", "[a, *b]",
]
# What a key may become: a mapping or list key, other scalars, a merge key, an alias.
KEYS = [
    "? {a: 1}\n{indent}:", "? {a: {b: 1}}\n{indent}:", "? [a, b]\n{indent}:", "{a: 1}:",
    "[a]:", "? |\n{indent}  block\n{indent}:", "1:", "-1:", "~:", "null:", "true:", "yes:",
    "2020-01-01:", "1.5:", ".inf:", "é:", "\"\":", "'a b':", "<<:", "*a :", "!!int 3:",
    "? ~\n{indent}:", "&k name:", "x" * 200 + ":",
]
# Whole lines to put somewhere: merge keys, anchors, aliases, sections emptied or repeated.
LINES = [
    "<<: *a", "<<: [*a, *b]", "<<: {x: 1}", "x: &a {y: 1}", "y: *a", "? {a: [b]}", ": value",
    "- item", "---", "...", "%YAML 1.1", "%TAG ! tag:example.com,2000:", "node_types:",
    "cluster: {}", "cluster: []", "cluster: ~", "slurm:", "rows: []", "node_groups: {}",
    "power: {pdu_profiles: {}}", "catalog: {coolants: {w: {name: w, source: s, points: "
    "[{temperature_c: 20, density_kg_m3: 1000, cp_kj_kg_k: 4}, {temperature_c: 20, "
    "density_kg_m3: 999, cp_kj_kg_k: 4.1}]}}}", "storage: {lustre: {fsname: x}}",
    "cooling: {loops: [{name: l, racks: r01}]}", "fabric: {compute: {}}",
]
_VALUE = re.compile(r"(?P<head>^\s*(?:- )?[A-Za-z_][A-Za-z0-9_-]*:\s+)(?P<value>[^#{\[\s][^#]*?)"
                    r"(?P<tail>\s*(?:#.*)?)$")
_FLOW_VALUE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_]*): (?P<value>[^,{}\[\]]+?)(?=[,}])")
_KEY = re.compile(r"^(?P<indent>\s*(?:- )?)(?P<key>[A-Za-z_][A-Za-z0-9_-]*):(?=\s|$)")
_NUMBER = re.compile(r"(?<![\w.#-])\d+(?:\.\d+)?(?![\w.:-])")


def base_text(name: str) -> str:
    return (ROOT / "examples" / f"{name}.yaml").read_text(encoding="utf-8")


def mutate(text: str, rng: random.Random) -> str:
    """One to three edits of ``text``."""
    lines = text.split("\n")
    # Half the cases are hostile YAML, which the loader and the spec's types mostly stop;
    # half are plausible edits (values of the file moved about, numbers in range), which get
    # through to the compile passes and the checks.
    hostile = rng.random() < 0.5
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(["value", "value", "flow", "key", "line", "number", "number",
                         "delete", "duplicate", "indent", "empty"] if hostile
                        else ["reuse", "reuse", "small", "small", "duplicate"])
        lines = _EDITS[op](lines, rng)
    return "\n".join(lines)


def _pick(lines: list[str], rng: random.Random, pattern: re.Pattern[str]) -> int | None:
    found = [i for i, line in enumerate(lines) if pattern.search(line)]
    return rng.choice(found) if found else None


def _value(lines: list[str], rng: random.Random) -> list[str]:
    i = _pick(lines, rng, _VALUE)
    if i is not None:
        match = _VALUE.match(lines[i])
        assert match is not None
        lines[i] = match["head"] + _indented(rng.choice(VALUES), match["head"]) + match["tail"]
    return lines


def _flow(lines: list[str], rng: random.Random) -> list[str]:
    i = _pick(lines, rng, _FLOW_VALUE)
    if i is not None:
        matches = list(_FLOW_VALUE.finditer(lines[i]))
        match = rng.choice(matches)
        value = rng.choice([v for v in VALUES if "\n" not in v])
        lines[i] = lines[i][:match.start("value")] + value + lines[i][match.end("value"):]
    return lines


def _key(lines: list[str], rng: random.Random) -> list[str]:
    i = _pick(lines, rng, _KEY)
    if i is not None:
        match = _KEY.match(lines[i])
        assert match is not None
        indent = " " * len(match["indent"])
        key = rng.choice(KEYS).replace("{indent}", indent)
        lines[i] = match["indent"] + key + lines[i][match.end():]
    return lines


def _line(lines: list[str], rng: random.Random) -> list[str]:
    i = rng.randrange(len(lines) + 1)
    indent = re.match(r"\s*", lines[i - 1] if i else "")
    prefix = indent.group() if indent and rng.random() < 0.5 else ""
    lines.insert(i, prefix + rng.choice(LINES))
    return lines


def _number(lines: list[str], rng: random.Random) -> list[str]:
    i = _pick(lines, rng, _NUMBER)
    if i is not None:
        match = rng.choice(list(_NUMBER.finditer(lines[i])))
        new = rng.choice(["-1", "0", "-0", "1e9", "1e300", "-5", "4294967296", "65536",
                          str(10**18), "0.0001", "-" + match.group(), match.group() * 3])
        lines[i] = lines[i][:match.start()] + new + lines[i][match.end():]
    return lines


def _reuse(lines: list[str], rng: random.Random) -> list[str]:
    """A value replaced by another value of the same file: names that refer elsewhere, a
    number of another field: mostly well-typed, so the later stages see it."""
    found = [(i, m) for i, line in enumerate(lines)
             for m in [*_FLOW_VALUE.finditer(line), *([_VALUE.match(line)] if _VALUE.match(
                 line) else [])]]
    if len(found) < 2:
        return lines
    i, target = rng.choice(found)
    kind = _NUMBER.fullmatch(target["value"].strip()) is not None
    same = [m for _, m in found
            if (_NUMBER.fullmatch(m["value"].strip()) is not None) == kind]
    value = rng.choice(same)["value"].strip()
    lines[i] = lines[i][:target.start("value")] + value + lines[i][target.end("value"):]
    return lines


def _small(lines: list[str], rng: random.Random) -> list[str]:
    """A number replaced by a plausible one: in range for its field, wrong for the design."""
    i = _pick(lines, rng, _NUMBER)
    if i is not None:
        match = rng.choice(list(_NUMBER.finditer(lines[i])))
        new = str(rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 32, 48, 63, 64, 100, 127,
                              128, 200, 255, 256, 1000, 4096]))
        lines[i] = lines[i][:match.start()] + new + lines[i][match.end():]
    return lines


def _delete(lines: list[str], rng: random.Random) -> list[str]:
    if lines:
        del lines[rng.randrange(len(lines))]
    return lines


def _duplicate(lines: list[str], rng: random.Random) -> list[str]:
    if lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    return lines


def _indent(lines: list[str], rng: random.Random) -> list[str]:
    if lines:
        i = rng.randrange(len(lines))
        lines[i] = rng.choice(["  ", "\t", " "]) + lines[i] if rng.random() < 0.6 else \
            lines[i][2:]
    return lines


def _empty(lines: list[str], rng: random.Random) -> list[str]:
    """A top-level section's body removed, or replaced by an empty mapping or list."""
    tops = [i for i, line in enumerate(lines) if re.match(r"[a-z_]+:\s*(#.*)?$", line)]
    if not tops:
        return lines
    i = rng.choice(tops)
    end = next((j for j in range(i + 1, len(lines)) if re.match(r"\S", lines[j])), len(lines))
    lines[i] = lines[i].split(":")[0] + ":" + rng.choice(["", " {}", " []", " ~"])
    del lines[i + 1:end]
    return lines


def _indented(value: str, head: str) -> str:
    """A block scalar's continuation lines one step deeper than its key."""
    depth = len(head) - len(head.lstrip())
    return value.replace("\n    ", "\n" + " " * (depth + 2))


_EDITS = {"value": _value, "flow": _flow, "key": _key, "line": _line, "number": _number,
          "delete": _delete, "duplicate": _duplicate, "indent": _indent, "empty": _empty,
          "reuse": _reuse, "small": _small}
