"""YAML and JSON writers for plain data, fast on wide tables of like records.

yaml_scalar decides how one scalar is written; yaml_text and json_text write whole documents.
Both walk the data a column at a time: the values under one key of many like mappings (every
host's ``rack``, every node's ``addresses``) are formatted together, each distinct string once,
and each record's text is joined from its columns. The text is exactly what the one-value-at-a-
time definition gives (yaml_text: the block layout below; json_text: ``json.dumps(data,
indent=2)``), only made with far fewer Python steps: a 100,000-GPU inventory has 800,000
scalars but a few dozen columns.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence, Sized
from itertools import chain, groupby, repeat
from json.encoder import encode_basestring_ascii  # json's C one
from typing import cast

# --- YAML scalars -------------------------------------------------------------------------------

# A string is written plain only when no YAML 1.1 or 1.2 reader could take it for anything else
# (PyYAML, Ansible and Go's yaml.v2 read 1.1, where yes/on/y are booleans and 12:30 a number).
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
_YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "nan", "inf"}
# Outside single quotes YAML needs an escape: line breaks, and what is not c-printable. The
# class lists what is outside x20-x7E, xA0-xD7FF, xE000-xFFFD and x10000-x10FFFF (tab and x85
# escaped too), plus x2028 and x2029: the negated class of those ranges is the same set (the
# test checks every code point) but took re some 3 ms to compile in each process.
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029]")
# The same two tests over many strings joined by '\n' (which _NEEDS_ESCAPE_IN_LINE lets pass).
_NEEDS_ESCAPE_IN_LINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                                   "\u2028\u2029]")
# Over '\n' + the strings joined by '\n' + '\n': the plain ones, whether all are, and whether
# one is a YAML 1.1 word (on the text in lower case). A leading '\n' is fast to search for.
_PLAIN_LINES = re.compile(r"\n([A-Za-z_/][A-Za-z0-9_./-]*)(?=\n)")
_ALL_PLAIN = re.compile(r"(?:\n[A-Za-z_/][A-Za-z0-9_./-]*)*\n")
_YAML11_LINE = re.compile("\n(?:" + "|".join(sorted(_YAML11_WORDS)) + ")(?=\n)")


def yaml_scalar(value: object) -> str:
    """One scalar that YAML 1.1 and 1.2 readers read back as ``value`` (str, int, float, bool,
    None): plain when unambiguous, else single-quoted, else double-quoted with escapes."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _yaml_float(value)
    if not isinstance(value, str):
        raise TypeError(f"YAML scalar of type {type(value).__name__}")
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML11_WORDS:
        return value
    if not _NEEDS_ESCAPE.search(value):
        return "'" + value.replace("'", "''") + "'"
    return _NEEDS_ESCAPE.sub(_yaml_escape, json.dumps(value, ensure_ascii=False))


def yaml_strings(values: Sequence[str], prefix: str = "") -> list[str]:
    """``prefix`` + yaml_scalar(value) for each string, decided for all of them at once. When
    none needs an escape (checked on the text of all joined by '\n'), each is plain (a line
    _PLAIN_LINES finds that is no YAML 1.1 word) or single-quoted; a column all of one kind is
    written by joining and splitting its text. Otherwise value by value."""
    text = "\n".join(values)
    if text.count("\n") != len(values) - 1 or (
            # ASCII is printable from ' ' to '~' (isprintable), as YAML's c-printable there
            not text.replace("\n", "").isprintable() if text.isascii()
            else _NEEDS_ESCAPE_IN_LINE.search(text)):
        return [prefix + yaml_scalar(value) for value in values]
    lines = "\n" + text + "\n"  # each value between line breaks, as the patterns want them
    words = _YAML11_LINE.search(lines.lower())
    if not words and _ALL_PLAIN.fullmatch(lines):  # every one plain (names)
        return (prefix + text.replace("\n", "\n" + prefix)).split("\n")
    found = _PLAIN_LINES.findall(lines)
    plain = {v for v in found if v.lower() not in _YAML11_WORDS} if words else set(found)
    if not plain:  # every one quoted (addresses): '' for each quote, and "'" around each line
        text = text.replace("'", "''").replace("\n", "'\n" + prefix + "'")
        return f"{prefix}'{text}'".split("\n")
    return [prefix + v if v in plain else prefix + "'" + v.replace("'", "''") + "'"
            for v in values]


