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

``yaml_pieces`` is the writer's way for a large document: yaml_text's text of it in pieces, a
slice of each large mapping or list at a time (the inventory's 35,000 hosts, a fabric's
thousands of AVD nodes at 100,000 GPUs), so the columns of the whole document and its whole
text are never held at once: the render writes the pieces as they come (formats/chunks.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from operator import attrgetter
from typing import Any

from cluster_iac.formats.json_template import Slot  # one mark for both writers' templates
from cluster_iac.formats.yaml import yaml_comment, yaml_strings, yaml_text

_KEY = "k"  # the one key of the document a template is laid out in


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


# --- a document in pieces -------------------------------------------------------------------

def yaml_pieces(data: Mapping[str, object], header: Sequence[str] = (), size: int = 1024
                ) -> Iterator[str]:
    """yaml_text(data, header)'s text in pieces (joined, the same bytes): a mapping or list of
    more than ``size`` entries is written ``size`` entries at a time, a smaller mapping entry
    by entry where one of its values is such, the rest whole. Each piece is yaml_text's own
    text of its entries at their depth (in ``k:`` mappings, one a level, cut off after): a
    block's text depends on its indent and its values only, never on its neighbours
    (tests/test_yaml_template.py holds the two together)."""
    yield "".join(yaml_comment(line) + "\n" for line in header)
    if not data:
        yield yaml_text(data)
        return
    yield from _entry_pieces(data, 0, size)


def _entry_pieces(entries: Mapping[str, object], depth: int, size: int) -> Iterator[str]:
    """The text of a nonempty mapping's entries at ``depth``: the small ones together."""
    small: dict[str, object] = {}
    for key, value in entries.items():
        if not _large(value, size):
            small[key] = value
            continue
        if small:
            yield _at(small, depth)
            small = {}
        yield _at({key: None}, depth)  # 'key:' alone: the head of its block
        if isinstance(value, Mapping) and len(value) <= size:
            yield from _entry_pieces(value, depth + 1, size)
            continue
        mapping = isinstance(value, Mapping)
        items: Iterator[Any] = iter(value.items() if isinstance(value, Mapping)
                                    else value)  # type: ignore[call-overload]
        while part := list(islice(items, size)):
            yield _at({key: dict(part) if mapping else part}, depth, 1)
    if small:
        yield _at(small, depth)


def _large(value: object, size: int) -> bool:
    """Whether a value is written in pieces: a list or mapping of more than ``size`` entries,
    or a mapping (of string keys) that holds one."""
    if isinstance(value, (list, tuple, Mapping)) and len(value) > size:
        return True
    return (isinstance(value, Mapping) and bool(value)
            and all(type(key) is str for key in value)
            and any(_large(item, size) for item in value.values()))


def _at(entries: dict[str, object], depth: int, below: int = 0) -> str:
    """yaml_text's lines of ``entries`` at ``depth`` (under ``depth`` ``k:`` lines), the
    first ``below`` of them (an entry's ``key:``) left off."""
    document: object = entries
    for _level in range(depth):
        document = {_KEY: document}
    return yaml_text(document).split("\n", depth + below)[depth + below]
