"""JSON text of many values of one shape, laid out once: ``json_template`` lays a value out as
``json.dumps(value, sort_keys=True)`` does (``', '`` and ``': '`` between items, keys sorted,
ASCII), with a ``Slot`` in place of each string that differs from one value to the next, and
``fill`` writes one value's text by putting its strings in the slots, each escaped by json's
own C encoder. What changes between values is only slot strings, each escaped on its own, so
the text is byte for byte what ``json.dumps`` writes of the value (tests/test_json_template.py
holds the two together, hostile strings included): for a seed table's 12,500 rows of the same
shape (emit/cloud_init.py), the keys are sorted and the constants written once, not per row.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii  # json's C one, which json.dumps uses
from typing import NamedTuple


class Slot(NamedTuple):
    """Where one of ``fill``'s strings goes: its place in the values ``fill`` is given."""

    number: int


class JsonTemplate(NamedTuple):
    """A value's JSON text with a ``%s`` a slot ('%' of the rest doubled), and the slot of
    each ``%s`` in the order they come."""

    text: str
    order: tuple[int, ...]


def json_template(value: object) -> JsonTemplate:
    """``value`` laid out as ``json.dumps(value, sort_keys=True)`` would, a ``Slot`` a string
    to be filled. Dicts (string keys), lists and tuples are laid out here, any other value by
    ``json.dumps``."""
    parts: list[str] = []
    order: list[int] = []
    _lay_out(value, parts, order)
    return JsonTemplate("".join(parts), tuple(order))


def fill(template: JsonTemplate, values: list[str]) -> str:
    """The template's text with ``values[slot.number]`` in each slot, as ``json.dumps``
    escapes a string (a value that is not a string is a TypeError, as json's encoder raises)."""
    return template.text % tuple(map(encode_basestring_ascii,
                                     map(values.__getitem__, template.order)))


def _lay_out(value: object, parts: list[str], order: list[int]) -> None:
    if isinstance(value, Slot):  # before tuple: a Slot is one
        parts.append("%s")
        order.append(value.number)
    elif isinstance(value, dict):
        if any(not isinstance(key, str) for key in value):
            raise TypeError("json_template: dict keys must be strings")
        _lay_out_items([(json.dumps(k) + ": ", v) for k, v in sorted(value.items())],
                       "{", "}", parts, order)
    elif isinstance(value, (list, tuple)):
        _lay_out_items([("", v) for v in value], "[", "]", parts, order)
    else:
        parts.append(json.dumps(value).replace("%", "%%"))


def _lay_out_items(items: list[tuple[str, object]], opening: str, closing: str,
                   parts: list[str], order: list[int]) -> None:
    """A dict's or list's items between its brackets, each after its key's text ('' for a
    list's), ', ' between them."""
    parts.append(opening)
    for n, (head, item) in enumerate(items):
        parts.append((", " if n else "") + head.replace("%", "%%"))
        _lay_out(item, parts, order)
    parts.append(closing)
