"""`nvidia-smi topo -m` (how a node's GPUs and NICs reach each other over PCIe) against the
PCIe layout of its platform (catalog ``pcie``: NUMA nodes, PCIe switches, the GPUs and NICs
behind each), which NCCL's topology file and NCCL_IB_HCA are written from.

The matrix, as nvidia-smi prints it (tests/data/reconcile/)::

            GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV4     PIX     64-71   1               N/A
    NIC0    PIX     NODE     X

    NIC Legend:

      NIC0: mlx5_0

Older drivers head the NIC columns with the RDMA names themselves ('mlx5_0') and print no
NIC legend. A GPU and a NIC behind one PCIe switch are PIX (one bridge) or PXB (several,
no host bridge); on one NUMA node PHB or NODE; across the CPUs' interconnect SYS
(nvidia-smi's legend). The layout says which of the three each GPU-NIC pair must be.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import against_layouts, planned_devices

KIND = "nvidia-smi-topo"
_TAIL = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_CELL = re.compile(r"X|SYS|SOC|NODE|PHB|PXB|PIX|NV\d+")
_HEADER = re.compile(r"^\s+GPU0\b.*\bCPU Affinity\b")
_NIC_LEGEND = re.compile(r"^\s+(NIC\d+): ([A-Za-z0-9_]+)\s*$")
CLASS = {"PIX": "switch", "PXB": "switch", "PHB": "numa", "NODE": "numa", "SYS": "sys",
         "SOC": "sys"}  # SOC: SYS's name before driver 384
_SAID = {"switch": "behind one PCIe switch (PIX or PXB)", "numa": "on one NUMA node "
         "(PHB or NODE)", "sys": "across the CPUs' interconnect (SYS)"}


class Topo(NamedTuple):
    """The matrix: GPU rows in order, each NIC column's RDMA name, each (GPU, NIC name)
    cell, and each GPU's NUMA Affinity ('' where N/A or not printed)."""

    gpus: list[str]
    nics: list[str]
    cells: dict[tuple[str, str], str]
    numa: dict[str, str]


def detect(text: str) -> bool:
    """A `nvidia-smi topo -m` output: its header row."""
    return any(_HEADER.match(line) for line in text[:65536].splitlines())


def read(text: str) -> Topo:
    """The matrix; a line that is not one of its rows, a cell that is no link type, or a row
    of another width is refused at its line."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if start is None:
        raise ReadError(0, "no header row ('GPU0 ... CPU Affinity')")
    for number, line in enumerate(lines[:start], 1):
        if line.strip():
            raise ReadError(number, f"not a line of `nvidia-smi topo -m`: {line[:80]!r}")
    columns = lines[start].split("CPU Affinity")[0].split()
    if len(set(columns)) < len(columns):
        raise ReadError(start + 1, "a column is named twice")
    rows: dict[str, tuple[int, list[str]]] = {}
    legend: dict[str, str] = {}
    in_legend = False
    for number, line in enumerate(lines[start + 1:], start + 2):
        words = line.split()
        if not words:
            continue
        if line.strip() in ("Legend:", "NIC Legend:"):
            in_legend = True
        elif in_legend:
            if found := _NIC_LEGEND.match(line):
                legend[found.group(1)] = found.group(2)
        elif words[0] in columns and words[0] not in rows:
            values = words[1:len(columns) + 1]
            if len(values) < len(columns) or not all(_CELL.fullmatch(c) for c in values):
                raise ReadError(number, f"row {words[0]} is not {len(columns)} link types "
                                        "(X, NV#, PIX, PXB, PHB, NODE, SYS)")
            if not words[0].startswith("GPU") and len(words) > len(columns) + 1:
                raise ReadError(number, f"row {words[0]} has values past the matrix (only "
                                        "a GPU's row has affinities)")
            rows[words[0]] = (number, words[1:])
        else:
            raise ReadError(number, f"not a row of the matrix: {line[:80]!r}")
    gpus = [c for c in columns if re.fullmatch(r"GPU\d+", c)]
    missing = [c for c in gpus if c not in rows]
    if missing:
        raise ReadError(start + 1, f"no row for {', '.join(missing)}")
    nics = [c for c in columns if c not in gpus]
    names = {c: legend.get(c, c) for c in nics}
    unnamed = [c for c in nics if re.fullmatch(r"NIC\d+", names[c])]
    if unnamed:
        raise ReadError(start + 1, f"{', '.join(unnamed)} not named: the 'NIC Legend' "
                                   "section is cut off")
    cells = {(gpu, names[nic]): rows[gpu][1][columns.index(nic)] for gpu in gpus
             for nic in nics}
    numa = {gpu: _numa(rows[gpu], len(columns)) for gpu in gpus}
    return Topo(gpus, [names[c] for c in nics], cells, numa)


def _numa(row: tuple[int, list[str]], width: int) -> str:
    """A GPU row's NUMA Affinity: the column after CPU Affinity, '' where absent or N/A."""
    number, words = row
    tail = words[width:]
    if len(tail) > len(_TAIL):
        raise ReadError(number, f"{len(tail)} values after the matrix; at most "
                                f"{len(_TAIL)} ({', '.join(_TAIL)})")
    value = tail[1] if len(tail) > 1 else ""
    return value if value.isdigit() else ""


