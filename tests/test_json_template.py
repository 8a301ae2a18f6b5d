"""formats/json_template.py: a value's JSON laid out once with slots, then filled per value, is
byte for byte what ``json.dumps(value, sort_keys=True)`` writes, hostile strings included
(emit/cloud_init.py writes each host's seed line so; tests/test_cloud_init_seeds.py holds
those lines to json.dumps too)."""

from __future__ import annotations

import json

import pytest

from cluster_iac.formats.json_template import Slot, fill, json_template

HOSTILE = ['"', "\\", "\n", "a\r\nb", "%", "%s", "%(x)s", "%%", "\x00", "\u2028", "é",
           "\U0001f600", "</script>", "", " ", "\t{\"k\": 1}"]


def _shape(slots: bool, strings: list[str]) -> dict[str, object]:
    """A value with every kind json.dumps writes, its strings (or slots for them) nested in
    dicts, lists and tuples; constants with '%' and odd characters beside them."""
    value = iter(Slot(n) for n in range(len(strings))) if slots else iter(strings)
    return {"z": next(value), "a%s": [next(value), {"%": next(value), "k\n": (next(value),)}],
            "é": {"b": 1, "a": -2.5, "c": True, "d": None, "e": [], "f": {}, "g": ()},
            "m": ["%d", 7, [next(value), "const\u2028%"]],
            "": {"x": next(value), "y": [{"p": next(value)}, {"q": next(value)}]}}


@pytest.mark.parametrize("start", range(0, len(HOSTILE), 3))
def test_a_filled_template_is_what_json_dumps_writes(start: int) -> None:
    strings = (HOSTILE * 2)[start:start + 8]
    template = json_template(_shape(True, strings))
    assert fill(template, strings) == json.dumps(_shape(False, strings), sort_keys=True)


def test_slots_are_filled_in_the_order_json_dumps_writes_their_keys() -> None:
    template = json_template({"b": Slot(0), "a": Slot(1), "c": [Slot(2), Slot(0)]})
    assert template.order == (1, 0, 2, 0)
    assert fill(template, ["B", "A", "C"]) == '{"a": "A", "b": "B", "c": ["C", "B"]}'


def test_only_strings_fill_a_slot() -> None:
    template = json_template({"a": Slot(0)})
    with pytest.raises(TypeError):
        fill(template, [7])  # type: ignore[list-item]


def test_a_key_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="keys must be strings"):
        json_template({1: Slot(0)})
