"""The lock read: its bytes checked (size, UTF-8, the header), its lines parsed into the
identities the passes keep (plan/kept.py), and its collisions found. A lock as render writes
it is read by fast.py at once; any other is read line by line here, which says what is wrong
and where. The kinds of line and their fields are grammar.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.source import split_lines
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.base.text import control_character
from cluster_iac.lock.collisions import collisions
from cluster_iac.lock.fast import fast_entries
from cluster_iac.lock.grammar import (
    FIELDS,
    HEADER,
    MAX_BYTES,
    OLD_HEADER,
    field_value,
)
from cluster_iac.lock.trailer import checked_trailer
from cluster_iac.plan.kept import Entry, Key, Lock, device_of


def read_lock(path: Path, reallocate: Iterable[str] = ()) -> Lock:
    """The lock at ``path`` (an empty one when there is none); CompileError with every
    problem located at its line."""
    file = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Lock(file=file, reallocated=frozenset(reallocate))
    except OSError as exc:
        raise CompileError([Diagnostic("LOCK-READ", f"cannot read the lock: {exc.strerror}",
                                       line=1, column=1, file=file)]) from None
    return parse_lock(data, file, reallocate)


def parse_lock(data: bytes, file: str, reallocate: Iterable[str] = ()) -> Lock:
    """Parse and validate the lock's text."""
    freed = set(reallocate)
    if len(data) > MAX_BYTES:
        raise CompileError([Diagnostic("LOCK-SIZE", f"the lock is {len(data)} bytes, more "
                                       f"than {MAX_BYTES}", line=1, column=1, file=file)])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CompileError([Diagnostic("LOCK-SYNTAX", "the lock is not UTF-8 text",
                                       line=line, column=column, file=file)]) from None
    lock = Lock(file=file, text=text)
    head = text[:text.find("\n")] if "\n" in text else text
    problems: list[Diagnostic] = []
    broken, lock.digest = checked_trailer(text, file) if head.startswith(HEADER) else (None,
                                                                                      None)
    if broken is not None:
        problems.append(broken)  # after the lines' own problems, which the plain parser finds
    elif not head.startswith((HEADER, OLD_HEADER)):
        problems.append(Diagnostic(
            "LOCK-VERSION", f"the lock does not start with '{HEADER}'", line=1, column=1,
            file=file, excerpt=head,
            hint="a lock is written by 'cluster-iac render'; delete it to start again"))
    fast = fast_entries(text) if not problems else None
    if fast is not None:
        lock.groups = fast
    else:  # the plain parser, line by line: it says what is wrong, and where
        for number, text_line in enumerate(split_lines(text), start=1):
            problem = _parse_line(lock, number, text_line)
            if problem is not None:
                problems.insert(len(problems) - (broken is not None), problem)
    if "retired" in freed:
        freed.discard("retired")
        lock.groups = {scope: {name: entry for name, entry in group.items() if not entry.retired}
                       for scope, group in lock.groups.items()}
    # --reallocate before the lock's own checks: a device set free holds nothing it collides on
    problems += collisions(_without(lock, freed) if freed else lock)
    if problems:
        raise CompileError(problems)
    lock.reallocated = frozenset(freed)
    return lock


def _without(lock: Lock, freed: set[str]) -> Lock:
    """The lock less the lines of the devices ``--reallocate`` sets free (what the collision
    check sees: a hint to reallocate one of two colliding devices then clears the collision)."""
    return Lock(file=lock.file, text=lock.text, digest=lock.digest, groups={
        scope: {name: entry for name, entry in group.items()
                if device_of(entry.key, entry.value) not in freed}
        for scope, group in lock.groups.items()})


def _parse_line(lock: Lock, number: int, line: str) -> Diagnostic | None:
    def error(code: str, message: str, column: int = 1, hint: str | None = None) -> Diagnostic:
        return Diagnostic(code, message, line=number, column=column, file=lock.file,
                          excerpt=line, hint=hint)

    bad = control_character(line)
    if bad is not None:
        return error("LOCK-SYNTAX", f"a control character ({bad[1]}) in the lock", bad[0] + 1)
    if not line.strip() or line.startswith("#"):
        return None
    words, columns = _split(line)
    retired = words[0] == "retired"
    if retired:
        words, columns = words[1:], columns[1:]
        if not words:
            return error("LOCK-SYNTAX", "'retired' names no identity")
    kind = words[0]
    if kind not in FIELDS:
        return error("LOCK-SYNTAX", f"unknown kind of line '{kind}'", columns[0],
                     did_you_mean(kind, [*FIELDS, "retired"]))
    wanted = FIELDS[kind]
    if len(words) - 1 != len(wanted):
        return error("LOCK-SYNTAX", f"a '{kind}' line holds {len(wanted)} fields "
                     f"({', '.join(wanted)}), this one {len(words) - 1}",
                     columns[min(len(words), len(wanted) + 1) - 1])
    values: list[Any] = []
    for name, word, column in zip(wanted, words[1:], columns[1:], strict=True):
        value = field_value(name, word)
        if isinstance(value, str) and value.startswith("!"):
            return error("LOCK-SYNTAX", f"{name} '{word[:60]}': {value[1:]}", column)
        values.append(value)
    if kind in ("place", "serial", "zone", "row"):
        key: Key = (kind, "", values[0])
        value_part = tuple(values[1:])
    elif kind in ("fabric", "links", "access", "uplink", "peerlink", "bgp", "p2p"):
        key, value_part = (kind, values[0], values[1]), tuple(values[2:])
    elif kind in ("outlet", "guid"):
        key, value_part = (kind, values[1], values[0]), tuple(values[2:])
    else:
        key, value_part = (kind, values[0], str(values[1])), (values[2],)
    group = lock.groups.setdefault((key[0], key[1]), {})
    if key[2] in group:
        first = group[key[2]].line
        what = " ".join(part for part in key if part)
        return error("LOCK-DUPLICATE", f"{what} is also at line {first}", columns[0],
                     "keep one of the two lines")
    group[key[2]] = Entry(key, value_part, number, retired)
    return None


def _split(line: str) -> tuple[list[str], list[int]]:
    words, columns = [], []
    for match in re.finditer(r"\S+", line):
        words.append(match.group())
        columns.append(match.start() + 1)
    return words, columns
