"""Where the plan puts a thing, said the way a crew finds it: a device's rack and U, a node
and its type, the host a discovery file is about."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.plan.nccl import layout_describes_nics
from cluster_iac.plan.physical import Device
from cluster_iac.reconcile.finding import Discovery, Finding


@lru_cache(maxsize=4)
def devices(plan: Plan) -> dict[str, Device]:
    """The plan's devices by name, made once per plan (every finding's place asks)."""
    return {d.name: d for d in plan.devices}


def device(plan: Plan, name: str) -> Device | None:
    """The planned device named ``name``, or None."""
    return devices(plan).get(name)


def place(plan: Plan, name: str) -> str:
    """'gb-001 (rack nvl1 U05)': a device and where the plan racks it."""
    found = device(plan, name)
    if found is None:
        return f"{name} (not in the plan)"
    return f"{name} (rack {found.rack} {found.position or '-'})"


def node_type(plan: Plan, host: str) -> Any | None:
    """The NodeTypePlan of a planned node, or None."""
    node = _nodes(plan).get(host)
    return None if node is None else plan.node_types[node.node_type]


@lru_cache(maxsize=4)
def _nodes(plan: Plan) -> dict[str, Any]:
    return {n.hostname: n for n in plan.nodes}


def host_of(plan: Plan, path: Path, named: str = "") -> str:
    """The host a discovery file is about: the first dot-separated part of its file name
    when that is a planned device ('gb-001.nvidia-smi.xml'), else the name the file itself
    gives (``named``: slurmd's NodeName, Redfish's HostName), else the file name's part."""
    stem = path.name.split(".", 1)[0]
    if device(plan, stem) is not None or not named:
        return stem
    return named


def against_layouts(plan: Plan, found: Sequence[Discovery], ran: str, named: str,
                    layout_from: str,
                    judge: Callable[[Any, Any, str, str], Iterator[Finding]]
                    ) -> Iterator[Finding]:
    """Each node's PCIe discovery (``ran``: the command; ``named``: the file name it is
    known by, 'HOST.topo') judged against its platform's PCIe layout by ``judge(node type,
    data, place, path)``; a node the plan lacks, or whose platform has no layout (which
    ``layout_from`` says how to write), a finding instead."""
    for item in found:
        nt = node_type(plan, item.host)
        where, path = place(plan, item.host), str(item.path)
        if nt is None:
            yield Finding("RECONCILE-UNKNOWN-HOST", where, f"{ran} ran on a node the plan "
                          "does not have", f"name the file after a planned node ('{named}')",
                          path)
        elif nt.pcie is None:
            yield Finding("RECONCILE-PCIE-LAYOUT", where, f"platform {nt.platform} of node "
                          f"type {nt.name} has no PCIe layout to compare the "
                          f"{ran.split()[0]} output with",
                          f"give the platform a pcie layout (catalog.platforms, {layout_from}) "
                          "or leave the file out", path)
        else:
            yield from judge(nt, item.data, where, path)


class Planned(NamedTuple):
    """A device of a PCIe layout: its name (GPU3, mlx5_0; NICn where the layout names none),
    NUMA node, switch number (in layout order), bus id, and whether the layout names it."""

    name: str
    numa: int
    switch: int
    busid: str
    named: bool = True


def planned_devices(nt: Any) -> tuple[list[Planned], list[Planned]]:
    """A node type's PCIe layout: its GPUs and its NICs, the NICs only where the layout
    describes the node type's compute NICs (plan/nccl.py layout_describes_nics)."""
    gpus: list[Planned] = []
    nics: list[Planned] = []
    switch = 0
    for numa in nt.pcie.numa_nodes:
        for sw in numa.switches:
            switch += 1
            for dev in sw.devices:
                if dev.kind == "gpu":
                    gpus.append(Planned(f"GPU{dev.index}", numa.numaid, switch, dev.busid))
                else:
                    nics.append(Planned(dev.name or f"NIC{dev.index}", numa.numaid, switch,
                                        dev.busid, bool(dev.name)))
    return gpus, nics if layout_describes_nics(nt) else []
