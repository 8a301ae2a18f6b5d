"""What a change of the design does to the running cluster: the objects added, changed and
removed, the cabling work order, and what must be run to apply it, per Slurm release.

A change is read from two rendered trees and their locks (the committed state and the one the
changed spec makes), never from the specs: what the cluster has is what was rendered and
applied. Objects come from the files that list them (NetBox's devices, the cable table, the
lock's addresses and Lustre targets, slurm.conf's nodes and partitions); the actions from
change/actions.py, which knows what each file and slurm.conf key needs in each release.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cluster_iac.base.sorting import natural_key
from cluster_iac.change.actions import Action, actions
from cluster_iac.change.conf_lines import read_slurm_conf
from cluster_iac.formats.csv import csv_text
from cluster_iac.formats.markdown import markdown_row

DEVICES_FILE = re.compile(r"netbox/devices/[^/]+/[0-9]+\.csv")  # NetBox's table's parts
OTHER_ROLES = ("pdu", "power-shelf")
CABLES = "cabling/cables.csv"
SLURM_CONF = "slurm/slurm.conf"
# The work order's columns: what a crew needs to lay or pull one cable.
ORDER = ("action", "cable_id", "network", "a_row", "a_rack", "a_u", "a_device", "a_port",
         "b_row", "b_rack", "b_u", "b_device", "b_port", "medium", "length_m")


@dataclass(frozen=True)
class Delta:
    """One kind of object: the names added, changed and removed (natural order), and those
    renamed ('old -> new'; a cable: its id, whose label names a renamed device)."""

    kind: str
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed or self.renamed)


@dataclass(frozen=True)
class ChangePlan:
    """The change between two states: objects, the cables to lay and pull, and per target
    Slurm release the actions (a Lustre rewrite refused is an error for the caller)."""

    first: bool  # a first deployment: nothing was there
    deltas: tuple[Delta, ...]
    work_order: tuple[dict[str, str], ...]  # rows of ORDER: pull first, then lay
    actions: dict[str, list[Action]] = field(default_factory=dict)
    # the switch-to-switch cables the lock held that the new design moves, and why
    # (plan.link_moves, compile/fabric_links.py): the fewest it must
    moved_links: tuple[Any, ...] = ()

    @property
    def empty(self) -> bool:
        return all(d.empty for d in self.deltas) and not any(self.actions.values())

    @property
    def refused(self) -> list[Action]:
        return [a for found in self.actions.values() for a in found if a.refused]


def change_plan(old_files: dict[str, str] | None, new_files: dict[str, str],
                old_lock: str | None, new_lock: str, releases: Sequence[str],
                lustre_new: bool = False, moved_links: Sequence[Any] = (),
                differ: Collection[str] | None = None) -> ChangePlan:
    """The change from ``old_files`` and ``old_lock`` (None: nothing deployed yet) to the
    new tree and lock, with its actions for each of ``releases``; ``moved_links``, the new
    plan's link_moves (plan/wiring.py LinkMove), says which locked cables move and why.
    ``differ``, where the caller knows it (render --check's comparison, by SHA-256): every
    path whose bytes may differ between the two trees, so that no other file is read (a
    100,000-GPU tree is 317 MiB); None: every file of both trees is compared."""
    old = old_files or {}
    if differ is None or old_files is None:
        differ = set(old) | set(new_files)
    kinds_old, kinds_new = ((_devices(old), _devices(new_files))
                            if any(DEVICES_FILE.fullmatch(path) for path in differ) else ({}, {}))
    by_kind = [_diff(kind, kinds_old.get(kind, {}), kinds_new.get(kind, {}))
               for kind in ("nodes", "switches", "PDUs and other devices")]
    devices = Delta("devices", *(tuple(sorted((n for d in by_kind for n in getattr(d, what)),
                                              key=natural_key))
                                 for what in ("added", "changed", "removed")))
    moved = renames(old_lock, new_lock, devices.removed, devices.added)
    cables_old, cables_new = ((_lines(old.get(CABLES)), _lines(new_files.get(CABLES)))
                              if CABLES in differ else ({}, {}))
    power = {k for k, line in {**cables_old, **cables_new}.items()
             if line.startswith(k + ",power,")}
    relabel = _relabelled(cables_old, cables_new, moved)
    data_old, data_new = ({k: v for k, v in rows.items() if k not in power}
                          for rows in (cables_old, cables_new))
    cords_old, cords_new = ({k: v for k, v in rows.items() if k in power}
                            for rows in (cables_old, cables_new))
    data = _diff("cables", data_old, data_new, moved, relabel)
    cords = _diff("cords and outlets", cords_old, cords_new, moved, relabel)
    slurm_old = read_slurm_conf(old.get(SLURM_CONF, ""))
    slurm_new = read_slurm_conf(new_files.get(SLURM_CONF, ""))
    deltas = (
        *(_renamed(d, moved) for d in by_kind), data, cords,
        _diff("addresses", *_lock_pair(old_lock, new_lock, "address"), moved),
        _renamed(_diff("Slurm nodes", slurm_old.nodes, slurm_new.nodes), moved),
        _diff("Slurm partitions", slurm_old.partitions, slurm_new.partitions),
        _diff("Lustre targets", *_lock_pair(old_lock, new_lock, "lustre"), moved),
    )
    changed_nodes = set(devices.changed) & set(slurm_new.nodes)
    # Slurm knows a node by its name: a renamed one leaves and joins (its actions as such)
    found = {release: actions(old_files, new_files, release, differ=differ,
                              nodes_added=devices.added, nodes_removed=devices.removed,
                              nodes_changed=sorted(changed_nodes), lustre_new=lustre_new)
             for release in releases}
    order = _work_order(_header(old.get(CABLES)), cables_old,
                        _header(new_files.get(CABLES)), cables_new, relabel)
    return ChangePlan(old_files is None, deltas, order, found, tuple(moved_links))


def renames(old_lock: str | None, new_lock: str, removed: Sequence[str],
            added: Sequence[str]) -> dict[str, str]:
    """Devices renamed (the spec's ``moved``), old name -> new: a device gone from the lock
    (not even retired) whose every line, its name aside, is a line of a device new to it.
    A device removed keeps its lines as retired ones, so a removal and an addition in one
    change are never taken for a rename. Read only when a change both adds and removes
    devices."""
    if not removed or not added or not old_lock:
        return {}
    gone, fresh = set(removed), set(added)
    old_lines, old_all = _lines_of(old_lock, gone)
    new_lines, new_all = _lines_of(new_lock, fresh)
    candidates = {_signature(name, lines): name for name, lines in new_lines.items()
                  if name not in old_all}
    found: dict[str, str] = {}
    for name, lines in old_lines.items():
        new = candidates.get(_signature(name, lines))
        if new is not None and name not in new_all:
            found[name] = new
    return found


def _lines_of(text: str, wanted: set[str]) -> tuple[dict[str, list[list[str]]], set[str]]:
    """The active lines (as words) of the devices in ``wanted``, and every device the lock
    names (retired ones too)."""
    lines: dict[str, list[list[str]]] = {}
    names: set[str] = set()
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        retired = words[0] == "retired"
        body = words[1:] if retired else words
        if len(body) < 2:
            continue
        kind = body[0]
        name = body[-1] if kind == "lustre" else body[1] if kind in _NAME_FIRST or \
            len(body) < 3 else body[2]
        names.add(name)
        if not retired and name in wanted:
            lines.setdefault(name, []).append(body)
    return lines, names


# lock lines whose device is their second word (grammar.py; the others name a network or
# fabric first, and a Lustre target names its server last)
_NAME_FIRST = frozenset(("place", "serial", "outlet", "guid", "row", "zone"))


def _signature(name: str, lines: list[list[str]]) -> tuple[str, ...]:
    return tuple(sorted(" ".join("*" if w == name else w for w in words) for words in lines))


def _renamed(delta: Delta, moved: Mapping[str, str]) -> Delta:
    """``delta`` with each renamed device out of its removed and added names, as a rename."""
    pairs = [(old, new) for old, new in moved.items()
             if old in delta.removed and new in delta.added]
    if not pairs:
        return delta
    olds, news = {old for old, _ in pairs}, {new for _, new in pairs}
    return Delta(delta.kind, tuple(n for n in delta.added if n not in news), delta.changed,
                 tuple(n for n in delta.removed if n not in olds),
                 tuple(f"{old} -> {new}" for old, new in sorted(
                     pairs, key=lambda pair: natural_key(pair[0]))))


def _rename_words(line: str, moved: Mapping[str, str]) -> str:
    """``line`` with every renamed device's name (a whole cell or word) its new one."""
    return _WORD.sub(lambda m: moved.get(m.group(), m.group()), line)


_WORD = re.compile(r"[A-Za-z0-9._-]+")


def _relabelled(old: dict[str, str], new: dict[str, str], moved: Mapping[str, str]) -> set[str]:
    """Cables that stay where they are but name a renamed device: relabelled, not re-laid."""
    if not moved:
        return set()
    return {k for k in old.keys() & new.keys()
            if old[k] != new[k] and _rename_words(old[k], moved) == new[k]}


def _devices(files: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """NetBox's device rows (its parts, netbox/devices/<row>/NNN.csv) by kind, then name:
    nodes, switches (a role ending in 'switch'), and the rest (PDUs, power shelves)."""
    found: dict[str, dict[str, str]] = {}
    for path in files:
        if not DEVICES_FILE.fullmatch(path):
            continue
        for name, line in _lines(files[path]).items():
            role = line.split(",", 2)[1]
            kind = ("switches" if role.endswith("switch") else
                    "PDUs and other devices" if role in OTHER_ROLES else "nodes")
            found.setdefault(kind, {})[name] = line
    return found


def _lines(text: str | None) -> dict[str, str]:
    """A CSV file's lines by their first cell (a name or cable id: plain, never quoted),
    the header left out; none for a file that is not there. Rows are compared as text and
    only those that changed are read as CSV (a 100,000-GPU cable table has 469,250)."""
    if not text:
        return {}
    lines = text.splitlines()
    return {line.partition(",")[0]: line for line in lines[1:]}


def _header(text: str | None) -> str:
    return text.partition("\n")[0] if text else ""


def _lock_pair(old: str | None, new: str, kind: str) -> tuple[dict[str, str], dict[str, str]]:
    """Both locks' active lines of ``kind``; none read when the texts are the same (two
    passes over a 100,000-GPU lock per kind, some 0.6 s in all)."""
    if old == new:
        return {}, {}
    return _lock_lines(old, kind), _lock_lines(new, kind)


def _lock_lines(text: str | None, kind: str) -> dict[str, str]:
    """A lock's active lines of ``kind``, by what they are about (all but the last word)."""
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        words = line.split()
        if words and words[0] == kind:
            found[" ".join(words[:-1])] = line
    return found


def _diff(kind: str, old: Mapping[str, object], new: Mapping[str, object],
          moved: Mapping[str, str] | None = None, relabel: set[str] | None = None) -> Delta:
    """The names added, changed and removed; with ``moved``, a key that names a renamed
    device (a lock line's) is the same object under its new name, and the cables in
    ``relabel`` are renamed, not changed."""
    def names(keys: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(keys, key=natural_key))

    if moved and relabel is None:
        keyed = {_rename_words(k, moved): k for k in old}
        pairs = {k: keyed[k] for k in new.keys() - old.keys() if keyed.get(k, k) != k
                 and _rename_words(str(old[keyed[k]]), moved) == str(new[k])}
        gone = set(pairs.values())
        both = [k for k in new.keys() & old.keys() if new[k] != old[k]]
        held = [k for k in both if _rename_words(str(old[k]), moved) == str(new[k])]
        return Delta(kind, names(new.keys() - old.keys() - pairs.keys()),
                     names(set(both) - set(held)), names(old.keys() - new.keys() - gone),
                     tuple(f"{pairs[k]} -> {k}" for k in names(pairs)) + names(held))
    relabel = relabel or set()
    return Delta(kind, names(new.keys() - old.keys()),
                 names(k for k in new.keys() & old.keys()
                       if new[k] != old[k] and k not in relabel),
                 names(old.keys() - new.keys()), names(relabel & old.keys() & new.keys()))


def _work_order(old_header: str, old: dict[str, str], new_header: str, new: dict[str, str],
                relabel: set[str] | None = None) -> tuple[dict[str, str], ...]:
    """Every cable to pull (gone, or changed: pulled and laid again), to lay, and to
    relabel (in place, naming a renamed device: its new label, from `cluster-iac labels`)."""
    relabel = relabel or set()
    pull = _read(old_header, [old[k] for k in old if k not in relabel and (
        k not in new or new[k] != old[k])])
    lay = _read(new_header, [new[k] for k in new if k not in relabel and (
        k not in old or new[k] != old[k])])
    rows: list[dict[str, str]] = []
    for action, found in (("pull", pull), ("lay", lay),
                          ("relabel", _read(new_header, [new[k] for k in relabel]))):
        rows += [{"action": action, **{c: r.get(c, "") for c in ORDER[1:]}}
                 for r in sorted(found, key=lambda r: natural_key(r["cable_id"]))]
    return tuple(rows)


def work_totals(plan: ChangePlan) -> str:
    """The work order's totals, data cables and power cords apart, a cable pulled and laid
    again (its ends or its length changed) counted once as a re-lay, not as one of each."""
    counts: dict[str, dict[str, set[str]]] = {
        kind: {"lay": set(), "pull": set(), "relabel": set()} for kind in ("cables", "cords")}
    for row in plan.work_order:
        kind = "cords" if row["network"] == "power" else "cables"
        counts[kind][row["action"]].add(row["cable_id"])
    parts = []
    for kind, label in (("cables", "data cables"), ("cords", "power cords")):
        found = counts[kind]
        again = found["lay"] & found["pull"]
        parts.append(f"{label}: {len(found['lay'] - again)} to lay, "
                     f"{len(found['pull'] - again)} to pull, {len(again)} to re-lay "
                     f"(pulled and laid again), {len(found['relabel'])} to relabel")
    return "Cabling work order: " + "; ".join(parts) + "."


def _read(header: str, lines: list[str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("\n".join([header, *lines]) + "\n")))


def work_order_csv(plan: ChangePlan) -> str:
    return csv_text(ORDER, ([row[c] for c in ORDER] for row in plan.work_order))


def work_order_markdown(plan: ChangePlan) -> str:
    head = ("action", "label", "from (row/rack/U device port)", "to (row/rack/U device port)",
            "medium", "length m")
    lines = [markdown_row(head), markdown_row(["---"] * len(head))]
    for row in plan.work_order:
        lines.append(markdown_row((
            row["action"], row["cable_id"],
            f"{row['a_row']}/{row['a_rack']}/U{row['a_u']} {row['a_device']} {row['a_port']}",
            f"{row['b_row']}/{row['b_rack']}/U{row['b_u']} {row['b_device']} {row['b_port']}",
            row["medium"], row["length_m"])))
    return "\n".join(lines) + "\n"


def summary(plan: ChangePlan, *, objects: bool = True, limit: int = 50) -> str:
    """The plan for people (Markdown): counts per kind, the objects (at most ``limit`` names
    of each list), then each release's actions in order."""
    out = ["# Change plan" + (": a first deployment" if plan.first else ""), "",
           markdown_row(("objects", "added", "changed", "removed", "renamed")),
           markdown_row(("---", "---:", "---:", "---:", "---:"))]
    for d in plan.deltas:
        out.append(markdown_row((d.kind, str(len(d.added)), str(len(d.changed)),
                                 str(len(d.removed)), str(len(d.renamed)))))
    out += ["", work_totals(plan), *_moved_links(plan, limit)]
    if objects:
        for d in plan.deltas:
            for what, names in (("added", d.added), ("changed", d.changed),
                                ("removed", d.removed), ("renamed", d.renamed)):
                if names and not (plan.first and what == "added" and len(names) > limit):
                    shown = ", ".join(names[:limit])
                    more = f" and {len(names) - limit} more" if len(names) > limit else ""
                    out.append(f"- {d.kind} {what}: {shown}{more}")
    for release, found in plan.actions.items():
        out += ["", f"## Actions for Slurm {release}", ""]
        if not found:
            out.append("Nothing to run.")
        for n, action in enumerate(found, start=1):
            hosts = f" on {action.hosts}" if action.hosts else ""
            flag = " REFUSED" if action.refused else ""
            tested = "" if action.tested else " (not backed by a real-daemon test)"
            out.append(f"{n}. **{action.kind}**{hosts}{flag}: {action.why}{tested}")
            out += [f"   - run: `{command}`" for command in action.commands]
            causes = ", ".join(action.causes[:6])
            more = f" and {len(action.causes) - 6} more" if len(action.causes) > 6 else ""
            out.append(f"   - because: {causes}{more}")
            out.append(f"   - source: {action.citation}")
    return "\n".join(out) + "\n"


def _moved_links(plan: ChangePlan, limit: int) -> list[str]:
    """The lines on the fabric cables the lock held that the design moves: how many, and
    each (at most ``limit``) with why."""
    moved = plan.moved_links
    if not moved:
        return []
    out = ["", f"The lock held {len(moved)} switch-to-switch cable(s) the new design cannot "
               f"keep where they are; it moves these and no other (each is re-laid in the "
               f"work order, from its switch's port):"]
    out += [f"- {m.fabric} {m.switch} {m.port} to {m.peer} {m.peer_port}: {m.why}"
            for m in moved[:limit]]
    if len(moved) > limit:
        out.append(f"- and {len(moved) - limit} more")
    return out


def as_json(plan: ChangePlan) -> dict[str, object]:
    """The plan for machines (the CLI's --format json): version 1."""
    return {
        "version": 1, "first_deployment": plan.first,
        "objects": {d.kind: {"added": list(d.added), "changed": list(d.changed),
                             "removed": list(d.removed), "renamed": list(d.renamed)}
                    for d in plan.deltas},
        "work_order": list(plan.work_order),
        "actions": {release: [{"kind": a.kind, "hosts": a.hosts, "why": a.why,
                               "commands": list(a.commands), "causes": list(a.causes),
                               "citation": a.citation, "refused": a.refused,
                               "tested": a.tested} for a in found]
                    for release, found in plan.actions.items()},
        "moved_links": [m._asdict() for m in plan.moved_links],
    }