def _yaml_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _yaml_float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "." not in text and "e" in text:  # YAML 1.1 wants the dot: 1e+20 is a string there
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


# --- YAML documents -----------------------------------------------------------------------------

def yaml_text(data: object, header: Sequence[str] = (), *, start: bool = False) -> str:
    """A YAML document from plain data (dicts, lists, str, int, float, bool, None): block style,
    two-space indents, keys in insertion order, one line per scalar, every value read back as
    itself by YAML 1.1 and 1.2 readers. ``header`` lines become '# ' comments above it;
    ``start`` opens the document with the explicit start marker '---' (after the header).

    A mapping's entry is ``key: scalar``, ``key:`` (None), ``key: {}`` / ``key: []`` (empty),
    or ``key:`` with its block two spaces further in; a list item is ``- scalar`` (``- null``)
    or ``- `` followed by its block's first line, the rest under it."""
    lines = [yaml_comment(line) for line in header] + (["---"] if start else [])
    if isinstance(data, (Mapping, list)) and data:
        lines.append(_Yaml().tails([data], 0)[0][1:])  # the block after its leading line break
    else:
        lines.append(_yaml_inline(data))
    return "\n".join(lines) + "\n"


def yaml_comment(text: str) -> str:
    """``# text``, one line."""
    if _NEEDS_ESCAPE.search(text):
        raise ValueError(f"YAML comment {text[:40]!r} holds a line break or control character")
    return f"# {text}" if text else "#"


def _yaml_inline(value: object) -> str:
    if isinstance(value, Mapping):
        if value:
            raise ValueError("a mapping in flow position")
        return "{}"
    if isinstance(value, (list, tuple)):
        if value:
            raise ValueError("a list in flow position")
        return "[]"
    return yaml_scalar(value)


