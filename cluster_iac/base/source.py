"""Spec paths and the source map (spec path -> file:line:col), built once at load."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ruamel.yaml.comments import CommentedMap, CommentedSeq

SpecPath = tuple[str | int, ...]
"""Where a value is in the spec: keys and list indices from the root."""


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as YAML counts them: only CR, LF and CRLF end a line (str's
    splitlines also breaks at form feeds, U+0085 and U+2028, which would shift every line
    quoted after one)."""
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def dotted(path: SpecPath) -> str:
    """('node_groups', 0, 'count') -> 'node_groups[0].count'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


@dataclass(frozen=True)
class Location:
    """A 1-based position in a source file."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class SourceMap:
    """Positions of every value (and every mapping key) of a loaded YAML document."""

    def __init__(self, file: str, lines: list[str]):
        self.file = file
        self.lines = lines
        self._values: dict[SpecPath, tuple[int, int]] = {}
        self._keys: dict[SpecPath, tuple[int, int]] = {}

    @classmethod
    def build(cls, file: str, text: str, root: object) -> SourceMap:
        smap = cls(file, split_lines(text))
        smap._values[()] = (0, 0)
        for path, key_pos, value_pos in _walk(root, ()):
            if key_pos is not None:
                smap._keys[path] = key_pos
            smap._values[path] = value_pos
        return smap

    @classmethod
    def kept(cls, file: str, text: str, values: dict[SpecPath, tuple[int, int]],
             keys: dict[SpecPath, tuple[int, int]]) -> SourceMap:
        """A map of ``text`` holding only the positions that ``positions`` gave (those its
        findings ask for: write/outcome.py keeps them with a render's inputs)."""
        smap = cls(file, split_lines(text))
        smap._values.update(values)
        smap._keys.update(keys)
        return smap

    def positions(self, paths: Iterable[SpecPath]) -> tuple[dict[SpecPath, tuple[int, int]],
                                                            dict[SpecPath, tuple[int, int]]]:
        """The value and key positions of every prefix of each of ``paths`` that the map
        has: all that ``locate`` and ``has`` are asked for those paths."""
        values: dict[SpecPath, tuple[int, int]] = {}
        keys: dict[SpecPath, tuple[int, int]] = {}
        for path in paths:
            for end in range(len(path) + 1):
                prefix = tuple(path[:end])
                if prefix in self._values:
                    values[prefix] = self._values[prefix]
                if prefix in self._keys:
                    keys[prefix] = self._keys[prefix]
        return values, keys

    def locate(self, path: SpecPath, *, key: bool = False) -> Location:
        """Where ``path`` is; falls back to the nearest parent that exists.

        A parent is cited at its key ('policy:'), not at its value: the value of a block
        mapping starts at its first child, an unrelated line for a default the file leaves out.
        """
        probe = tuple(path)
        if probe in self._values:
            table = self._keys if key and probe in self._keys else self._values
            return self._loc(table[probe])
        while probe:
            probe = probe[:-1]
            if probe in self._keys:
                return self._loc(self._keys[probe])
            if probe in self._values:
                return self._loc(self._values[probe])
        return self._loc(self._values.get((), (0, 0)))

    def has(self, path: SpecPath) -> bool:
        return tuple(path) in self._values

    def source_line(self, line: int) -> str | None:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return None

    def _loc(self, pos: tuple[int, int]) -> Location:
        return Location(self.file, pos[0] + 1, pos[1] + 1)


def _walk(
    node: object, path: SpecPath
) -> Iterator[tuple[SpecPath, tuple[int, int] | None, tuple[int, int]]]:
    if isinstance(node, CommentedMap):
        for key in node:
            child = (*path, str(key))
            holder = _holder(node, key)
            positions = _map_positions(holder, key) if holder is not None else None
            if positions is not None:
                key_line, key_col, value_line, value_col = positions
                yield child, (key_line, key_col), (value_line, value_col)
            yield from _walk(node[key], child)
    elif isinstance(node, CommentedSeq):
        for index, item in enumerate(node):
            child = (*path, index)
            position = node.lc.item(index) if node.lc.data else None
            # ruamel records no position for the items of a tagged sequence ('!!python/...');
            # such an item is then cited at its parent
            if position is not None:
                yield child, None, (position[0], position[1])
            yield from _walk(item, child)


def _holder(node: CommentedMap, key: object) -> CommentedMap | None:
    """The mapping whose text holds ``key``: ``node`` itself, or the anchored mapping a
    ``<<: *defaults`` merge key took it from (the error then points at the definition)."""
    if key in (node.lc.data or ()):  # a '!!omap' mapping has no positions (data None)
        return node
    for item in getattr(node, "merge", None) or ():
        # ruamel.yaml 0.18 lists (position, mapping) pairs; 0.19 lists the mappings.
        source = item[1] if isinstance(item, tuple) else item
        if isinstance(source, CommentedMap) and key in source:
            found = _holder(source, key)
            if found is not None:
                return found
    return None


def _map_positions(node: CommentedMap, key: object) -> tuple[int, int, int, int] | None:
    key_position = node.lc.key(key)
    if key_position is None:
        return None
    key_line, key_col = key_position
    value_pos = node.lc.value(key)
    if value_pos is None or value_pos[0] is None:
        return key_line, key_col, key_line, key_col
    return key_line, key_col, value_pos[0], value_pos[1]
