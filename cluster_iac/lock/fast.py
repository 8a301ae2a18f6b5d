"""The fast reader of a lock as render writes it: each kind's lines found in the whole text by
one pattern, grouped by scope as they come (tests/test_lock.py holds it to the plain parser
of read.py, which reads any other lock line by line)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from itertools import groupby, repeat
from operator import itemgetter

from cluster_iac.base.text import CONTROL
from cluster_iac.lock.grammar import (
    FABRICS,
    GUID,
    MAC,
    MAX_ASN,
    NETWORKS,
    SERIAL,
    SOA_MAX,
    TARGET_KINDS,
    UPLINKS,
    ZERO_GUID,
    ZERO_MAC,
    ZONE,
    ZONE_MAX,
)
from cluster_iac.plan.kept import Entry

_N = r"([A-Za-z0-9][A-Za-z0-9._-]{0,127})"  # a name, as grammar.py's _NAME
_I = r"(0|[1-9][0-9]{0,8})"  # a whole number, as grammar.py's _INT
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_R = r"^(retired )?"
_IP = rf"({_OCTET}(?:\.{_OCTET}){{3}})"
# Every well-formed line of each kind, found in the whole text at once (MULTILINE).
_WHOLE = {
    "address": re.compile(rf"{_R}address ({'|'.join(NETWORKS)}) {_N} "
                          rf"({_OCTET}(?:\.{_OCTET}){{3}})$", re.MULTILINE),
    "place": re.compile(rf"{_R}place {_N} {_N} {_I} {_I}$", re.MULTILINE),
    "lustre": re.compile(rf"{_R}lustre ({'|'.join(TARGET_KINDS)}) {_I} {_N}$", re.MULTILINE),
    "fabric": re.compile(rf"{_R}fabric ({'|'.join(FABRICS)}) {_N} {_I} {_I} {_N} {_N}$",
                         re.MULTILINE),
    "links": re.compile(rf"{_R}links ({'|'.join(FABRICS)}) {_N} ({UPLINKS.pattern})$",
                        re.MULTILINE),
    "access": re.compile(rf"{_R}access ({'|'.join(NETWORKS)}) {_N} {_N} {_I} {_N} {_N}$",
                         re.MULTILINE),
    "outlet": re.compile(rf"{_R}outlet {_N} (PSU[1-9][0-9]?) {_N} {_I}$", re.MULTILINE),
    "uplink": re.compile(rf"{_R}uplink ({'|'.join(NETWORKS)}) {_N} {_N} {_I}$", re.MULTILINE),
    "peerlink": re.compile(rf"{_R}peerlink ({'|'.join(NETWORKS)}) {_N} {_N} {_N}$",
                           re.MULTILINE),
    "bgp": re.compile(rf"{_R}bgp ({'|'.join(FABRICS)}) {_N} ([1-9][0-9]{{0,9}}) {_IP}$",
                      re.MULTILINE),
    "p2p": re.compile(rf"{_R}p2p ({'|'.join(FABRICS)}) {_N} {_IP}$", re.MULTILINE),
    "mac": re.compile(rf"{_R}mac ({'|'.join(NETWORKS)}) {_N} ({MAC.pattern})$", re.MULTILINE),
    "serial": re.compile(rf"{_R}serial {_N} ({SERIAL.pattern})$", re.MULTILINE),
    "guid": re.compile(rf"{_R}guid {_N} {_N} ({GUID.pattern})$", re.MULTILINE),
    "zone": re.compile(rf"{_R}zone ({ZONE.pattern}) ([1-9][0-9]{{0,9}}) ([0-9a-f]{{64}})$",
                       re.MULTILINE),
    "row": re.compile(rf"{_R}row {_N} {_I}$", re.MULTILINE),
}
# CONTROL but for the line feed that ends each line
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f" + CONTROL.pattern[len("[\x00-\x1f"):])


def fast_entries(text: str) -> dict[tuple[str, str], dict[str, Entry]] | None:
    """The entries of a lock whose every line is well formed and in range, as read.py's
    _parse_line makes them (line 0: found when an error needs it, Lock.line_of), by (kind,
    scope) and name as Lock.groups holds them, or None for any other lock, which the plain
    parser then reads line by line to say what is wrong. Each kind's lines are found in the
    part of the text that holds them by one pattern (a 100,000-GPU lock's 260,000 lines took
    2.6 s line by line) and grouped by their scope as they come (render writes each scope's
    lines together).
    tests/test_lock.py holds it to the plain parser."""
    groups: dict[tuple[str, str], dict[str, Entry]] = {}
    words: dict[str, str] = {}  # each distinct word once (_make)
    found = 0
    blocks = _blocks(text)
    if blocks is None:
        return None
    try:
        for kind, pattern in _WHOLE.items():
            scope_at = _SCOPE_AT[kind]
            for start, end in blocks.get(kind, ()):
                rows = pattern.findall(text, start, end)
                found += len(rows)
                runs = groupby(rows, itemgetter(scope_at)) if scope_at else (("", rows),)
                for scope, run in runs:
                    run = list(run)
                    group = groups.setdefault((kind, scope), {})
                    held = len(group)
                    group.update(_make(kind, run, words))
                    if len(group) - held != len(run):
                        return None  # a duplicate
    except _OutOfRange:
        return None
    lines = text.count("\n") + (not text.endswith("\n"))
    comments = text.startswith("#") + text.count("\n#")  # lines that start with "#"
    if found + comments != lines or _control_in(text):
        return None  # a line no pattern took, or a control character in a comment
    return groups


# Where each kind's matched row (its first group is 'retired ' or '') holds its scope (0:
# none, 'place'); the key's last word is _SHAPES'
_SCOPE_AT = {"address": 1, "place": 0, "lustre": 1, "fabric": 1, "links": 1, "access": 1,
             "outlet": 2, "uplink": 1, "peerlink": 1, "bgp": 1, "p2p": 1, "mac": 1,
             "serial": 0, "guid": 2, "zone": 0, "row": 0}


_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"


def _control_in(text: str) -> bool:
    """Whether ``text`` holds a character _CONTROL finds. An ASCII text (a lock as render
    writes it) is checked as bytes: what is left once every printable byte and line feed
    is deleted (2 ms for a 9 MiB lock, where the pattern's search took 25)."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _PRINTABLE))
    return _CONTROL.search(text) is not None


def _blocks(text: str) -> dict[str, list[tuple[int, int]]] | None:
    """Where each kind's lines are: kind -> its runs of lines (start, end of the last line),
    its active runs first, then its retired ones, each in the order of the text; found in
    one walk from run to run (one pattern match per run; a lock as render writes it holds
    each kind's active lines together, then each kind's retired ones), where searching the
    whole text for each of the 16 kinds, active and retired, took 0.2 s at 100,000 GPUs.
    None (the plain parser asked) for a line that starts as no kind's does, and for a kind
    whose active and retired lines are mixed."""
    active: dict[str, list[tuple[int, int]]] = {}
    retired: dict[str, list[tuple[int, int]]] = {}
    size = len(text)
    start = 0
    while start < size:
        if text.startswith("#", start):  # a comment line
            end = text.find("\n", start)
            start = size if end < 0 else end + 1
            continue
        head = _HEAD.match(text, start)
        if head is None or head.group(2) not in _WHOLE:
            return None
        run = _run(head.group()).match(text, start)  # to past the run's last line feed
        end = start if run is None else run.end()
        if end == start:  # a last line without its line feed
            end = size
        (retired if head.group(1) else active).setdefault(head.group(2), []).append(
            (start, end - 1 if text.endswith("\n", start, end) else end))
        start = end
    for kind, runs in retired.items():
        held = active.get(kind, [])
        if held and not (held[-1][1] < runs[0][0] or runs[-1][1] < held[0][0]):
            return None  # mixed
        active[kind] = held + runs
    return active


_HEAD = re.compile(r"(retired )?([a-z0-9]+) ")
"""The start of a lock line: 'retired ' or not, and its kind."""


@cache
def _run(head: str) -> re.Pattern[str]:
    """The lines that start with ``head`` ('address ', 'retired place '), one after
    another."""
    return re.compile(rf"(?:{re.escape(head)}[^\n]*\n)*")


def _make(kind: str, rows: list[tuple[str, ...]], held: dict[str, str],
          ) -> Iterator[tuple[str, Entry]]:
    """(name, entry) of one kind's matched lines, made column by column (each row's words
    transposed once, the keys and values zipped from the columns, each entry made by
    tuple.__new__ in one pass: read.py's per line call, a Python frame per entry, was most
    of a 100,000-GPU lock's read); a line out of range makes the whole kind unreadable here
    (_OutOfRange, caught by the caller). Each word is the one string ``held`` keeps for
    its text: a 100,000-GPU lock's 1,090,000 words are 114,000 texts (a device is named in
    each of its addresses, outlets, its place...; a rack, a PDU, a switch in every line of
    what they hold), so the entries, kept by the plan through every pass, hold 970,000
    strings fewer (some 50 MiB)."""
    if not rows:
        return iter(())
    r, *columns = zip(*rows, strict=True)
    ranges = _RANGES.get(kind, {})
    words = [column if at in ranges else tuple(map(held.setdefault, column, column))
             for at, column in enumerate(columns)]  # a number's word is made an int below
    key, value = _SHAPES[kind]
    if kind == "mac" and ZERO_MAC in words[2]:
        raise _OutOfRange(ZERO_MAC)
    if kind == "guid" and ZERO_GUID in words[2]:
        raise _OutOfRange(ZERO_GUID)
    if kind == "zone" and max(map(len, words[0])) > ZONE_MAX:
        raise _OutOfRange(ZONE_MAX)
    for at, (low, high) in ranges.items():
        words[at] = numbers = tuple(map(int, words[at]))
        if min(numbers) < low or max(numbers) > high:
            raise _OutOfRange(kind)
    scopes = repeat("") if key[0] is None else words[key[0]]
    keys = zip(repeat(kind), scopes, words[key[1]])
    values = zip(*(words[at] for at in value), strict=True)
    # a matched row's first word is 'retired ' or '': its truth is the entry's retired
    return zip(words[key[1]], map(_new, repeat(Entry), zip(keys, values, repeat(0),
                                                         map(bool, r))), strict=True)


_new = tuple.__new__
# Per kind, where its row's words (less the first, 'retired ' or '') hold the key's scope
# (None: '') and name, and the value's words, in order
_SHAPES: dict[str, tuple[tuple[int | None, int], tuple[int, ...]]] = {
    "address": ((0, 1), (2,)), "mac": ((0, 1), (2,)), "serial": ((None, 0), (1,)),
    "guid": ((1, 0), (2,)), "zone": ((None, 0), (1, 2)), "row": ((None, 0), (1,)),
    "place": ((None, 0), (1, 2, 3)), "lustre": ((0, 1), (2,)),
    "fabric": ((0, 1), (2, 3, 4, 5)), "links": ((0, 1), (2,)),
    "access": ((0, 1), (2, 3, 4, 5)), "outlet": ((1, 0), (2, 3)),
    "bgp": ((0, 1), (2, 3)), "p2p": ((0, 1), (2,)), "peerlink": ((0, 1), (2, 3)),
    "uplink": ((0, 1), (2, 3)),
}
# Per kind, its whole-number words (as in _SHAPES) and the range each must be in
_RANGES: dict[str, dict[int, tuple[int, int]]] = {
    "zone": {1: (1, SOA_MAX)}, "row": {1: (0, 100_000)}, "place": {2: (1, 100), 3: (1, 100)},
    "fabric": {2: (0, 100_000), 3: (1, 64)}, "access": {3: (0, 100_000)},
    "outlet": {3: (1, 1000)}, "bgp": {2: (1, MAX_ASN)}, "uplink": {3: (0, 100_000)},
}


class _OutOfRange(ValueError):
    """A number a pattern took but the field's range refuses."""
