"""Renames: the spec's ``moved`` list applied to the lock before anything is allocated, and
the refusal of a rename the spec does not say.

A move (``{from: gpu##, to: node##}`` or ``{from: gpu07, to: node07}``) gives the lock's
lines of each old name to its new name, as Terraform's ``moved`` block gives a resource's
state to its new address: the renamed host keeps its rack, U, ports, outlets and addresses,
and the lock the render writes holds only the new name. A move is harmless once applied
(the lock no longer holds its old names) and may stay in the spec; one whose old name is
again a host of the spec is not applied, so a group that later takes the old names back is
allocated as new.

Without a move, a node group none of whose hosts the lock names, in racks where the lock
holds hosts of a numbered family the spec no longer makes at the same indices, is a rename
nobody wrote: the old hosts would be retired and the new ones allocated elsewhere (new
units, ports, outlets and addresses for hardware that did not move). That is refused at the
group's hostname key, with the move to write as the hint.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from difflib import SequenceMatcher

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.hostlist import expand
from cluster_iac.compile.expand_nodes import hostname
from cluster_iac.plan.kept import Entry, Lock, device_of
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.nodes import NodeGroup

_INDEXED = re.compile(r"(.*\D)?(\d+)(\D*)")  # a name's last run of digits, its index


def spec_hosts(spec: ClusterSpec) -> list[set[str]]:
    """Each node group's host names."""
    return [{hostname(group.hostname, index)
             for index in range(group.first_index, group.first_index + group.count)}
            for group in spec.node_groups]


def _new_name(old: str, source: str, target: str) -> str | None:
    """``old`` under the move ``source`` -> ``target``: a host to a host, or a host of the
    pattern ``source`` to the host of ``target`` at the same index; None if it does not
    match."""
    if "#" not in source:
        return target if old == source else None
    run = re.search(r"#+", source)
    assert run is not None  # a pattern has a run of '#' (spec/strings.py)
    head, tail = source[:run.start()], source[run.end():]
    if not (old.startswith(head) and old.endswith(tail)) or len(old) <= len(head) + len(tail):
        return None
    digits = old[len(head):len(old) - len(tail)]
    if not digits.isdigit() or hostname(source, int(digits)) != old:
        return None
    return hostname(target, int(digits))


def apply_moves(spec: ClusterSpec, lock: Lock) -> tuple[Lock, list[Diagnostic]]:
    """``lock`` with the spec's moves applied to its lines, and the moves that cannot be: a
    new name the lock already gives another device, or that no node group makes."""
    if not spec.moved or not lock.exists:
        return lock, []
    hosts = set().union(*spec_hosts(spec))
    names = {device_of(entry.key, entry.value)
             for group in lock.groups.values() for entry in group.values()}
    renamed: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for i, move in enumerate(spec.moved):
        for old in sorted(names - hosts - renamed.keys()):
            new = _new_name(old, move.from_, move.to)
            if new is None:
                continue
            if new in names and new not in renamed or new in renamed.values():
                problems.append(Diagnostic(
                    "LOCK-MOVED", f"moving {old} to {new}: the lock already holds {new}",
                    ("moved", i, "to"),
                    hint=f"keep one of them: remove the lines of {new} (or {old}) from "
                         f"{lock.file}, or drop this move"))
            elif new not in hosts:
                problems.append(Diagnostic(
                    "LOCK-MOVED", f"moving {old} to {new}: no node group makes {new}",
                    ("moved", i, "to"),
                    hint="the new name is a host of the spec: change the group's hostname "
                         "pattern (or count) to make it, or correct the move"))
            else:
                renamed[old] = new
            if len(problems) >= 20:
                return lock, problems
    if problems or not renamed:
        return lock, problems
    return _renamed(lock, renamed), []


