"""Facts a delivered cluster reports that the plan cannot know before delivery (a NIC's MAC,
a chassis serial, an InfiniBand GUID), offered to the lock by ``reconcile --accept``.

Each source module may offer facts (``facts(plan, found)``, finding.Source). Before any is
written, every one is judged against the lock and against the others: a fact contradicting
what the lock holds for the same thing (RECONCILE-FACT-CONFLICT: a part swapped since, or a
file of another host), or a value the lock or another file gives to another device
(RECONCILE-FACT-DUPLICATE), is a finding located at the lock's line, and then nothing is
written. A fact the lock already holds is not offered again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.plan.facts import Facts
from cluster_iac.plan.kept import Entry
from cluster_iac.reconcile.finding import Finding
from cluster_iac.reconcile.places import place

KINDS = ("mac", "serial", "guid")


class Fact(NamedTuple):
    """One fact of a planned device as the lock writes it: kind ('mac', 'serial', 'guid'),
    scope (the network of a MAC, '' for a serial, the port of a GUID), the device, the value
    ('7c:fe:90:12:34:56', 'SN123', '0x...'), the discovery file and what it is ('the BMC NIC')."""

    kind: str
    scope: str
    device: str
    value: str
    file: str
    what: str


def _unique_scope(fact: Fact) -> str:
    """Where a value must be unique: a MAC on its network, a serial and a GUID anywhere."""
    return fact.scope if fact.kind == "mac" else ""


def judge(plan: Plan, facts: Iterable[Fact]) -> tuple[list[Fact], list[Finding]]:
    """(the facts the lock does not hold yet, each in order once; every conflict)."""
    lock = plan.lock
    held_by: dict[tuple[str, str, str], Entry] = {}  # (kind, unique scope, value) -> entry
    for kind in KINDS:
        for line in lock.of_kind_all(kind):
            scope = line.key[1] if kind == "mac" else ""
            held_by[(kind, scope, str(line.value[0]))] = line
    new: dict[tuple[str, str, str], Fact] = {}
    owner: dict[tuple[str, str, str], Fact] = {}
    problems: list[Finding] = []
    for fact in facts:
        key = (fact.kind, fact.scope, fact.device)
        entry = lock.get(*key)
        at = f"{lock.file}:{lock.line_of(entry)}" if entry is not None else ""
        if entry is not None and str(entry.value[0]) != fact.value:
            problems.append(Finding(
                "RECONCILE-FACT-CONFLICT", f"{place(plan, fact.device)} ({at})",
                f"{fact.what} reports {fact.value} where the lock holds {entry.value[0]}",
                f"if the part was replaced, delete line {lock.line_of(entry)} of the lock, "
                "seal it (docs/lock.md) and accept again; else check the file is this "
                "device's", fact.file))
            continue
        value_key = (fact.kind, _unique_scope(fact), fact.value)
        holder = held_by.get(value_key)
        if holder is not None and holder.key != key:
            problems.append(Finding(
                "RECONCILE-FACT-DUPLICATE", f"{place(plan, fact.device)} "
                f"({lock.file}:{lock.line_of(holder)})", f"{fact.what} reports "
                f"{fact.value}, which the lock holds for {holder.key[2]}",
                "check which device the file was collected on; if the part moved, delete "
                "the old line of the lock and seal it (docs/lock.md)", fact.file))
            continue
        earlier = owner.setdefault(value_key, fact)
        if (earlier.kind, earlier.scope, earlier.device) != key:
            problems.append(Finding(
                "RECONCILE-FACT-DUPLICATE", place(plan, fact.device), f"{fact.what} reports "
                f"{fact.value}, which {earlier.file} reports for {earlier.device}",
                "check which device each file was collected on", fact.file))
            continue
        if entry is not None:
            continue  # the lock holds it already
        first = new.setdefault(key, fact)
        if first.value != fact.value:
            problems.append(Finding(
                "RECONCILE-FACT-CONFLICT", place(plan, fact.device), f"{fact.what} reports "
                f"{fact.value} where {first.file} reports {first.value}",
                "collect both again; keep the one of the delivered part", fact.file))
    return list(new.values()), problems


def accepted(plan: Plan, facts: Iterable[Fact]) -> Plan:
    """The plan with ``facts`` added to its MACs (boot), serials and GUIDs (facts): what
    lock/text.py then writes as lock lines, and nothing else changed."""
    macs = dict(plan.boot.macs) if plan.boot is not None else {}
    held = plan.facts if plan.facts is not None else Facts()
    serials, guids = dict(held.serials), dict(held.guids)
    for fact in facts:
        if fact.kind == "mac":
            macs[(fact.scope, fact.device)] = fact.value
        elif fact.kind == "serial":
            serials[fact.device] = fact.value
        else:
            guids[(fact.device, fact.scope)] = int(fact.value, 16)
    boot = replace(plan.boot, macs=macs) if plan.boot is not None else None
    return replace(plan, boot=boot, facts=Facts(serials, guids))


def by_kind(facts: Iterable[Fact]) -> Iterator[tuple[str, int]]:
    """(kind, how many) of ``facts``, in KINDS order, for a summary."""
    counts = {kind: 0 for kind in KINDS}
    for fact in facts:
        counts[fact.kind] += 1
    yield from ((kind, n) for kind, n in counts.items() if n)
