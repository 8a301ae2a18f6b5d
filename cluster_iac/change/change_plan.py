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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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
    """One kind of object: the names added, changed and removed (natural order)."""

    kind: str
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


@dataclass(frozen=True)
class ChangePlan:
    """The change between two states: objects, the cables to lay and pull, and per target
    Slurm release the actions (a Lustre rewrite refused is an error for the caller)."""

    first: bool  # a first deployment: nothing was there
    deltas: tuple[Delta, ...]
    work_order: tuple[dict[str, str], ...]  # rows of ORDER: pull first, then lay
    actions: dict[str, list[Action]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return all(d.empty for d in self.deltas) and not any(self.actions.values())

    @property
    def refused(self) -> list[Action]:
        return [a for found in self.actions.values() for a in found if a.refused]


def change_plan(old_files: dict[str, str] | None, new_files: dict[str, str],
                old_lock: str | None, new_lock: str, releases: Sequence[str],
                lustre_new: bool = False) -> ChangePlan:
    """The change from ``old_files`` and ``old_lock`` (None: nothing deployed yet) to the
    new tree and lock, with its actions for each of ``releases``."""
    old = old_files or {}
    kinds_old, kinds_new = _devices(old), _devices(new_files)
    by_kind = [_diff(kind, kinds_old.get(kind, {}), kinds_new.get(kind, {}))
               for kind in ("nodes", "switches", "PDUs and other devices")]
    devices = Delta("devices", *(tuple(sorted((n for d in by_kind for n in getattr(d, what)),
                                              key=natural_key))
                                 for what in ("added", "changed", "removed")))
    cables_old, cables_new = _lines(old.get(CABLES)), _lines(new_files.get(CABLES))
    power = {k for k, line in {**cables_old, **cables_new}.items()
             if line.startswith(k + ",power,")}
    data = _diff("cables", *({k: v for k, v in rows.items() if k not in power}
                             for rows in (cables_old, cables_new)))
    cords = _diff("cords and outlets", *({k: v for k, v in rows.items() if k in power}
                                         for rows in (cables_old, cables_new)))
    slurm_old = read_slurm_conf(old.get(SLURM_CONF, ""))
    slurm_new = read_slurm_conf(new_files.get(SLURM_CONF, ""))
    deltas = (
        *by_kind, data, cords,
        _diff("addresses", _lock_lines(old_lock, "address"), _lock_lines(new_lock, "address")),
        _diff("Slurm nodes", slurm_old.nodes, slurm_new.nodes),
        _diff("Slurm partitions", slurm_old.partitions, slurm_new.partitions),
        _diff("Lustre targets", _lock_lines(old_lock, "lustre"), _lock_lines(new_lock, "lustre")),
    )
    changed_nodes = set(devices.changed) & set(slurm_new.nodes)
    found = {release: actions(old_files, new_files, release,
                              nodes_added=devices.added, nodes_removed=devices.removed,
                              nodes_changed=sorted(changed_nodes), lustre_new=lustre_new)
             for release in releases}
    order = _work_order(_header(old.get(CABLES)), cables_old,
                        _header(new_files.get(CABLES)), cables_new)
    return ChangePlan(old_files is None, deltas, order, found)


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


def _lock_lines(text: str | None, kind: str) -> dict[str, str]:
    """A lock's active lines of ``kind``, by what they are about (all but the last word)."""
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        words = line.split()
        if words and words[0] == kind:
            found[" ".join(words[:-1])] = line
    return found


def _diff(kind: str, old: Mapping[str, object], new: Mapping[str, object]) -> Delta:
    def names(keys: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(keys, key=natural_key))

    return Delta(kind, names(new.keys() - old.keys()),
                 names(k for k in new.keys() & old.keys() if new[k] != old[k]),
                 names(old.keys() - new.keys()))


def _work_order(old_header: str, old: dict[str, str], new_header: str, new: dict[str, str],
                ) -> tuple[dict[str, str], ...]:
    """Every cable to pull (gone, or changed: pulled and laid again) and to lay."""
    pull = _read(old_header, [old[k] for k in old if k not in new or new[k] != old[k]])
    lay = _read(new_header, [new[k] for k in new if k not in old or new[k] != old[k]])
    order = sorted(pull, key=lambda r: natural_key(r["cable_id"]))
    rows = [{"action": "pull", **{c: r.get(c, "") for c in ORDER[1:]}} for r in order]
    rows += [{"action": "lay", **{c: r.get(c, "") for c in ORDER[1:]}}
             for r in sorted(lay, key=lambda r: natural_key(r["cable_id"]))]
    return tuple(rows)


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
           markdown_row(("objects", "added", "changed", "removed")),
           markdown_row(("---", "---:", "---:", "---:"))]
    for d in plan.deltas:
        out.append(markdown_row((d.kind, str(len(d.added)), str(len(d.changed)),
                                 str(len(d.removed)))))
    pulls = sum(1 for r in plan.work_order if r["action"] == "pull")
    out += ["", f"Cabling work order: {len(plan.work_order) - pulls} to lay, {pulls} to pull."]
    if objects:
        for d in plan.deltas:
            for what, names in (("added", d.added), ("changed", d.changed),
                                ("removed", d.removed)):
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


def as_json(plan: ChangePlan) -> dict[str, object]:
    """The plan for machines (the CLI's --format json): version 1."""
    return {
        "version": 1, "first_deployment": plan.first,
        "objects": {d.kind: {"added": list(d.added), "changed": list(d.changed),
                             "removed": list(d.removed)} for d in plan.deltas},
        "work_order": list(plan.work_order),
        "actions": {release: [{"kind": a.kind, "hosts": a.hosts, "why": a.why,
                               "commands": list(a.commands), "causes": list(a.causes),
                               "citation": a.citation, "refused": a.refused,
                               "tested": a.tested} for a in found]
                    for release, found in plan.actions.items()},
    }
