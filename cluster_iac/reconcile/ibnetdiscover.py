"""`ibnetdiscover` output (one InfiniBand fabric) against the plan's cables: infiniband.py's
verify as a reconcile source."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cluster_iac.formats.ibnetdiscover import Topology, TopologyError, parse
from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.infiniband import Mismatch, describe, fabric_of, verify

KIND = "ibnetdiscover"
_CODES = {"missing": "RECONCILE-IB-MISSING", "miswired": "RECONCILE-IB-MISWIRED",
          "extra": "RECONCILE-IB-EXTRA", "unseen": "RECONCILE-IB-SWITCH-UNSEEN"}
_FIXES = {"missing": "plug in the cable by its label, both ends as planned",
          "miswired": "move the cable so that each end is in the port its label names",
          "extra": "remove the cable (the plan has none there)",
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
        for mismatch in verify(plan, network, item.data):
            yield _finding(plan, mismatch, str(item.path))


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