def _renamed(lock: Lock, renamed: dict[str, str]) -> Lock:
    """The lock with each old device name its new one, in keys and (a Lustre target's
    server) values; the lines keep their numbers, for errors."""
    groups: dict[tuple[str, str], dict[str, Entry]] = {}
    for scope, group in lock.groups.items():
        kept: dict[str, Entry] = {}
        for entry in group.values():
            key, value = entry.key, entry.value
            if key[0] == "lustre":
                value = (renamed.get(value[0], value[0]), *value[1:])
            elif key[2] in renamed:
                key = (key[0], key[1], renamed[key[2]])
            kept[key[2]] = entry._replace(key=key, value=value)
        groups[scope] = kept
    return Lock(file=lock.file, text=lock.text, digest=lock.digest, groups=groups,
                reallocated=lock.reallocated)


def unsaid_renames(spec: ClusterSpec, lock: Lock,
                   made: Callable[[], Iterable[str] | None]) -> list[Diagnostic]:
    """Each node group renamed without a move: none of its hosts in the lock, while the lock
    holds active hosts in its racks that the plan no longer makes (``made``: every device
    the spec's plan makes, asked only when a group may be one; None when it cannot say),
    of one numbered family, at indices the group has."""
    if not lock.exists:
        return []
    places = lock.groups.get(("place", ""), {})
    per_group = spec_hosts(spec)
    hosts = set().union(*per_group)
    gone_by_rack: dict[str, list[str]] = {}
    for name, entry in places.items():
        if not entry.retired and name not in hosts and name not in lock.reallocated:
            gone_by_rack.setdefault(entry.value[0], []).append(name)
    candidates = []
    for i, (group, names) in enumerate(zip(spec.node_groups, per_group, strict=True)):
        if any(name in places for name in names):
            continue  # the lock knows the group: it is not renamed (nodes may be added)
        racks = expand(group.racks)
        gone = [name for rack in racks for name in gone_by_rack.get(rack, ())]
        if gone:
            candidates.append((i, group, gone))
    if not candidates:
        return []
    present = made()
    if present is None:
        return []
    present = set(present)
    patterns = {group.hostname for group in spec.node_groups}
    options: list[tuple[tuple[int, bool, float, str], int, NodeGroup, list[str]]] = []
    for i, group, gone in candidates:
        indices = range(group.first_index, group.first_index + group.count)
        for pattern, members in _families([n for n in gone if n not in present]).items():
            at = [name for index, name in members if index in indices]
            if at and pattern not in patterns:  # a group's own pattern: that group shrank
                same_width = pattern.count("#") == group.hostname.count("#")
                likeness = SequenceMatcher(None, pattern, group.hostname).ratio()
                options.append(((len(at), same_width, likeness, pattern), i, group, at))
    options.sort(key=lambda option: option[0], reverse=True)
    problems: list[Diagnostic] = []
    named: set[int] = set()
    taken: set[str] = set()
    for (_, _, _, pattern), i, group, held in options:
        if i in named or pattern in taken:
            continue  # each group told once, each old family given to one group
        named.add(i)
        taken.add(pattern)
        shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
        problems.append(Diagnostic(
            "LOCK-RENAME", f"node group '{group.name}' names none of the hosts the lock "
            f"holds in its racks, where {shown} ({pattern}) would be retired and "
            f"{group.count} new host(s) of '{group.hostname}' allocated anew: a rename?",
            ("node_groups", i, "hostname"),
            hint=f"if they were renamed, say so, and they keep their identities: add "
                 f"'moved: [{{from: \"{pattern}\", to: \"{group.hostname}\"}}]' to the "
                 f"spec; if they are new machines, render once without the old group and "
                 f"once with the new one"))
    return sorted(problems, key=lambda problem: problem.path)


def _families(names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """The numbered families of ``names``: the pattern that makes each (its width the
    shortest index's), and its members by index, in index order."""
    families: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for name in names:
        match = _INDEXED.fullmatch(name)
        if match is not None:
            families.setdefault((match[1] or "", match[3]), []).append((int(match[2]), name))
    found = {}
    for (head, tail), members in families.items():
        width = min(len(name) - len(head) - len(tail) for _, name in members)
        pattern = head + "#" * width + tail
        found[pattern] = sorted(member for member in members
                                if hostname(pattern, member[0]) == member[1])
    return {pattern: members for pattern, members in found.items() if members}
