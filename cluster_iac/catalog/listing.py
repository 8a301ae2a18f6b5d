"""`cluster-iac catalog [KIND] [FILTER]`: the built-in catalog's entries, with each one's key
figures and source, as the spec names them (the key goes in ``platform:``, ``model:`` ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cluster_iac.base.suggest import did_you_mean
from cluster_iac.catalog import builtin_catalog


def _gpu(m: Any) -> str:
    return (f"{m.memory_gib:g} GiB, {m.max_power_w} W, NVLink {m.nvlink_gbs:g} GB/s, "
            f"{m.architecture or '-'}, GRES type {m.gres_type}")


def _cpu(m: Any) -> str:
    return f"{m.arch}, {m.cores} cores x {m.threads_per_core} threads"


def _nic(m: Any) -> str:
    return f"{m.link} {m.speed_gbps} Gb/s x {m.ports}, PCIe Gen{m.pcie_gen} x{m.pcie_width}"


def _switch(m: Any) -> str:
    return (f"{m.link} {m.ports} x {m.port_speed_gbps} Gb/s, {m.height_u}U, "
            f"{m.max_power_w} W")


def _platform(m: Any) -> str:
    gpus = f"{m.gpu_count}x {m.gpu}" if m.gpu and m.gpu_count else "no GPU"
    layout = ("PCIe layout" if m.pcie else "no PCIe layout") + (
        ", GPU sockets" if m.gpu_sockets else "")
    psus = f"{m.psus.count} PSUs {m.psus.required}+{m.psus.count - m.psus.required}" \
        if m.psus else "busbar-fed"
    return (f"{m.kind}, {gpus}, {m.sockets}x {m.cpu}, {m.memory_gib} GiB, {m.max_power_w} W, "
            f"{psus}, {m.height_u}U, {m.cooling}, NVLink {m.nvlink_domain}; {layout}")


def _shelf(m: Any) -> str:
    return f"{m.capacity_w} W, {m.psus.count} x {m.psus.rating_w} W, {m.height_u}U"


def _drive(m: Any) -> str:
    return (f"{m.kind}, {m.capacity_tb:g} TB, read {m.seq_read_mbs:g} MB/s, "
            f"write {m.seq_write_mbs:g} MB/s")


def _coolant(m: Any) -> str:
    temps = [p.temperature_c for p in m.points]
    return f"{len(temps)} points, {min(temps):g}-{max(temps):g} C"


KINDS: dict[str, Callable[[Any], str]] = {
    "gpus": _gpu, "cpus": _cpu, "nics": _nic, "switches": _switch, "platforms": _platform,
    "power_shelves": _shelf, "drives": _drive, "coolants": _coolant,
}
"""Catalog sections, each with the figures its listing shows."""


class UnknownKind(ValueError):
    """A KIND that is no catalog section; the message says the nearest."""


def kind_key(text: str) -> str:
    """'platform', 'Platforms', 'power-shelves' -> the section's key; else UnknownKind."""
    key = text.strip().lower().replace("-", "_")
    for candidate in (key, key + "s", key + "es"):
        if candidate in KINDS:
            return candidate
    hint = did_you_mean(key, KINDS) or ""
    raise UnknownKind(f"no catalog kind '{text}'; {hint}".rstrip("; "))


def listing(kind: str | None = None, pattern: str | None = None) -> str:
    """Entries of one kind (every kind when None) whose key, name or figures contain
    ``pattern`` (case-insensitive), each as 'key  name' then its figures and source."""
    catalog = builtin_catalog()
    kinds = [kind_key(kind)] if kind else list(KINDS)
    needle = (pattern or "").lower()
    out: list[str] = []
    for section in kinds:
        rows = []
        for key, model in sorted(getattr(catalog, section).items()):
            figures = KINDS[section](model)
            if needle and needle not in f"{key} {model.name} {figures}".lower():
                continue
            rows += [f"  {key}  {model.name}", f"      {figures}", f"      source: {model.source}"]
        if rows:
            out += [f"{section} ({len(rows) // 3})", *rows]
    return "\n".join(out) + "\n" if out else ""
