"""The lock file: every identity the compile allocated, kept beside the spec.

The compile passes allocate identities from the spec's order (addresses from pools, rack
units from the bottom and the top, Lustre target indices); on a cluster that is already
cabled and formatted none of them may move because another device was added, removed or
reordered. The lock records them, one per line, sorted, so a pull request shows each new
allocation as one added line:

    address <network> <device> <IPv4>     an address on management, bmc, ipoib or storage
    place <device> <rack> <U> <height>    a racked device's rack, lowest U and height in U
    lustre <mdt|ost> <index> <server>     a Lustre target index and the server holding it
    fabric <fabric> <host> <position> <ports> <switch> <port>
                                          a host's position on the compute or storage
                                          fabric (its leaves and ports follow from it), the
                                          ports it takes there and its first cable's end
    access <network> <device> <rack> <position> <switch> <port>
                                          a device's place among its rack's management
                                          or BMC access ports, and that port
    uplink <network> <switch> <level> <position>
                                          a management switch's place under the
                                          aggregation (agg1) or core (cor2...) pairs of
                                          its level: the pair's port
    outlet <device> <PSUn> <pdu> <outlet>  a power cord's PDU outlet (its circuit and
                                          line follow from the PDU profile's wiring)

A device named in the lock keeps what it records whatever else changed; a device the lock
does not name takes free identities by the passes' own rules (a first render writes the
lock). A line whose device is gone becomes ``retired <line>``: its identity stays reserved,
given to no other device, until ``--reallocate`` frees it (README, "The lock file").

The lock is input too: a person pins or moves an identity by editing it, and every line is
validated like the spec, errors located at its file:line:col.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from ipaddress import IPv4Address
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.source import split_lines
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.base.text import CONTROL, control_character
from cluster_iac.plan.kept import Entry, Key, Lock

VERSION = 1
HEADER = f"# cluster-iac lock {VERSION}"
SUFFIX = ".lock"
MAX_BYTES = 512 * 1024 * 1024
NETWORKS = ("management", "bmc", "ipoib", "storage")
TARGET_KINDS = ("mdt", "ost")
# What each kind of line holds after its kind word, and what each field must be.
FIELDS: dict[str, tuple[str, ...]] = {
    "address": ("network", "device", "ipv4"),
    "place": ("device", "rack", "unit", "height"),
    "lustre": ("target", "index", "device"),
    "fabric": ("fabric", "device", "position", "ports", "switch", "port"),
    "access": ("network", "device", "rack", "position", "switch", "port"),
    "outlet": ("device", "psu", "pdu", "outlet"),
    "uplink": ("network", "device", "level", "position"),
}
FABRICS = ("compute", "storage")
# Names in a lock: what the spec allows in host, rack and switch names (no blank, quote,
# control character or shell metacharacter can reach an output through the lock).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_INT = re.compile(r"0|[1-9][0-9]{0,8}")


def lock_path(spec_file: str | Path) -> Path:
    """``cluster.yaml`` -> ``cluster.lock`` in the same folder."""
    spec = Path(spec_file)
    return spec.with_name(spec.stem + SUFFIX)


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
    if not head.startswith(HEADER):
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
                problems.append(problem)
    problems += _collisions(lock)
    if "retired" in freed:
        freed.discard("retired")
        lock.groups = {scope: {name: entry for name, entry in group.items() if not entry.retired}
                       for scope, group in lock.groups.items()}
    if problems:
        raise CompileError(problems)
    lock.reallocated = frozenset(freed)
    return lock


_N = r"([A-Za-z0-9][A-Za-z0-9._-]{0,127})"  # a name, as _NAME
_I = r"(0|[1-9][0-9]{0,8})"  # a whole number, as _INT
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_R = r"^(retired )?"
# Every well-formed line of each kind, found in the whole text at once (MULTILINE).
_WHOLE = {
    "address": re.compile(rf"{_R}address ({'|'.join(NETWORKS)}) {_N} "
                          rf"({_OCTET}(?:\.{_OCTET}){{3}})$", re.MULTILINE),
    "place": re.compile(rf"{_R}place {_N} {_N} {_I} {_I}$", re.MULTILINE),
    "lustre": re.compile(rf"{_R}lustre ({'|'.join(TARGET_KINDS)}) {_I} {_N}$", re.MULTILINE),
    "fabric": re.compile(rf"{_R}fabric ({'|'.join(FABRICS)}) {_N} {_I} {_I} {_N} {_N}$",
                         re.MULTILINE),
    "access": re.compile(rf"{_R}access ({'|'.join(NETWORKS)}) {_N} {_N} {_I} {_N} {_N}$",
                         re.MULTILINE),
    "outlet": re.compile(rf"{_R}outlet {_N} (PSU[1-9][0-9]?) {_N} {_I}$", re.MULTILINE),
    "uplink": re.compile(rf"{_R}uplink ({'|'.join(NETWORKS)}) {_N} {_N} {_I}$", re.MULTILINE),
}
# CONTROL but for the line feed that ends each line
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f" + CONTROL.pattern[len("[\x00-\x1f"):])


def fast_entries(text: str) -> dict[tuple[str, str], dict[str, Entry]] | None:
    """The entries of a lock whose every line is well formed and in range, as _parse_line
    makes them (line 0: found when an error needs it, Lock.line_of), by (kind, scope) and
    name as Lock.groups holds them, or None for any other lock, which the plain parser then
    reads line by line to say what is wrong. Each kind's lines are found in the whole text by
    one pattern (a 100,000-GPU lock's 260,000 lines took 2.6 s line by line) and grouped by
    their scope as they come (render writes each scope's lines together).
    tests/test_lock.py holds it to the plain parser."""
    groups: dict[tuple[str, str], dict[str, Entry]] = {}
    found = 0
    try:
        for kind, pattern in _WHOLE.items():
            scope_at, name_at = _WORDS[kind]
            for start, end in _blocks(text, kind):
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
          "access": (1, 2), "outlet": (2, 1), "uplink": (1, 2)}


_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"


def _control_in(text: str) -> bool:
    """Whether ``text`` holds a character _CONTROL finds. An ASCII text (a lock as render
    writes it) is checked as bytes: what is left once every printable byte and line feed
    is deleted (2 ms for a 9 MiB lock, where the pattern's search took 25)."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _PRINTABLE))
    return _CONTROL.search(text) is not None


def _blocks(text: str, kind: str) -> list[tuple[int, int]]:
    """Where ``kind``'s lines are: from the first to the end of the last of its active lines,
    and of its retired ones (a lock as render writes it holds each kind's lines together, so
    each pattern reads only its own part; in any other order the parts overlap, a line is
    found twice, and the plain parser is asked)."""
    found = []
    for head in (f"\n{kind} ", f"\nretired {kind} "):
        first = text.find(head)
        if first >= 0:
            last = text.rfind(head)
            end = text.find("\n", last + 1)
            found.append((first + 1, len(text) if end < 0 else end))
    return found


def _make(kind: str, rows: list[tuple[str, ...]]) -> list[Entry]:
    """The entries of one kind's matched lines; a line out of range makes the whole kind
    unreadable here (ValueError from _in_range, caught by the caller)."""
    if kind == "address":
        return [Entry((kind, n, d), (a,), 0, r == "retired ") for r, n, d, a in rows]
    if kind == "place":
        return [Entry((kind, "", d), (rack, _in(u, 100, 1), _in(h, 100, 1)), 0, r == "retired ")
                for r, d, rack, u, h in rows]
    if kind == "lustre":
        return [Entry((kind, t, i), (d,), 0, r == "retired ") for r, t, i, d in rows]
    if kind == "fabric":
        return [Entry((kind, f, d), (_in(p, 100_000), _in(n, 64, 1), sw, port), 0,
                      r == "retired ") for r, f, d, p, n, sw, port in rows]
    if kind == "access":
        return [Entry((kind, n, d), (rack, _in(p, 100_000), sw, port), 0, r == "retired ")
                for r, n, d, rack, p, sw, port in rows]
    if kind == "outlet":
        return [Entry((kind, psu, d), (pdu, _in(o, 1000, 1)), 0, r == "retired ")
                for r, d, psu, pdu, o in rows]
    return [Entry((kind, n, d), (level, _in(p, 100_000)), 0, r == "retired ")  # uplink
            for r, n, d, level, p in rows]


def _in(word: str, high: int, low: int = 0) -> int:
    number = int(word)
    if not low <= number <= high:
        raise _OutOfRange(word)
    return number


class _OutOfRange(ValueError):
    """A number a pattern took but the field's range refuses."""


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
        value = _field(name, word)
        if isinstance(value, str) and value.startswith("!"):
            return error("LOCK-SYNTAX", f"{name} '{word[:60]}': {value[1:]}", column)
        values.append(value)
    if kind == "place":
        key: Key = (kind, "", values[0])
        value_part = tuple(values[1:])
    elif kind in ("fabric", "access", "uplink"):
        key, value_part = (kind, values[0], values[1]), tuple(values[2:])
    elif kind == "outlet":
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


def _field(name: str, word: str) -> Any:
    """The field's value, or '!why' when ``word`` is not one."""
    if name == "network":
        return word if word in NETWORKS else f"!not a network ({', '.join(NETWORKS)})"
    if name == "fabric":
        return word if word in FABRICS else f"!not a fabric ({', '.join(FABRICS)})"
    if name == "target":
        return word if word in TARGET_KINDS else f"!not a target kind ({', '.join(TARGET_KINDS)})"
    if name == "psu":
        return word if re.fullmatch(r"PSU[1-9][0-9]?", word) else "!not a PSU (PSU1, PSU2, ...)"
    if name in ("device", "rack", "switch", "port", "pdu", "level"):
        return word if _NAME.fullmatch(word) else \
            "!not a name (letters, digits, '.', '_', '-'; at most 128)"
    if name == "ipv4":
        try:
            return str(IPv4Address(word))
        except ValueError:
            return "!not an IPv4 address"
    if _INT.fullmatch(word) is None:
        return "!not a whole number"
    number = int(word)
    if name in ("unit", "height") and not 0 < number <= 100:
        return "!out of range (1-100)"
    if name == "outlet" and not 0 < number <= 1000:
        return "!out of range (1-1000)"
    if name == "position" and number > 100_000:
        return "!out of range (0-100000)"
    if name == "ports" and not 0 < number <= 64:
        return "!out of range (1-64)"
    return number


def _collisions(lock: Lock) -> list[Diagnostic]:
    """Two devices at one address of a network, in overlapping units of a rack, or with one
    Lustre target index: found by _find_collisions, which says where, when _no_collision
    cannot rule them out at once."""
    return [] if _no_collision(lock) else _find_collisions(lock)


def _no_collision(lock: Lock) -> bool:
    """True when no two entries of a kind and scope hold one spot (an address, a fabric,
    access or uplink position, an outlet) and no place reaches into the next one's units in
    its rack: a set per kind and a sort (0.05 s for a 100,000-GPU lock, where the plain
    search, _find_collisions, takes 0.15 s and is kept for saying where)."""
    spot = {"address": lambda v: v[0], "fabric": lambda v: v[0], "access": lambda v: v[:2],
            "uplink": lambda v: v, "outlet": lambda v: v}
    outlets: list[Any] = []
    for (kind, _scope), group in lock.groups.items():
        entries = group.values()
        if kind == "outlet":  # one PDU's outlets are one spot whatever the PSU's scope
            outlets += [entry.value for entry in entries]
        elif kind in spot:
            held = list(map(spot[kind], (entry.value for entry in entries)))
            if len(set(held)) != len(held):
                return False
    if len(set(outlets)) != len(outlets):
        return False
    places = sorted(entry.value for entry in lock.groups.get(("place", ""), {}).values())
    pairs = zip(places, places[1:], strict=False)
    return all(not (rack == next_rack and unit + height > next_unit)
               for (rack, unit, height), (next_rack, next_unit, _) in pairs)


def _find_collisions(lock: Lock) -> list[Diagnostic]:
    """Each entry that holds a spot an earlier one holds, at its lock line."""
    problems: list[Diagnostic] = []
    seen: dict[tuple[Any, ...], Entry] = {}
    for entry in lock.entries.values():
        kind = entry.key[0]
        if kind == "place":
            rack, unit, height = entry.value
            spots: list[tuple[Any, ...]] = [("place", rack, u) for u in range(unit, unit + height)]
        else:
            spots = [(kind, entry.key[1], entry.value[0])] if kind in ("address", "fabric") \
                else [(kind, entry.key[1], *entry.value)] if kind == "uplink" \
                else [(kind, entry.key[1], *entry.value[:2])] if kind == "access" \
                else [(kind, *entry.value)] if kind == "outlet" else []
        for spot in spots:
            other = seen.get(spot)
            if other is not None and other.key != entry.key:
                what = (f"rack {spot[1]} U{spot[2]}" if kind == "place" else
                        f"{entry.key[1]} fabric position {spot[2]}" if kind == "fabric" else
                        f"{entry.key[1]} {spot[2]} uplink position {spot[3]}"
                        if kind == "uplink" else
                        f"{entry.key[1]} access position {spot[3]} of rack {spot[2]}"
                        if kind == "access" else f"{spot[1]} outlet {spot[2]}"
                        if kind == "outlet" else
                        f"{entry.key[1]} address {spot[2]}")
                problems.append(lock.error(
                    entry, "LOCK-COLLISION", f"{entry.key[2]} and {other.key[2]} (line "
                    f"{lock.line_of(other)}) both hold {what}",
                    hint=f"give one of them a free one, or remove its line so that it takes "
                         f"one ('--reallocate {entry.key[2]}')"))
                break
            seen[spot] = entry
    return problems
