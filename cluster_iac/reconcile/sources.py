"""SOURCES: every kind of discovery reconcile reads, one module each (a reader and a
comparison, see finding.Source). A new source is a module and one entry here."""

from __future__ import annotations

from types import ModuleType

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


def detect(text: str) -> str | None:
    """The kind of a discovery, from its text, or None."""
    return next((kind for kind, module in SOURCES.items() if module.detect(text)), None)
