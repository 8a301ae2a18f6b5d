"""Hostlist folding and expansion, delegated to ClusterShell's NodeSet."""

from __future__ import annotations

from collections.abc import Iterable

from ClusterShell.NodeSet import NodeSet, NodeSetParseError


class HostlistError(ValueError):
    """A hostlist expression that cannot be parsed."""


def expand(expression: str) -> list[str]:
    """'r[01-03]' -> ['r01', 'r02', 'r03'], in the order written."""
    try:
        nodeset = NodeSet(expression, autostep=None)
    except (NodeSetParseError, ValueError) as exc:
        raise HostlistError(str(exc)) from None
    ordered = []
    for part in _split_top_level(expression):
        ordered.extend(NodeSet(part))
    # NodeSet sorts; keep the author's order for rack lists, deduplicated.
    result = list(dict.fromkeys(ordered))
    if len(result) != len(nodeset):
        raise HostlistError(f"cannot expand {expression!r}")
    return result


def fold(names: Iterable[str]) -> str:
    """['gpu01', 'gpu02', 'gpu03'] -> 'gpu[01-03]' (sorted, Slurm syntax)."""
    return str(NodeSet.fromlist(sorted(names)))


def _split_top_level(expression: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in expression:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]
