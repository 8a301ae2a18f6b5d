"""The identities kept from before this run: the lock file's entries (cluster_iac/lock reads
and writes the file), which every allocating compile pass asks first, so an address, a rack
unit, a port or an outlet stays where it was."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.source import split_lines

Key = tuple[str, ...]  # (kind, network or target kind, device): what one line is about


class Entry(NamedTuple):
    """One line of the lock: what it is about, the identity, where it is (a named tuple:
    a 100,000-GPU lock has 260,000)."""

    key: Key
    value: tuple[Any, ...]
    line: int  # 1-based
    retired: bool = False


@dataclass(eq=False, repr=False)
class Lock:
    """A parsed lock: its entries by key, and what ``--reallocate`` set free."""

    file: str = ""
    text: str = ""  # as read
    digest: str | None = None  # SHA-256 of ``text`` (as write/files.text_digest), if read
    # (kind, scope) -> the last word of the key (a device; a Lustre target's index) -> its
    # entry: what each allocating pass asks for, its own kind
    groups: dict[tuple[str, str], dict[str, Entry]] = field(default_factory=dict)
    reallocated: frozenset[str] = frozenset()
    _numbers: dict[str, int] | None = None  # line text -> number, made for an error
    _lines: list[str] | None = None

    @property
    def exists(self) -> bool:
        return bool(self.text)

    @property
    def lines(self) -> list[str]:
        """The lock's lines, split on first ask: only an error's excerpt needs them."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    @property
    def entries(self) -> dict[Key, Entry]:
        """Every entry by its key, made when asked (the lock's new text when it changed, the
        search for a collision's lines)."""
        return {entry.key: entry for group in self.groups.values() for entry in group.values()}

    def get(self, kind: str, scope: str, device: str) -> Entry | None:
        """The entry of ``device`` (active or retired: a device that comes back gets its
        retired identity back), unless it was reallocated."""
        group = self.groups.get((kind, scope))
        entry = group.get(device) if group is not None else None
        if entry is None or device in self.reallocated:
            return None
        return entry

    def of_kind(self, kind: str, scope: str) -> Iterator[Entry]:
        """Every entry of one kind and scope (a network, 'place', a target kind), whether its
        device still exists or not: what a new device may not take."""
        freed = self.reallocated
        for entry in self.groups.get((kind, scope), {}).values():
            if not freed or device_of(entry.key, entry.value) not in freed:
                yield entry

    def of_kind_all(self, kind: str) -> Iterator[Entry]:
        """Every entry of one kind, of any scope (as of_kind)."""
        for scope in sorted(scope for each, scope in self.groups if each == kind):
            yield from self.of_kind(kind, scope)

    def targets(self, kind: str) -> dict[str, list[Entry]]:
        """Lustre server -> its entries of ``kind`` ('mdt', 'ost'), in index order."""
        found: dict[str, list[Entry]] = {}
        for entry in sorted(self.of_kind("lustre", kind), key=lambda e: int(e.key[2])):
            found.setdefault(entry.value[0], []).append(entry)
        return found

    def error(self, entry: Entry, code: str, message: str, hint: str | None = None,
              column: int = 1, cause: tuple[str | int, ...] = ()) -> Diagnostic:
        """A located error at ``entry``'s line of the lock; ``cause``, the spec key whose
        change made it (a group's racks, a network's cidr), is cited beside it."""
        line = self.line_of(entry)
        return Diagnostic(code, message, cause, hint=hint, line=line, column=column,
                          file=self.file, excerpt=self.lines[line - 1])

    def line_of(self, entry: Entry) -> int:
        """The entry's line number: kept by the plain parser; found here, on the path of an
        error only, for an entry the fast one read."""
        if entry.line:
            return entry.line
        text = ("retired " if entry.retired else "") + " ".join(
            map(str, words(entry.key, entry.value)))
        if self._numbers is None:
            self._numbers = {line: n for n, line in enumerate(self.lines, start=1)}
        return self._numbers.get(text, 1)

    def way_out(self, device: str) -> str:
        """The hint of a conflict: the ways out."""
        return (f"re-allocate it with '--reallocate {device}' (the device takes new "
                f"identities), or edit line(s) of {device} in {self.file}")


def words(key: Key, value: tuple[Any, ...]) -> list[object]:
    if key[0] in ("place", "serial", "zone", "row"):
        return [key[0], key[2], *value]
    if key[0] in ("outlet", "guid"):
        return [key[0], key[2], key[1], *value]
    return [*key, *value]


def device_of(key: Key, value: tuple[Any, ...]) -> str:
    """The device a line is about."""
    return str(value[0]) if key[0] == "lustre" else key[2]
