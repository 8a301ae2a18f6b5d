"""The fast reader of a lock as render writes it: each kind's lines found in the whole text by
one pattern, grouped by scope as they come (tests/test_lock.py holds it to the plain parser
of read.py, which reads any other lock line by line)."""

from __future__ import annotations

import re
from functools import cache
from itertools import groupby
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
    found = 0
    blocks = _blocks(text)
    if blocks is None:
        return None
    try:
        for kind, pattern in _WHOLE.items():
            scope_at, name_at = _WORDS[kind]
            for start, end in blocks.get(kind, ()):
                rows = pattern.findall(text, start, end)
                found += len(rows)
                runs = groupby(rows, itemgetter(scope_at)) if scope_at else (("", rows),)
                for scope, run in runs:
                    run = list(run)
                    group = groups.setdefault((kind, scope), {})
                    held = len(group)
                    group.update(zip(map(itemgetter(name_at), run), _make(kind, run),
                                     strict=True))
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
# none, 'place') and the key's last word
_WORDS = {"address": (1, 2), "place": (0, 1), "lustre": (1, 2), "fabric": (1, 2),
          "links": (1, 2),
          "access": (1, 2), "outlet": (2, 1), "uplink": (1, 2), "peerlink": (1, 2),
          "bgp": (1, 2), "p2p": (1, 2),
          "mac": (1, 2), "serial": (0, 1), "guid": (2, 1), "zone": (0, 1),
          "row": (0, 1)}


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


def _make(kind: str, rows: list[tuple[str, ...]]) -> list[Entry]:
    """The entries of one kind's matched lines; a line out of range makes the whole kind
    unreadable here (ValueError from _in_range, caught by the caller)."""
    if kind == "address":
        return [Entry((kind, n, d), (a,), 0, r == "retired ") for r, n, d, a in rows]
    if kind == "mac":
        if any(row[3] == ZERO_MAC for row in rows):
            raise _OutOfRange(ZERO_MAC)
        return [Entry((kind, n, d), (m,), 0, r == "retired ") for r, n, d, m in rows]
    if kind == "serial":
        return [Entry((kind, "", d), (s,), 0, r == "retired ") for r, d, s in rows]
    if kind == "guid":
        if any(row[3] == ZERO_GUID for row in rows):
            raise _OutOfRange(ZERO_GUID)
        return [Entry((kind, port, d), (g,), 0, r == "retired ") for r, d, port, g in rows]
    if kind == "zone":
        if any(len(row[1]) > ZONE_MAX for row in rows):
            raise _OutOfRange(ZONE_MAX)
        return [Entry((kind, "", z), (_in(n, SOA_MAX, 1), h), 0, r == "retired ")
                for r, z, n, h in rows]
    if kind == "row":
        return [Entry((kind, "", w), (_in(p, 100_000),), 0, r == "retired ") for r, w, p in rows]
    if kind == "place":
        return [Entry((kind, "", d), (rack, _in(u, 100, 1), _in(h, 100, 1)), 0, r == "retired ")
                for r, d, rack, u, h in rows]
    if kind == "lustre":
        return [Entry((kind, t, i), (d,), 0, r == "retired ") for r, t, i, d in rows]
    if kind == "fabric":
        return [Entry((kind, f, d), (_in(p, 100_000), _in(n, 64, 1), sw, port), 0,
                      r == "retired ") for r, f, d, p, n, sw, port in rows]
    if kind == "links":
        return [Entry((kind, f, d), (u,), 0, r == "retired ") for r, f, d, u in rows]
    if kind == "access":
        return [Entry((kind, n, d), (rack, _in(p, 100_000), sw, port), 0, r == "retired ")
                for r, n, d, rack, p, sw, port in rows]
    if kind == "outlet":
        return [Entry((kind, psu, d), (pdu, _in(o, 1000, 1)), 0, r == "retired ")
                for r, d, psu, pdu, o in rows]
    if kind == "bgp":
        return [Entry((kind, f, d), (_in(asn, MAX_ASN, 1), ip), 0, r == "retired ")
                for r, f, d, asn, ip in rows]
    if kind == "p2p":
        return [Entry((kind, f, d), (ip,), 0, r == "retired ") for r, f, d, ip in rows]
    if kind == "peerlink":
        return [Entry((kind, n, d), (a, b), 0, r == "retired ") for r, n, d, a, b in rows]
    return [Entry((kind, n, d), (level, _in(p, 100_000)), 0, r == "retired ")  # uplink
            for r, n, d, level, p in rows]


def _in(word: str, high: int, low: int = 0) -> int:
    number = int(word)
    if not low <= number <= high:
        raise _OutOfRange(word)
    return number


class _OutOfRange(ValueError):
    """A number a pattern took but the field's range refuses."""