class _Yaml:
    """One document's writer. A value's *tail* is its text after ``key:``: ' scalar', '' for
    None, ' {}' or ' []', or a line break and its block at the indent given."""

    def __init__(self) -> None:
        self.strings: dict[object, str] = {None: ""}  # str (exactly) -> ' ' + yaml_scalar
        self.plain: set[str] = set()  # the strings among them written as they are
        self.heads: dict[int, dict[object, str]] = {}  # indent -> str key -> '\n  key:'

    def tails(self, values: Sequence[object], indent: int) -> list[str]:
        """The tails of a column of values whose blocks start at ``indent``."""
        types = set(map(type, values))
        if len(types) == 1 or types == {str, NoneType}:
            return self._column(types.pop() if len(types) == 1 else str, values, indent)
        return _by_type(values, lambda kind, column: self._column(kind, column, indent))

    def _column(self, kind: type, values: Sequence[object], indent: int) -> list[str]:
        """The tails of values all of ``kind`` (str also: strings and None)."""
        if kind is str or kind is NoneType:
            return self._strings(values)
        if kind is int:  # each distinct number once (rack units, GPU counts)
            texts = {value: " " + int.__repr__(value) for value in set(values)}  # type: ignore[arg-type]
            return list(map(texts.__getitem__, values))
        if kind is dict:
            return _by_shape(values,  # type: ignore[arg-type]
                             lambda alike, keys: self._alike(alike, keys, indent),
                             lambda mixed: self._entries(mixed, indent))
        return [self._tail(value, indent) for value in values]

    def _strings(self, values: Sequence[object]) -> list[str]:
        known = self.strings
        if len(values) > 64 and len(set(values[:64])) == 64 and None not in values:
            # the first 64 all differ (addresses): all at once, none kept (either way is right)
            return yaml_strings(values, " ")  # type: ignore[arg-type]
        new = list(set(values).difference(known))
        if new:  # each distinct string once: names repeat in every group they belong to
            self._learn(new)  # type: ignore[arg-type]
        return list(map(known.__getitem__, values))

    def _learn(self, new: list[str]) -> None:
        texts = yaml_strings(new, " ")
        self.strings.update(zip(new, texts, strict=True))
        # quoting only adds characters: the same length is the string as it is
        self.plain.update([v for v, text in zip(new, texts, strict=True)
                           if len(text) == len(v) + 1])

    def _plain(self, keys: Sequence[object]) -> bool:
        """Whether every key is a string written as it is."""
        if self.plain.issuperset(keys):
            return True
        new = [key for key in set(keys).difference(self.strings) if type(key) is str]
        if new:
            self._learn(new)
        return self.plain.issuperset(keys)

    def _tail(self, value: object, indent: int) -> str:
        if type(value) is str or value is None:
            return self._strings([value])[0]
        if isinstance(value, Mapping):
            return self._entries([value], indent)[0] if value else " {}"
        if isinstance(value, (list, tuple)):
            return self._sequence(value, indent) if value else " []"
        return " " + yaml_scalar(value)

    def _heads(self, keys: Sequence[object], indent: int, unique: bool = False) -> list[str]:
        """'\\n' + indent + key + ':' for each key (``unique``: each is there once)."""
        pad = "\n" + " " * indent
        if set(map(type, keys)) != {str}:
            for key in keys:
                if not isinstance(key, (str, int, bool)):
                    raise TypeError(f"YAML key of type {type(key).__name__}")
            return [f"{pad}{yaml_scalar(key)}:" for key in keys]
        if unique and len(keys) > 64:  # one mapping's many keys (hosts): no table of them
            tails = yaml_strings(keys, " ")  # type: ignore[arg-type]
            if sum(map(len, tails)) == sum(map(len, keys)) + len(keys):  # type: ignore[arg-type]
                self.plain.update(keys)  # type: ignore[arg-type]  # all written as they are
            return [f"{pad}{tail[1:]}:" for tail in tails]
        known = self.heads.setdefault(indent, {})
        new = list(set(keys).difference(known))
        if new:
            known.update(zip(new, [f"{pad}{tail[1:]}:" for tail in self._strings(new)],
                             strict=True))
        return list(map(known.__getitem__, keys))

    def _entries(self, values: Sequence[Mapping[object, object]], indent: int) -> list[str]:
        """Mappings' entries as one column, cut back into mappings."""
        sizes = list(map(len, values))
        keys = list(chain.from_iterable(values))
        items = list(chain.from_iterable([value.values() for value in values]))
        texts: list[str] = []
        start = 0
        if items.count(None) == len(items) and self._plain(keys):
            # names that are all None (an inventory group's hosts): 'name:' lines joined whole
            pad = "\n" + " " * indent
            between = ":" + pad
            for size in sizes:
                texts.append(pad + between.join(keys[start:start + size]) + ":"  # type: ignore[arg-type]
                             if size else " {}")
                start += size
            return texts
        tails = self.tails(items, indent + 2)
        entries = list(map(str.__add__, self._heads(keys, indent, len(values) == 1), tails))
        for size in sizes:
            texts.append("".join(entries[start:start + size]) if size else " {}")
            start += size
        return texts

    def _alike(self, values: Sequence[dict[object, object]], keys: tuple[object, ...],
               indent: int) -> list[str]:
        """Dicts of the same keys, in the same order: each key's head once, its values as
        one column."""
        if not keys:
            return [" {}"] * len(values)
        if len(values) < len(keys) or set(map(type, keys)) != {str}:
            # few records of many keys: their entries as one column (and keys such as 1 and
            # True are equal in a tuple, so only str keys may stand for each other's)
            return self._entries(values, indent)
        parts: list[object] = []
        columns = zip(*map(dict.values, values), strict=True)
        for head, column in zip(self._heads(keys, indent), columns, strict=True):
            parts += (repeat(head), self.tails(column, indent + 2))
        return list(map("".join, zip(*parts, strict=False)))  # type: ignore[call-overload]  # repeat() is endless

    def _sequence(self, items: Sequence[object], indent: int) -> str:
        dash, cut = "\n" + " " * indent + "- ", indent + 3
        # a scalar's tail ' x' gives '- x'; None '- null'; a block's first line goes after '- '
        return "".join([dash + (tail[1:] if tail[:1] == " " else tail[cut:] if tail else "null")
                        for tail in self.tails(items, indent + 2)])


