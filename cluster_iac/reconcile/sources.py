"""SOURCES: every kind of discovery reconcile reads, one module each (a reader and a
comparison, see finding.Source). A new source is a module and one entry here."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from cluster_iac.compile import PASSES, Pass
from cluster_iac.compile.build_fabric import build_fabric
from cluster_iac.compile.plan_cabling import plan_cabling
from cluster_iac.reconcile import (
    ibnetdiscover,
    lldp,
    lspci,
    nvidia_smi,
    pcie,
    pdu,
    redfish,
    slurmd,
)

SOURCES: dict[str, ModuleType] = {module.KIND: module for module in (
    ibnetdiscover,
    slurmd,
    nvidia_smi,
    pcie,
    lspci,
    redfish,
    lldp,
    pdu,
)}


NEEDS: dict[str, Pass] = {
    ibnetdiscover.KIND: plan_cabling,  # the cable table, the fabrics' wiring
    slurmd.KIND: plan_cabling,  # node types, partitions; the place
    nvidia_smi.KIND: plan_cabling,  # node types, NVLink domains; the place
    pcie.KIND: plan_cabling,  # node types' PCIe layouts; the place
    lspci.KIND: plan_cabling,  # as pcie
    redfish.KIND: plan_cabling,  # the addresses, the devices
    lldp.KIND: plan_cabling,  # the cable table
    pdu.KIND: plan_cabling,  # the power cords and devices
}
"""The last compile pass whose product each source reads; the passes before it run too, in
order (compile.passes_through). Every source reads plan.devices (plan_cabling: the file's
host, run.py's host_of, and each finding's place); ibnetdiscover and lldp the cable table and
pdu the power cords, made by the same pass (which needs build_power before it, for the
cords' lengths); nvidia-smi the NVLink domains, slurmd the node types and partitions, redfish
the addresses, all made before it. None reads what a later pass makes (Slurm, NCCL, boot,
health: some 0.3 s at 100,000 GPUs), or the checks' findings, which a plan whose outcome a
render knows need not find again (cli/reconcile.py). tests/test_reconcile_passes.py holds
every source's findings to be those of the full plan."""


EARLY: dict[str, Pass] = {
    ibnetdiscover.KIND: build_fabric,  # the fabrics' links and wiring
}
"""The sources that can tell from an earlier plan whether their files agree with it (a
module's ``agree(plan, found)``), and the last pass that plan needs: matching a fabric's
discovery reads the fabrics' links and wiring, made by build_fabric; only a difference is
described by what later passes make (a cable's id from its place, a device's rack and U:
NEEDS). A discovery that agrees is judged without placing, powering or cabling the plan
(1.2 of 2.4 s at 100,000 GPUs; cli/reconcile.py)."""


def last_needed(kinds: Iterable[str] = SOURCES) -> Pass:
    """The latest, in PASSES' order, of the passes ``kinds`` need (NEEDS)."""
    return max((NEEDS[kind] for kind in kinds), key=PASSES.index)


def last_early(kinds: Iterable[str]) -> Pass | None:
    """The latest of the passes ``kinds`` need to tell whether they agree (EARLY), or None
    where one of them cannot tell from an earlier plan than NEEDS' (or there is none)."""
    kinds = list(kinds)
    if not kinds or any(kind not in EARLY for kind in kinds):
        return None
    return max((EARLY[kind] for kind in kinds), key=PASSES.index)


def detect(text: str) -> str | None:
    """The kind of a discovery, from its text, or None."""
    return next((kind for kind, module in SOURCES.items() if module.detect(text)), None)
