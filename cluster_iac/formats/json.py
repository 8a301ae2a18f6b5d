"""The JSON writer: json_text, a document exactly as ``json.dumps(data, indent=2)`` writes it
(json_texts, many of them), and json_lines, one record per line; all made a column at a time
(formats/shapes.py), as the YAML writer is, for json's indented encoder is pure Python, value
by value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence, Sized
from itertools import chain, repeat
from json.encoder import encode_basestring_ascii  # json's C one
from typing import cast

from cluster_iac.formats.shapes import NoneType, Records, by_shape, by_type


def json_text(data: object, *, sort_keys: bool = False) -> str:
    """``json.dumps(data, indent=2, sort_keys=sort_keys)`` and a final line break, byte for byte
    (ASCII, NaN as json writes it), made a column at a time (json's indented encoder is pure
    Python, value by value). What is not plain data (a dict subclass, a key that is not a
    string) is handed to json itself."""
    return _Json(sort_keys, indent=True).texts([data], 0)[0] + "\n"


def json_texts(values: Sequence[object], *, sort_keys: bool = False) -> list[str]:
    """json_text of each value, made together a column at a time: many small documents of
    one shape (a unit's bars.json each) cost about what one document of them all does."""
    return [text + "\n" for text in _Json(sort_keys, indent=True).texts(values, 0)]


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
        return by_type(values, lambda kind, column: self._column(kind, column, level))

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
            return by_shape(cast("Records", values),
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
        for size in map(len, values):  # one join of the three: the long middle copied once
            made.append("".join((opening, between.join(texts[start:start + size]), closing))
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
        column; a column whose texts are all one is joined to its key and its neighbours',
        once for all the dicts."""
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
        same = ""  # the text all the objects have at this point, not yet in parts
        for n, at in enumerate(order):
            head = ("{" + first if n == 0 else between) + encode_basestring_ascii(names[at]) + ": "
            texts = self.texts(columns[at], level + 1)
            if texts.count(texts[0]) == len(texts):  # one text for all (every target's port)
                same += head + texts[0]
            else:
                parts += (repeat(same + head), texts)
                same = ""
        if not parts:
            return [same + last + "}"] * len(values)
        parts.append(repeat(same + last + "}"))
        return list(map("".join, zip(*parts, strict=False)))  # type: ignore[call-overload]  # repeat() is endless