# --- both: a column at a time -------------------------------------------------------------------

NoneType = type(None)
Records = Sequence[dict[object, object]]


def _by_type(values: Sequence[object],
             write: Callable[[type, Sequence[object]], list[str]]) -> list[str]:
    """write(kind, values) for the values of each type, scattered back into place."""
    where: dict[type, list[int]] = {}
    for at, value in enumerate(values):
        where.setdefault(type(value), []).append(at)
    texts = [""] * len(values)
    for kind, found in where.items():
        for at, text in zip(found, write(kind, [values[at] for at in found]), strict=True):
            texts[at] = text
    return texts


def _by_shape(values: Records, alike: Callable[[Records, tuple[object, ...]], list[str]],
              entries: Callable[[Records], list[str]]) -> list[str]:
    """Each dict's text, a shape (its keys, in order) at a time: alike(dicts, keys) for the
    dicts of each shape, taken as runs where shapes come in runs (hosts: nodes, then switches,
    then PDUs), else gathered and scattered back. Where shapes are many (one in eight dicts or
    more, as an inventory's groups), and for one dict, entries(dicts) writes all their entries
    as one column."""
    if len(values) == 1:
        return entries(values)
    many = len(values) >= 16
    if many and len(set(map(len, values))) * 8 > len(values):  # no key tuples made then
        return entries(values)
    shapes = list(map(tuple, values))
    kinds = set(shapes)
    if len(kinds) == 1:
        return alike(values, shapes[0])
    if many and len(kinds) * 8 > len(values):
        return entries(values)
    runs = [(shape, len(list(run))) for shape, run in groupby(shapes)]
    texts: list[str] = []
    if len(runs) * 8 <= len(values):
        start = 0
        for shape, size in runs:
            texts += alike(values[start:start + size], shape)
            start += size
        return texts
    groups: dict[tuple[object, ...], list[int]] = {}
    for at, shape in enumerate(shapes):
        groups.setdefault(shape, []).append(at)
    texts = [""] * len(values)
    for shape, where in groups.items():
        for at, text in zip(where, alike([values[at] for at in where], shape), strict=True):
            texts[at] = text
    return texts


# --- JSON ---------------------------------------------------------------------------------------

def json_text(data: object, *, sort_keys: bool = False) -> str:
    """``json.dumps(data, indent=2, sort_keys=sort_keys)`` and a final line break, byte for byte
    (ASCII, NaN as json writes it), made a column at a time (json's indented encoder is pure
    Python, value by value). What is not plain data (a dict subclass, a key that is not a
    string) is handed to json itself."""
    return _Json(sort_keys, indent=True).texts([data], 0)[0] + "\n"


def json_lines(values: Sequence[object], *, sort_keys: bool = False) -> list[str]:
    """``json.dumps(value, sort_keys=sort_keys)`` of each value (one line each, ', ' and ': '
    between items), made a column at a time: a file of one record per line."""
    return _Json(sort_keys, indent=False).texts(values, 0)


