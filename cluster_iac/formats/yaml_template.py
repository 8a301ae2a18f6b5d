"""YAML text of many values of one shape, laid out once: the YAML counterpart of
formats/json_template.py. A ``YamlTemplate`` is a value (dicts, lists, scalars) with a ``Slot``
in place of each string that differs from one use to the next; ``template.fill(strings)`` is
one use of it, a value yaml_text (formats/yaml.py) writes as the template's text, laid out by
yaml_text itself once per indent, with each string written in its slot by yaml_strings, the
writer's own scalar column. A string's scalar does not depend on where it stands in a block
(a mapping's value and a list item take the same text), and nothing else of the layout depends
on the strings, so the text is byte for byte what yaml_text writes of the filled value
(``Filled.plain``): tests/test_yaml_template.py holds the two together, hostile strings
included, and the inventory's test (tests/test_rails_playbook.py) the inventory both ways.

It is the writer's way for a column of many like records whose constants are most of their
text: the inventory's ``roce_rails`` (100,000 netplan entries at 100,000 GPUs, twelve lines
each, three strings of them the host's own: emit/ansible.py) is one template per node type
and a fill per host, not 1,200,000 lines walked column by column.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any, NamedTuple

from cluster_iac.formats.yaml import yaml_strings, yaml_text

_KEY = "k"  # the one key of the document a template is laid out in


class Slot(NamedTuple):
    """Where one of ``fill``'s strings goes: its place in the strings ``fill`` is given."""

    number: int


class YamlTemplate:
    """A value with Slots, laid out once per indent it is written at."""

    __slots__ = ("value", "slots", "_laid")

    def __init__(self, value: object) -> None:
        numbers: list[int] = []
        _slots(value, numbers)
        if sorted(numbers) != list(range(len(numbers))):
            raise ValueError(f"a template's slots are 0 to n - 1, each once: {sorted(numbers)}")
        self.value, self.slots = value, len(numbers)
        self._laid: dict[int, tuple[str, tuple[int, ...]]] = {}

    def fill(self, strings: Sequence[str]) -> Filled:
        """One use of the template: ``strings[n]`` in Slot n."""
        if len(strings) != self.slots:
            raise ValueError(f"{len(strings)} strings for a template of {self.slots} slots")
        return Filled(self, strings)

    def laid(self, indent: int) -> tuple[str, tuple[int, ...]]:
        """The value's tail (formats/yaml.py: its text after ``key:``) with its block at
        ``indent``, a ``%s`` for each slot ('%' of the rest doubled), and the slot of each
        ``%s`` in the order they come."""
        found = self._laid.get(indent)
        if found is None:
            found = self._laid[indent] = self._lay_out(indent)
        return found

    def _lay_out(self, indent: int) -> tuple[str, tuple[int, ...]]:
        if indent < 2:
            raise ValueError("a template is a mapping's value or a list's item, two columns in")
        tokens = [f"yamlslot{number}z" for number in range(self.slots)]  # plain scalars
        document = yaml_text({_KEY: _filled(self.value, tokens)})
        # yaml_text lays a key's block out two spaces in; every line break of a tail is
        # followed by its line's indent, so the block moves by adding to each
        tail = document[len(_KEY) + 1:-1].replace("\n", "\n" + " " * (indent - 2))
        text = tail.replace("%", "%%")
        places = []
        for number, token in enumerate(tokens):
            if text.count(token) != 1:
                raise ValueError(f"slot {number}'s mark {token!r} is in a constant")
            places.append((text.index(token), number))
        for token in tokens:
            text = text.replace(token, "%s")
        return text, tuple(number for _place, number in sorted(places))


class Filled:
    """A template and its strings: yaml_text writes it as the filled value (plain)."""

    __slots__ = ("template", "strings")

    def __init__(self, template: YamlTemplate, strings: Sequence[str]) -> None:
        self.template, self.strings = template, strings

    def plain(self) -> object:
        """The value it stands for: the template's, each slot's string in its place."""
        return _filled(self.template.value, self.strings)

    @staticmethod
    def yaml_tails(values: Sequence[Filled], indent: int) -> list[str]:
        """The tails of a column of them (formats/yaml.py calls it for their type): the
        fills of each template together, each slot's strings one yaml_strings column (alike
        strings: names, or addresses), each value's text one '%' of its template's."""
        templates = list(map(attrgetter("template"), values))
        if templates.count(templates[0]) == len(templates):
            return _tails(templates[0], values, indent)
        places: dict[YamlTemplate, list[int]] = {}
        for place, template in enumerate(templates):
            places.setdefault(template, []).append(place)
        texts = [""] * len(values)
        for template, where in places.items():
            for place, text in zip(where, _tails(template, [values[n] for n in where], indent),
                                   strict=True):
                texts[place] = text
        return texts


def _tails(template: YamlTemplate, values: Sequence[Filled], indent: int) -> list[str]:
    """The tails of fills of one template."""
    text, order = template.laid(indent)
    if not order:
        return [text] * len(values)
    columns = list(zip(*map(attrgetter("strings"), values), strict=True))
    scalars = [yaml_strings(list(columns[number])) for number in order]
    return list(map(text.__mod__, zip(*scalars, strict=True)))


def _slots(value: object, numbers: list[int]) -> None:
    if isinstance(value, Slot):  # before tuple: a Slot is one
        numbers.append(value.number)
    elif isinstance(value, dict):
        for item in value.values():
            _slots(item, numbers)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _slots(item, numbers)


def _filled(value: Any, strings: Sequence[str]) -> Any:
    """The value with ``strings[n]`` in Slot n (a str must be one: yaml_strings writes it)."""
    if isinstance(value, Slot):
        string = strings[value.number]
        if type(string) is not str:
            raise TypeError(f"slot {value.number}: a string, not {type(string).__name__}")
        return string
    if isinstance(value, dict):
        return {key: _filled(item, strings) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, strings) for item in value]
    if isinstance(value, tuple):
        return tuple(_filled(item, strings) for item in value)
    return value
