"""Hostlist folding and expansion, delegated to ClusterShell's NodeSet, with a size bound.

ClusterShell is imported when a hostlist has more than plain names and single ranges, or names
are folded: a spec of plain names and 'r[1-3125]'-like ranges is validated without it (its
import, with configparser and subprocess, is a few percent of `cluster-iac validate`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from operator import itemgetter

_RANGE = re.compile(r"\s*(\d{1,18})(?:-(\d{1,18})(?:/(\d{1,18}))?)?\s*")
_PART = re.compile(r"[^\[\],]*(\[[^\[\]]*\][^\[\],]*)*")
# One name without ranges (digit runs as ClusterShell takes them, up to 18 digits): ClusterShell
# reads it as written.
_PLAIN = re.compile(r"(?:[A-Za-z_.-]+|\d{1,18}(?!\d))+")
# A plain name with at most one run of digits: "g00012", "gpu01a", "head". ClusterShell reads
# such a name as pattern "g%s" with index "00012" (the digits as written keep their padding).
_ONE_INDEX = re.compile(r"([A-Za-z._-]*)(\d{0,18})([A-Za-z._-]*)")
# One range in brackets between names without digits: 'r[1-3125]', 'gpu[001-128]a', 'n[7]'.
_ONE_RANGE = re.compile(r"([A-Za-z._-]*)\[(\d{1,18})(?:-(\d{1,18}))?\]([A-Za-z._-]*)")


class HostlistError(ValueError):
    """A hostlist expression that cannot be parsed."""


class HostlistTooLarge(HostlistError):
    """A hostlist that names more entries than the limit: refused before it is expanded."""


def size(expression: str) -> int:
    """How many names ``expression`` writes (an upper bound: overlaps count twice), from its
    ranges alone: 'r[1-100000000]' is 100,000,000 without making one of them."""
    total = 0
    for part in _split_top_level(expression):
        if not _PART.fullmatch(part):
            raise HostlistError(f"{part!r} is not a name with ranges in brackets")
        count = 1
        for body in re.findall(r"\[([^\[\]]*)\]", part):
            count *= sum(_range_size(item) for item in body.split(","))
        total += count
    return total


def _range_size(item: str) -> int:
    match = _RANGE.fullmatch(item)
    if match is None:  # only what is counted is ever expanded
        raise HostlistError(f"bad range {item.strip()!r}: write 1-8, 01-16 or 1-15/2")
    first, last, step = match.groups()
    if step is not None and int(step) == 0:
        raise HostlistError(f"bad range {item.strip()!r}: a step of 0")
    if last is None:
        return 1
    return max(0, (int(last) - int(first)) // int(step or 1) + 1)


def expand(expression: str, limit: int | None = None) -> list[str]:
    """'r[01-03]' -> ['r01', 'r02', 'r03'], in the order written; HostlistTooLarge when it
    names more than ``limit``, before anything is expanded."""
    count = size(expression)  # refuses what it cannot count
    if limit is not None and count > limit:
        raise HostlistTooLarge(f"{expression!r} names {count:,} entries; the limit is {limit:,}")
    plain = [part.strip() for part in expression.split(",")]
    if all(_PLAIN.fullmatch(part) for part in plain):  # no ranges, no empty name: as written
        return list(dict.fromkeys(plain))
    if len(plain) == 1 and (names := _one_range(plain[0])) is not None:
        return names
    from ClusterShell.NodeSet import NodeSet, NodeSetParseError

    try:
        nodeset = NodeSet(expression, autostep=None)
        ordered = []
        for part in _split_top_level(expression):
            ordered.extend(NodeSet(part))
    except (NodeSetParseError, ValueError) as exc:
        raise HostlistError(str(exc)) from None
    # NodeSet sorts; keep the author's order for rack lists, deduplicated.
    result = list(dict.fromkeys(ordered))
    if len(result) != len(nodeset):
        raise HostlistError(f"cannot expand {expression!r}")
    return result


def _one_range(part: str) -> list[str] | None:
    """The names of one part of one range ('r[1-3125]'), as ClusterShell expands it: each
    index zero-padded to the width of a first index written with a leading zero, ascending
    (ClusterShell's order, by length and then text, is ascending for one range). None for
    anything else, and for what ClusterShell refuses (a padded end of another width than the
    start, an end before the start): its parser says why. Parsing and sorting the 3,125 racks
    of a 100,000-GPU spec took ClusterShell some 6 ms, four times over in one compile."""
    match = _ONE_RANGE.fullmatch(part)
    if match is None:
        return None
    prefix, first, last, suffix = match.groups()
    last = last or first
    start, stop = int(first), int(last)
    pad = len(first) if len(first) > 1 and first[0] == "0" else 0
    end_pad = len(last) if stop and last[0] == "0" else 0
    if start > stop or ((pad or end_pad) and len(first) != len(last)):
        return None
    form = f"{prefix}%0{pad}d{suffix}"  # ClusterShell's own '%0*d' (no '%' in the names)
    return [form % index for index in range(start, stop + 1)]


def fold(names: Iterable[str]) -> str:
    """['gpu01', 'gpu02', 'gpu03'] -> 'gpu[01-03]' (sorted, Slurm syntax).

    ClusterShell folds; it is only spared re-parsing each name as a hostlist expression (the
    names are our own, and 100,000 GPUs fold 50,000 of them): a name with at most one run of
    digits is split here into ClusterShell's pattern and index, exactly as its parser splits
    it, and any other name goes through the parser. Names of one pattern whose indices are all
    of one width are folded here outright, as ClusterShell folds them."""
    names = list(names)
    folded = _fold_one_pattern(names)
    if folded is not None:
        return folded
    from ClusterShell.NodeSet import NodeSet, NodeSetBase
    from ClusterShell.RangeSet import RangeSet

    indices: dict[str, list[str]] = {}
    others: list[str] = []
    for name in names:
        match = _ONE_INDEX.fullmatch(name)
        if match is None:
            others.append(name)
            continue
        prefix, index, suffix = match.groups()
        pattern = f"{prefix}%s{suffix}" if index else prefix
        indices.setdefault(pattern, []).append(index)
    nodeset = NodeSet.fromlist(sorted(others))
    for pattern, found in indices.items():
        rangeset = None
        if found[0]:
            rangeset = RangeSet()
            rangeset.update(found)  # the index strings as they are, not a range to parse
        nodeset.update(NodeSetBase(pattern, rangeset, False))
    return str(nodeset)


def _fold_one_pattern(names: list[str]) -> str | None:
    """The fold of names that are one pattern with indices of one width (a node type's or a
    scalable unit's hosts: 'g00001'...), checked and split a column at a time; None for any
    other names. ClusterShell's per-index sort key and padding checks are most of its cost."""
    first = _ONE_INDEX.fullmatch(names[0]) if names else None
    if first is None or not first[2] or len(set(map(len, names))) > 1:
        return None
    prefix, index, suffix = first.groups()
    cut = slice(len(prefix), len(prefix) + len(index))
    indices = list(map(itemgetter(cut), names))
    digits = "".join(indices)
    if not (digits.isascii() and digits.isdigit()) \
            or len(set(map(itemgetter(slice(cut.start)), names))) > 1 \
            or len(set(map(itemgetter(slice(cut.stop, None)), names))) > 1:
        return None
    return prefix + _ranges(sorted(set(map(int, indices))), len(index)) + suffix


def _ranges(numbers: list[int], width: int) -> str:
    """Sorted distinct indices of one width as ClusterShell folds them: runs of consecutive
    ones as 'a-b', the rest alone, each zero-padded to the width; in brackets when more than
    one. (One width: a padded index and an unpadded one of the same length fold together.)"""
    if len(numbers) == 1:
        return f"{numbers[0]:0{width}d}"
    parts = []
    start = previous = numbers[0]
    for number in numbers[1:]:
        if number != previous + 1:
            parts.append(f"{start:0{width}d}" if start == previous
                         else f"{start:0{width}d}-{previous:0{width}d}")
            start = number
        previous = number
    parts.append(f"{start:0{width}d}" if start == previous
                 else f"{start:0{width}d}-{previous:0{width}d}")
    return "[" + ",".join(parts) + "]"


def _split_top_level(expression: str) -> list[str]:
    return [p.strip() for _column, p in top_level_parts(expression) if p.strip()]


def top_level_parts(expression: str) -> list[tuple[int, str]]:
    """The comma-separated parts of a hostlist (not the commas inside brackets), each with
    the column (from 1) it starts at; an unclosed bracket's part runs to the end."""
    parts, depth, start = [], 0, 0
    for k, char in enumerate(expression):
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            parts.append((start + 1, expression[start:k]))
            start = k + 1
    parts.append((start + 1, expression[start:]))
    return parts
