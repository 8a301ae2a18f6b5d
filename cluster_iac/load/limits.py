"""Limits of loading: file size, line length, characters, nesting, alias expansion and the
length of a number."""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import ScalarNode

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.source import split_lines
from cluster_iac.base.text import describe

MAX_SPEC_BYTES = 1 << 20
"""A spec file is at most 1 MiB: ruamel reads about a megabyte a second, and a 200,000-GPU
cluster takes a few hundred lines (racks as hostlists, nodes as counts)."""
MAX_LINE_CHARS = 16_384
"""A line is at most 16,384 characters: one long line (a 2 MB comment) is refused before
ruamel walks it character by character."""
MAX_DEPTH = 64
"""Nesting of mappings and lists: the spec's own is at most 9 deep, Python's stack far more."""
MAX_VALUES = 250_000
"""Values (keys, scalars, mappings, lists) in the document with every alias expanded: as many
as a full-size file holds, so an alias bomb ("billion laughs") stops at the alias that
crosses it."""
MAX_NUMBER_CHARS = 100
"""A number is written in at most 100 characters: the spec's largest is 20 digits (2^64), and
Python refuses to read an integer of more than 4,300 digits (a traceback in ruamel)."""
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")

# What YAML 1.2 refuses anywhere in a stream (section 5.1, c-printable): ruamel's reader raises
# an unlocated ReaderError for these, so they are found first and cited at their line.
# Written as the few ranges YAML refuses rather than the complement of those it allows: the
# complement of wide ranges costs `re` 5 ms to compile at every start.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff"
                          "\ufffe\uffff]")


class LoadLimit(Exception):
    """A limit hit while composing; carries its located diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.message)


def text_problem(text: str) -> Diagnostic | None:
    """The first line that is too long, or the first character YAML refuses."""
    lines = split_lines(text)
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            return Diagnostic("YAML-LINE-LENGTH", f"line {number} is {len(line):,} characters "
                              f"long; a spec line is at most {MAX_LINE_CHARS:,}",
                              line=number, column=MAX_LINE_CHARS + 1,
                              hint="break it up: YAML lists and mappings can span lines")
    for number, line in enumerate(lines, start=1):
        match = _UNPRINTABLE.search(line)
        if match is not None:
            return Diagnostic("YAML-CHARACTER", f"the spec holds the control character "
                              f"{describe(match.group())}, which YAML does not allow",
                              line=number, column=match.start() + 1,
                              hint="remove it: a spec is printable text, tabs and line "
                                   "breaks")
    return None


class BoundedComposer(Composer):
    """ruamel's composer, counting nesting and the values aliases expand to as it goes.

    An alias is composed as a reference to its anchor's node, so a billion-laughs document is
    cheap to compose and explodes only when walked; counting each alias as the size of the
    node it names finds the bomb at the alias that crosses the limit, before any walk.
    """

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._level = 0
        self._values = 0
        self._sizes: dict[int, int] = {}  # id(node) -> values it expands to (nodes stay alive)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)
            self._count(self._sizes.get(id(node), 1), event, alias=True)
            return node
        self._level += 1
        if self._level > MAX_DEPTH:
            raise LoadLimit(_at(event, "YAML-DEPTH", f"the spec nests deeper than {MAX_DEPTH} "
                                f"levels", "the spec's own structure is at most 9 levels deep"))
        before = self._values
        try:
            node = super().compose_node(parent, index)
        finally:
            self._level -= 1
        self._count(1, event, alias=False)
        self._sizes[id(node)] = self._values - before
        return node

    def compose_scalar_node(self, anchor: Any) -> Any:
        node = super().compose_scalar_node(anchor)
        tag = getattr(node.tag, "value", node.tag)
        if len(node.value) > MAX_NUMBER_CHARS and tag in _NUMBER_TAGS:
            raise LoadLimit(_at(node, "YAML-NUMBER", f"a number written in {len(node.value):,} "
                                f"characters; a spec number takes at most {MAX_NUMBER_CHARS}",
                                "the limits (README, 'Limits') hold a 200,000-GPU cluster; "
                                "a longer number is a typo"))
        return node

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        for key, _ in node.value:
            if not isinstance(key, ScalarNode):
                # ruamel would make a hashable copy of a mapping or list key and fail on one
                # nested in it (a traceback), or pass its Python repr on as the key's name.
                kind = "a mapping" if key.id == "mapping" else "a list"
                raise LoadLimit(_at(key, "YAML-KEY-NOT-SCALAR",
                                    f"{kind} is used as a key; a spec key is a name",
                                    "a '?' line or a '{' or '[' before ':' makes a complex "
                                    "key: write the name, then ':' and the value"))
        return node

    def _count(self, values: int, event: Any, *, alias: bool) -> None:
        self._values += values
        if self._values <= MAX_VALUES:
            return
        if alias:
            raise LoadLimit(_at(event, "YAML-ALIAS-EXPANSION",
                                f"alias *{event.anchor} stands for {values:,} values; with it "
                                f"the spec expands to more than {MAX_VALUES:,}",
                                "an alias repeats its anchor's whole value: nest them "
                                "sparingly"))
        raise LoadLimit(_at(event, "YAML-FILE-SIZE", f"the spec holds more than {MAX_VALUES:,} "
                            "values", None))


def _at(event: Any, code: str, message: str, hint: str | None) -> Diagnostic:
    """A diagnostic at an event's (or a node's) start."""
    mark = event.start_mark
    return Diagnostic(code, message, line=mark.line + 1, column=mark.column + 1, hint=hint)


class CheckedConstructor(RoundTripConstructor):
    """ruamel's round-trip constructor, with what it cannot make of a node cited at the node.

    A tag forces a type on text that does not have it ('!!bool yes, 256', '!!int abc',
    '!!set 5'), and a date may be out of range ('2020-13-45' reads as a timestamp): ruamel then
    raises a bare KeyError, ValueError or AttributeError, with no position.
    """

    def construct_non_recursive_object(self, node: Any, tag: Any = None) -> Any:
        pending = len(self.state_generators)
        try:
            data = super().construct_non_recursive_object(node, tag)
        except MarkedYAMLError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise LoadLimit(_unreadable(node, exc)) from None
        if len(self.state_generators) > pending:  # the rest of a collection is made later
            self.state_generators[-1] = _located(self.state_generators[-1], node)
        return data


def _located(generator: Any, node: Any) -> Any:
    try:
        yield from generator
    except MarkedYAMLError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise LoadLimit(_unreadable(node, exc)) from None


def _unreadable(node: Any, exc: Exception) -> Diagnostic:
    tag = str(getattr(node.tag, "value", node.tag))
    short = "!!" + tag.rpartition(":")[2] if tag.startswith("tag:yaml.org,2002:") else tag
    what = (describe_value(node.value) if isinstance(node.value, str)
            else "a mapping" if node.id == "mapping" else "a list")
    # a date's own reason ('month must be in 1..12'); the others are Python's, not the file's
    reason = f" ({exc})" if short == "!!timestamp" and isinstance(exc, ValueError) else ""
    hint = ("a date needs a real month and day; quote text that only looks like a date"
            if short == "!!timestamp" else
            "write the value without the tag: the spec's fields take plain YAML values")
    return _at(node, "YAML-TAG-VALUE", f"{what} is not a {short} value{reason}", hint)


def describe_value(value: str) -> str:
    """A value as a message quotes it: repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."