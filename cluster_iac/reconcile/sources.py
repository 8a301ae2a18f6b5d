"""SOURCES: every kind of discovery reconcile reads, one module each (a reader and a
comparison, see finding.Source). A new source is a module and one entry here."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from cluster_iac.compile import PASSES, Pass
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


def last_needed(kinds: Iterable[str] = SOURCES) -> Pass:
    """The latest, in PASSES' order, of the passes ``kinds`` need (NEEDS)."""
    return max((NEEDS[kind] for kind in kinds), key=PASSES.index)


def detect(text: str) -> str | None:
    """The kind of a discovery, from its text, or None."""
    return next((kind for kind, module in SOURCES.items() if module.detect(text)), None)