def host(data: Topo) -> str:
    """nvidia-smi names no host: the file's name does."""
    return ""


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each node's matrix against its platform's PCIe layout: the GPUs and NICs counted,
    then each GPU's link to each NIC of the layout, and its NUMA node."""
    return against_layouts(plan, found, "nvidia-smi topo -m", "HOST.topo",
                           "from lspci and this matrix", _judge)


def _judge(nt: Any, topo: Topo, where: str, path: str) -> Iterator[Finding]:
    planned_gpus, planned_nics = planned_devices(nt)
    gpus = {p.name: p for p in planned_gpus}
    nics = {p.name: p for p in planned_nics if p.named}  # the matrix names NICs
    layout = f"platform {nt.platform}'s PCIe layout"
    if len(topo.gpus) != len(gpus):
        yield Finding("RECONCILE-PCIE-COUNT", where, f"nvidia-smi topo -m shows "
                      f"{len(topo.gpus)} GPUs where {layout} has {len(gpus)}",
                      "reseat or replace the missing GPU (lspci lists what the bus holds), "
                      "or correct the layout", path)
    absent = [name for name in nics if name not in topo.nics]
    if absent:
        yield Finding("RECONCILE-PCIE-COUNT", where, f"NIC(s) {', '.join(absent)} of {layout} "
                      "are not in the matrix", "reseat the adapter or load its driver "
                      "(`ibdev2netdev` lists the RDMA names); if it enumerates under another "
                      "name, correct the layout: NCCL_IB_HCA and the NCCL topology file name "
                      "it", path)
    for gpu in topo.gpus:
        if gpu not in gpus:
            continue
        at = gpus[gpu]
        wrong = []
        for name, nic in nics.items():
            cell = topo.cells.get((gpu, name))
            if cell is None or cell not in CLASS:
                continue
            planned = ("switch" if nic.switch == at.switch else
                       "numa" if nic.numa == at.numa else "sys")
            if CLASS[cell] != planned:
                wrong.append(f"{name} ({nic.busid}) is {cell}, planned {_SAID[planned]}")
        said = topo.numa.get(gpu, "")
        if said and int(said) != at.numa:
            wrong.append(f"its NUMA Affinity is {said}, planned {at.numa}")
        if wrong:
            yield Finding("RECONCILE-PCIE-AFFINITY", where, f"{gpu} ({at.busid}): "
                          + "; ".join(wrong), "move the adapter or GPU to the slot the layout "
                          "names (its bus id), or correct the layout to what lspci shows and "
                          "render again: NCCL's topology file and NCCL_IB_HCA pair GPUs and "
                          "NICs from it", path)
