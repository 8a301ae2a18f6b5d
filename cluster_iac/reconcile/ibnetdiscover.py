"""`ibnetdiscover` output (one InfiniBand fabric) against the plan's cables: infiniband.py's
verify as a reconcile source; and the GUIDs of the delivered adapters and switches, found
where the plan cables them, offered to the lock (``reconcile --accept``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter

from cluster_iac.formats.ibnetdiscover import Topology, TopologyError, parse
from cluster_iac.plan import Plan
from cluster_iac.plan.facts import NODE
from cluster_iac.reconcile.accept import Fact
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.infiniband import (
    CABLE_FIXES,
    Matching,
    Mismatch,
    agrees,
    describe,
    discovered_guids,
    fabric_of,
    match,
    rematched,
    verify,
)

KIND = "ibnetdiscover"
_CODES = {"missing": "RECONCILE-IB-MISSING", "miswired": "RECONCILE-IB-MISWIRED",
          "extra": "RECONCILE-IB-EXTRA", "unseen": "RECONCILE-IB-SWITCH-UNSEEN"}
_FIXES = {**CABLE_FIXES,
          "unseen": "power the switch on and check its management link; every cable of it "
                    "is then checked again"}


def detect(text: str) -> bool:
    """An ibnetdiscover output: a switch or adapter record."""
    return any(line.startswith(("switchguid=", "caguid=", "Switch\t", "Ca\t"))
               for line in text[:65536].splitlines())


def read(text: str) -> Topology:
    """The topology; a line not in the format is refused at its number."""
    try:
        return parse(text)
    except TopologyError as exc:
        raise ReadError(exc.line, exc.reason) from None


def host(data: Topology) -> str:
    """A discovery is of a fabric, not of a host."""
    return ""


_MATCHED: list[tuple[Plan, Discovery, str, Matching]] = []
"""The files' matches (infiniband.match) made by agree or compare, for facts, which run.py
calls next on the same files: matching a 100,000-GPU fabric's 900,000 links twice took a
quarter of reconcile's time. Kept by plan and file (a match of another plan is not taken);
facts empties the list when done, agree before it starts."""


def _match(plan: Plan, network: str, item: Discovery) -> Matching:
    """infiniband.match for the file, computed once for agree, compare and facts: also once
    for a plan compiled further than the one agree matched it with (cli/reconcile.py), when
    that plan's fabric has the same cables and devices (infiniband.rematched)."""
    for kept_plan, kept_item, kept_network, matching in _MATCHED:
        if kept_item.data is item.data and kept_network == network:
            if kept_plan is not plan:
                again = rematched(kept_plan, plan, network, matching)
                if again is None:
                    continue
                matching = again
                _MATCHED.append((plan, item, network, matching))
            return matching
    matching = match(plan, network, item.data)
    _MATCHED.append((plan, item, network, matching))
    return matching


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each file's fabric (the one whose switches it holds) against its planned cables."""
    for item in found:
        network = fabric_of(plan, item.data)
        if network is None:
            yield Finding("RECONCILE-IB-FABRIC", str(item.path), "none of the plan's "
                          "InfiniBand switches is in this discovery", "run ibnetdiscover on a "
                          "host of the fabric; switches must describe themselves by name",
                          str(item.path))
            continue
        for mismatch in verify(plan, network, item.data, _match(plan, network, item)):
            yield _finding(plan, mismatch, str(item.path))


def agree(plan: Plan, found: Sequence[Discovery]) -> bool:
    """Whether compare finds nothing in any of the files, asked of a plan compiled through
    build_fabric (sources.EARLY): the links and wiring matching reads are made by then, and
    only a difference needs a later pass (a cable's id, a device's place). The matches are
    kept for facts and compare on the same plan."""
    _MATCHED.clear()
    for item in found:
        network = fabric_of(plan, item.data)
        if network is None or not agrees(plan, network, item.data,
                                         _match(plan, network, item)):
            return False
    return True


def _finding(plan: Plan, mismatch: Mismatch, path: str) -> Finding:
    text = describe(plan, mismatch)
    where = (mismatch.planned.cable_id if mismatch.planned is not None
             else mismatch.switch or "cable")
    fix = _FIXES[mismatch.kind]
    if mismatch.kind == "miswired" and mismatch.planned is not None:
        cable = mismatch.planned
        fix = (f"move the cable to {cable.a_device} {cable.a_port} <-> {cable.b_device} "
               f"{cable.b_port} (label {cable.cable_id})")
    return Finding(_CODES[mismatch.kind], where, text, fix, path)


LOCAL = 0x0200_0000_0000_0000  # the locally administered bit of an EUI-64's first octet


def _delivered(guid: int) -> bool:
    """A GUID a vendor burned in: not zero, and not locally administered (the plan's own
    placeholders are, formats/ibnetdiscover.py: a discovery holding them is of the planned
    topology file, loaded into ibsim, not of delivered hardware)."""
    return guid != 0 and not guid & LOCAL


def _holds_delivered(discovered: Topology) -> bool:
    """Whether any GUID of the discovery is a delivered one: each fact's GUID is a node's
    or an adapter port's, so a discovery of the plan's placeholders (ibsim loading the
    exported topology) offers none, and its 300,000 found cables at 100,000 GPUs are not
    gone through again only to offer nothing. Counted at C speed: a GUID whose locally
    administered bit is clear is zero or delivered (_delivered), so there is a delivered
    one where such GUIDs outnumber the zeros."""
    guids = [*discovered.port_guids.values(), *map(_GUID_OF, discovered.nodes.values())]
    return list(map(LOCAL.__and__, guids)).count(0) > guids.count(0)


_GUID_OF = attrgetter("guid")


def facts(plan: Plan, found: Sequence[Discovery]) -> Iterator[Fact]:
    """Each host adapter's port GUID and each switch's node GUID, of the cables found where
    the plan has them (a miswired or missing cable's ends give none); locally administered
    GUIDs (the plan's placeholders) are not offered."""
    for item in found:
        network = fabric_of(plan, item.data)
        if network is None or not _holds_delivered(item.data):
            continue
        ports, nodes = discovered_guids(plan, network, item.data, _match(plan, network, item))
        for adapter, guid in ports.items():
            if not _delivered(guid):
                continue
            host, _, port = adapter.partition(" ")
            yield Fact("guid", port, host, f"0x{guid:016x}", str(item.path),
                       f"adapter {adapter}'s port GUID")
        for name, guid in nodes.items():
            if _delivered(guid) and " " not in name:  # a switch (not an adapter's node GUID)
                yield Fact("guid", NODE, name, f"0x{guid:016x}", str(item.path),
                           f"switch {name}'s node GUID")
    _MATCHED.clear()
