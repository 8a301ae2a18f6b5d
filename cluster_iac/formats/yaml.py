"""The YAML writer: yaml_text writes a document of plain data, yaml_scalar one scalar,
yaml_strings a column of strings; every value is read back as itself by YAML 1.1 and 1.2 readers.

yaml_text walks the data a column at a time (formats/shapes.py): the values under one key of
many like mappings (every host's ``rack``, every node's ``addresses``) are formatted together,
each distinct string once, and each record's text is joined from its columns. The text is
exactly what the one-value-at-a-time definition gives (the block layout in yaml_text's
docstring; tests/test_yaml_json.py holds it to that recursive writer), made with far fewer
Python steps: a 100,000-GPU inventory has 800,000 scalars but a few dozen columns. A value
whose type has ``yaml_tails`` (formats/yaml_template.py's fills of a template laid out once)
writes a column of its kind itself, the same bytes as the plain value it stands for.

ruamel_yaml_text is the other layout, ruamel.yaml's own, which two outputs keep (topology.yaml
and `cluster-iac plan`'s YAML).
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from typing import Any

from cluster_iac.formats.shapes import NoneType, by_shape, by_type

# --- YAML scalars -------------------------------------------------------------------------------

# A string is written plain only when no YAML 1.1 or 1.2 reader could take it for anything else
# (PyYAML, Ansible and Go's yaml.v2 read 1.1, where yes/on/y are booleans and 12:30 a number).
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
_YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "nan", "inf"}
# Outside single quotes YAML needs an escape: line breaks, and what is not c-printable. The
# class lists what is outside x20-x7E, xA0-xD7FF, xE000-xFFFD and x10000-x10FFFF (tab and x85
# escaped too), plus x2028 and x2029: the negated class of those ranges is the same set (the
# test checks every code point) but slow for re to compile in each process.
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029]")
# The same two tests over many strings joined by '\n' (which _NEEDS_ESCAPE_IN_LINE lets pass).
_NEEDS_ESCAPE_IN_LINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                                   "\u2028\u2029]")
# Over '\n' + the strings joined by '\n' + '\n': the plain ones, whether all are, and whether
# one is a YAML 1.1 word (on the text in lower case). A leading '\n' is fast to search for;
# _PLAIN_LINES takes a line's longest plain start at once (a lookahead's group, which re
# never backtracks into: Python 3.10's re has no possessive '*+'), so a line that is not
# plain ('gpu-01:bmc0 ...') fails once, not once per character of that start.
_PLAIN_LINES = re.compile(r"\n(?=([A-Za-z_/][A-Za-z0-9_./-]*))\1(?=\n)")
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
    if type(data) is dict and data:
        # the document's entries joined once with its header: a large document (a fabric's
        # 46 MiB of nodes) is copied once here, not once per step of cutting and joining
        writer = _Yaml()
        pieces = list(chain.from_iterable(zip(
            writer._heads(list(data), 0, True), writer.tails(list(data.values()), 2),
            strict=True)))
        pieces[0] = pieces[0][1:]  # the first line's leading line break
        return "".join(["\n".join([*lines, ""]) if lines else "", *pieces, "\n"])
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
        return by_type(values, lambda kind, column: self._column(kind, column, indent))

    def _column(self, kind: type, values: Sequence[object], indent: int) -> list[str]:
        """The tails of values all of ``kind`` (str also: strings and None)."""
        if kind is str or kind is NoneType:
            return self._strings(values)
        if kind is int:  # each distinct number once (rack units, GPU counts)
            texts = {value: " " + int.__repr__(value) for value in set(values)}  # type: ignore[arg-type]
            return list(map(texts.__getitem__, values))
        if kind is dict:
            return self._mappings(values, indent)  # type: ignore[arg-type]
        if kind is bool:
            return [" true" if value else " false" for value in values]
        if kind is list or kind is tuple:
            return self._sequences(values, indent)  # type: ignore[arg-type]
        laid = getattr(kind, "yaml_tails", None)
        if laid is not None:  # values that lay themselves out (formats/yaml_template.py)
            return laid(values, indent)  # type: ignore[no-any-return]
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
        if hasattr(type(value), "yaml_tails"):
            return self._column(type(value), [value], indent)[0]
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
        # head, tail, head, tail...: each mapping's text one join of its pieces, no tail (a
        # whole switch's block) copied into a head + tail first
        pieces = list(chain.from_iterable(zip(self._heads(keys, indent, len(values) == 1),
                                              tails, strict=True)))
        for size in sizes:
            texts.append("".join(pieces[2 * start:2 * (start + size)]) if size else " {}")
            start += size
        return texts

    def _mappings(self, values: Sequence[dict[object, object]], indent: int,
                  dashed: bool = False) -> list[str]:
        """Dicts' tails, a shape at a time. ``dashed``: none is empty, each is a list item
        (its first line begins with '- ' two columns further out, as _sequences writes it)."""
        return by_shape(values,
                        lambda alike, keys: self._alike(alike, keys, indent, dashed),
                        lambda mixed: self._entries_dashed(mixed, indent) if dashed
                        else self._entries(mixed, indent))

    def _entries_dashed(self, values: Sequence[Mapping[object, object]],
                        indent: int) -> list[str]:
        """_entries' tails, each one's first line begun with the list item's dash."""
        dash, cut = "\n" + " " * (indent - 2) + "- ", indent + 1
        return [dash + text[cut:] for text in self._entries(values, indent)]

    def _alike(self, values: Sequence[dict[object, object]], keys: tuple[object, ...],
               indent: int, dashed: bool = False) -> list[str]:
        """Dicts of the same keys, in the same order: each key's head once, its values as
        one column; a column whose tails are all one (every port's MTU) is joined to its
        head and its neighbours', once for all the dicts."""
        if not keys:
            return [" {}"] * len(values)
        if len(values) < len(keys) or set(map(type, keys)) != {str}:
            # few records of many keys: their entries as one column (and keys such as 1 and
            # True are equal in a tuple, so only str keys may stand for each other's)
            if dashed:
                return self._entries_dashed(values, indent)
            return self._entries(values, indent)
        heads = self._heads(keys, indent)
        if dashed:  # '\n' + indent + key becomes '\n' + (indent - 2) + '- ' + key
            heads[0] = "\n" + " " * (indent - 2) + "- " + heads[0][indent + 1:]
        parts: list[object] = []
        same = ""  # the text all the dicts have at this point, not yet in parts
        columns = zip(*map(dict.values, values), strict=True)
        for head, column in zip(heads, columns, strict=True):
            tails = self.tails(column, indent + 2)
            if tails.count(tails[0]) == len(tails):
                same += head + tails[0]
            else:
                parts += (repeat(same + head), tails)
                same = ""
        if not parts:
            return [same] * len(values)
        if same:
            parts.append(repeat(same))
        return list(map("".join, zip(*parts, strict=False)))  # type: ignore[call-overload]  # repeat() is endless

    def _sequence(self, items: Sequence[object], indent: int) -> str:
        return self._sequences([items], indent)[0]

    def _sequences(self, values: Sequence[Sequence[object]], indent: int) -> list[str]:
        """Lists' tails: their items as one column (every node's ports at once, not a column
        per node), cut back into lists."""
        flat = list(chain.from_iterable(values))
        types = set(map(type, flat))
        dash, cut = "\n" + " " * indent + "- ", indent + 3
        if types == {dict} and all(flat):  # records: dashed where made
            items = self._mappings(flat, indent + 2, dashed=True)  # type: ignore[arg-type]
        elif types == {str} and len(distinct := set(flat)) * 4 <= len(flat):
            # names that repeat (every leaf's uplink ports): each distinct one's item once
            ordered = list(distinct)
            made = dict(zip(ordered, [dash + tail[1:] for tail in self._strings(ordered)],
                            strict=True))
            items = list(map(made.__getitem__, flat))
        else:
            # a scalar's tail ' x' gives '- x'; None '- null'; a block's first line goes
            # after '- '
            items = [dash + (tail[1:] if tail[:1] == " " else tail[cut:] if tail else "null")
                     for tail in self.tails(flat, indent + 2)]
        texts: list[str] = []
        start = 0
        for size in map(len, values):
            texts.append("".join(items[start:start + size]) if size else " []")
            start += size
        return texts


# --- ruamel.yaml's layout -----------------------------------------------------------------------

def ruamel_yaml_text(data: Any) -> str:
    """``data`` as ruamel.yaml's safe dumper writes it in block style, mappings in their own
    order: list items flush with their key, its own quoting. The layout of topology.yaml and of
    `cluster-iac plan`'s YAML, kept byte for byte; every other YAML file is yaml_text's."""
    from ruamel.yaml import YAML  # loaded by these two outputs only

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # keep our order
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()