class _Json:
    def __init__(self, sort_keys: bool, indent: bool):
        self.sort_keys = sort_keys
        self.indent = indent

    def texts(self, values: Sequence[object], level: int) -> list[str]:
        """Each value's JSON text, its inner lines (when indented) at ``level`` + 1 indents."""
        types = set(map(type, values))
        if len(types) == 1:
            return self._column(types.pop(), values, level)
        return _by_type(values, lambda kind, column: self._column(kind, column, level))

    def _column(self, kind: type, values: Sequence[object], level: int) -> list[str]:
        """The texts of values all of ``kind``."""
        if kind is str:
            return list(map(encode_basestring_ascii, cast("Sequence[str]", values)))
        if kind is int:
            return list(map(int.__repr__, cast("Sequence[int]", values)))
        if kind is NoneType:
            return ["null"] * len(values)
        if kind is float and all(map(math.isfinite, cast("Sequence[float]", values))):
            return list(map(float.__repr__, cast("Sequence[float]", values)))
        if kind is dict:
            return _by_shape(cast("Records", values),
                             lambda alike, keys: self._alike(alike, keys, level),
                             lambda mixed: self._objects(mixed, level))
        if kind is list or kind is tuple:
            return self._arrays(cast("Sequence[list[object]]", values), level)
        return [self._dumps(value, level) for value in values]  # what json itself must judge

    def _frame(self, level: int) -> tuple[str, str, str]:
        """What goes after the opening bracket, between items, and before the closing one."""
        if not self.indent:
            return "", ", ", ""
        inner = "\n" + "  " * (level + 1)
        return inner, "," + inner, "\n" + "  " * level

    def _objects(self, values: Records, level: int) -> list[str]:
        """Dicts: all their entries as one column, cut back into objects. Where a key is not a
        string, json writes the dict."""
        keys: list[object] = list(chain.from_iterable(values))
        if keys and set(map(type, keys)) != {str}:
            return [self._dumps(value, level) for value in values]
        if not self.sort_keys:
            items = list(chain.from_iterable(map(dict.values, values)))
        elif len(values) == 1:
            keys = sorted(cast("list[str]", keys))  # type: ignore[assignment]
            items = list(map(values[0].__getitem__, keys))
        else:
            ordered = [sorted(cast("dict[str, object]", value)) for value in values]
            keys = list(chain.from_iterable(ordered))
            items = [value[key] for value, names in zip(values, ordered, strict=True)
                     for key in names]
        heads = map(str.__add__, map(encode_basestring_ascii, keys), repeat(": "))  # type: ignore[arg-type]
        entries = list(map(str.__add__, heads, self.texts(items, level + 1)))
        return self._cut(values, entries, level, "{}")

    def _cut(self, values: Sequence[Sized], texts: Sequence[str], level: int,
             brackets: str) -> list[str]:
        """``texts``, one column for all ``values``, cut back into each value's bracketed text
        (``brackets`` '{}' or '[]'; an empty value is its brackets alone)."""
        first, between, last = self._frame(level)
        opening, closing = brackets[0] + first, last + brackets[1]
        made, start = [], 0
        for size in map(len, values):
            made.append(opening + between.join(texts[start:start + size]) + closing
                        if size else brackets)
            start += size
        return made

    def _dumps(self, value: object, level: int) -> str:
        """json's own text of a value, its lines indented to ``level``."""
        if not self.indent:
            return json.dumps(value, sort_keys=self.sort_keys)
        text = json.dumps(value, indent=2, sort_keys=self.sort_keys)
        return text.replace("\n", "\n" + "  " * level) if level else text

    def _arrays(self, values: Sequence[Sequence[object]], level: int) -> list[str]:
        """Lists (or tuples): all their items as one column, cut back into lists."""
        first, between, last = self._frame(level)
        items = self.texts(list(chain.from_iterable(values)), level + 1)
        sizes = set(map(len, values))
        if len(sizes) == 1 and 0 not in sizes:  # lists of one length (file_sd's targets)
            size = sizes.pop()
            rows = zip(*[iter(items)] * size, strict=True)  # the items a list at a time
            joined = items if size == 1 else list(map(between.join, rows))
            return list(map(("[" + first).__add__, map(str.__add__, joined, repeat(last + "]"))))
        return self._cut(values, items, level, "[]")

    def _alike(self, values: Records, keys: tuple[object, ...], level: int) -> list[str]:
        """Dicts of the same keys, in the same order: each key's text once, its values as one
        column."""
        if not keys:
            return ["{}"] * len(values)
        if len(values) < len(keys) or set(map(type, keys)) != {str}:
            return self._objects(values, level)
        names = cast("tuple[str, ...]", keys)
        columns = list(zip(*map(dict.values, values), strict=True))
        order = sorted(range(len(names)), key=lambda at: names[at]) if self.sort_keys else \
            range(len(names))
        first, between, last = self._frame(level)
        parts: list[object] = []
        for n, at in enumerate(order):
            head = "{" + first if n == 0 else between
            parts += (repeat(head + encode_basestring_ascii(names[at]) + ": "),
                      self.texts(columns[at], level + 1))
        parts.append(repeat(last + "}"))
        return list(map("".join, zip(*parts, strict=False)))  # type: ignore[call-overload]  # repeat() is endless
