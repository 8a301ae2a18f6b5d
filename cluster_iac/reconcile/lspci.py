"""`lspci -tv` (the node's PCIe tree, each device named) against the PCIe layout of its
platform (catalog ``pcie``): is each planned GPU and NIC on the bus at its bus id, and does
each GPU reach each NIC the way the layout plans, behind one PCIe switch or not, on one
host bridge or not. nvidia-smi topo -m (pcie.py) says the same from the GPU's side; lspci
needs no driver, so it is what a site collects first on a node that arrives.

The tree, as lspci prints it (tests/data/reconcile/)::

    -+-[0000:00]-+-00.0  Advanced Micro Devices, Inc. [AMD] Device 14a4
     |           +-01.1-[01]--+-00.0  NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]
     |           |            \\-00.1  NVIDIA Corporation AD102 High Definition Audio Controller
     \\-[0000:20]-+-03.1-[21]--+-00.0  Mellanox Technologies MT2910 Family [ConnectX-7]

``[DDDD:BB]`` is a host bridge (a root complex, on one NUMA node), ``SS.F`` a device on the
bus of its parent, ``-[BB]`` or ``-[BB-BB]`` a bridge's secondary bus range; ``+-`` and
``\\-`` open a device under the branch at that column, ``--+-`` opens a branch, ``----`` one
child. A GPU and a NIC behind one PCIe switch share a bridge below the root port (nvidia-smi's
PIX or PXB); otherwise their lowest common point is the host bridge (PHB) or none. lspci does
not print the NUMA node, but a host bridge belongs to one: two devices on one host bridge the
layout puts on two NUMA nodes are a finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import takewhile
from typing import Any, NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import against_layouts, planned_devices

KIND = "lspci"
_FIRST = re.compile(r"^-(?:\+-)?\[[0-9a-f]{4,8}:[0-9a-f]{2}\]-")
_ROOT = r"\[(?P<domain>[0-9a-f]{4,8}):(?P<rbus>[0-9a-f]{2})\]"
_DEVICE = r"(?P<slot>[0-9a-f]{2}\.[0-7])(?:-\[(?P<sec>[0-9a-f]{2})(?:-[0-9a-f]{2})?\])?"
_TOKEN = re.compile(rf"(?P<conn>[-+|\\ ]*?)(?:{_ROOT}|{_DEVICE})(?=-|  |$)")
# a GPU is an NVIDIA endpoint that is none of these (HD audio, USB-C, UCSI, NVSwitch)
_NOT_GPU = re.compile(r"Audio|USB|UCSI|Serial|NVSwitch|Bridge", re.IGNORECASE)


class _Bus(NamedTuple):
    """A bus that devices hang on: its host bridge, its number, the bridges above it."""

    root: str
    bus: str
    bridges: tuple[str, ...]


class Device(NamedTuple):
    """One device of the tree: its bus id, its name ('' under plain `lspci -t`), the bus ids
    of the bridges above it (the root port first), its host bridge ('DDDD:BB') and its line."""

    busid: str
    name: str
    bridges: tuple[str, ...]
    root: str
    line: int


def detect(text: str) -> bool:
    """An `lspci -tv` output: its first line opens a host bridge ('-[0000:00]-' or
    '-+-[0000:00]-')."""
    first = next((line for line in text[:4096].splitlines() if line.strip()), "")
    return bool(_FIRST.match(first))


def read(text: str) -> dict[str, Device]:
    """Every device by bus id; a line that is not of the tree, or a branch with no parent,
    is refused at its line."""
    devices: dict[str, Device] = {}
    branches: dict[int, _Bus] = {}  # the branch opened at a column, for the lines below
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        _read_line(line, number, devices, branches)
    if not devices:
        raise ReadError(0, "no device: not an `lspci -tv` tree")
    if not any(d.name for d in devices.values()):
        raise ReadError(1, "no device is named: collect `lspci -tv` (with -v), which names "
                           "each device, not `lspci -t`")
    return devices


def _read_line(line: str, number: int, devices: dict[str, Device],
               branches: dict[int, _Bus]) -> None:
    """One line of the tree: each device on it recorded, each branch it opens noted by its
    column for the lines below ('+-' or '\\-' there)."""
    at, opened, last = 0, None, ""
    while found := _TOKEN.match(line, at):
        stem = found.group("conn").rstrip("-")
        branch = stem.endswith(("+", "\\"))
        column = found.start("conn") + len(stem) - 1
        at = found.end()
        if found.group("domain"):
            opened = _Bus(f"{found.group('domain')}:{found.group('rbus')}",
                          found.group("rbus"), ())
            continue
        if opened is not None:
            parent = opened
            if branch:
                branches[column] = opened
        elif branch and column in branches:
            parent = branches[column]
        else:
            raise ReadError(number, f"device {found.group('slot')} under no bus: not a line "
                                    f"of `lspci -tv`: {line[:80]!r}")
        last = f"{parent.root.split(':')[0]}:{parent.bus}:{found.group('slot')}"
        devices[last] = Device(last, "", parent.bridges, parent.root, number)
        sec = found.group("sec")
        opened = _Bus(parent.root, sec, (*parent.bridges, last)) if sec else None
    rest = line[at:]
    if rest.startswith("  ") and last:
        devices[last] = devices[last]._replace(name=rest.strip())
    elif rest.strip("-") or not at:
        raise ReadError(number, f"not a line of `lspci -tv`: {line[:80]!r}")


def host(data: dict[str, Device]) -> str:
    """lspci names no host: the file's name does."""
    return ""


def is_gpu(device: Device) -> bool:
    """An NVIDIA endpoint that is a GPU (not its audio or USB function, not an NVSwitch)."""
    return device.name.startswith("NVIDIA") and not _NOT_GPU.search(device.name)


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each node's tree against its platform's PCIe layout: each planned GPU and NIC on the
    bus at its bus id, then each GPU's path to each NIC and the host bridges against the
    layout's switches and NUMA nodes."""
    return against_layouts(plan, found, "lspci -tv", "HOST.lspci", "from this tree", _judge)


def _judge(nt: Any, tree: dict[str, Device], where: str, path: str) -> Iterator[Finding]:
    gpus, nics = planned_devices(nt)
    layout = f"platform {nt.platform}'s PCIe layout"
    planned = {p.busid for p in gpus + nics}
    present = [p for p in gpus if p.busid in tree and is_gpu(tree[p.busid])]
    present_nics = [p for p in nics if p.busid in tree and tree[p.busid].name]
    missing = [f"{p.name} ({p.busid})" for p in gpus + nics
               if p not in present and p not in present_nics]
    if missing:
        elsewhere = [f"{d.busid} (line {d.line})" for d in tree.values()
                     if is_gpu(d) and d.busid not in planned]
        seen = f"; GPUs at bus ids the layout does not have: {', '.join(elsewhere)}" \
            if elsewhere else ""
        yield Finding("RECONCILE-PCIE-COUNT", where, f"{', '.join(missing)} of {layout} "
                      f"{'is' if len(missing) == 1 else 'are'} not on the bus{seen}",
                      "reseat the device in the slot whose root port leads to its bus id "
                      "(its link may not have trained), or correct the layout to where it "
                      "enumerates and render again: NCCL's topology file and NCCL_IB_HCA "
                      "name it", path)
    for gpu in present:
        g = tree[gpu.busid]
        wrong = []
        for nic in present_nics:
            n = tree[nic.busid]
            shared = _switch(g, n)
            if nic.switch == gpu.switch and shared is None:
                wrong.append(f"{nic.name} ({nic.busid}) is not behind its PCIe switch (GPU "
                             f"under {_path(g)}, NIC under {_path(n)}), planned behind one")
            elif nic.switch != gpu.switch and shared is not None:
                wrong.append(f"{nic.name} ({nic.busid}) shares its PCIe switch {shared}, "
                             "planned on another switch")
            elif nic.numa != gpu.numa and g.root == n.root:
                wrong.append(f"{nic.name} ({nic.busid}) is on its host bridge {g.root}, "
                             f"planned on NUMA node {nic.numa} where the GPU is on "
                             f"{gpu.numa}")
        if wrong:
            yield Finding("RECONCILE-PCIE-AFFINITY", where, f"{gpu.name} ({gpu.busid}, "
                          f"line {g.line}): " + "; ".join(wrong), "move the adapter or GPU to the "
                          "slot the layout names (its bus id), or correct the layout to what "
                          "lspci shows and render again: NCCL's topology file and NCCL_IB_HCA "
                          "pair GPUs and NICs from it", path)


def _switch(a: Device, b: Device) -> str | None:
    """The lowest bridge below the root port that ``a`` and ``b`` both sit behind (a PCIe
    switch's port), or None: they meet at the root port or the host bridge or nowhere."""
    if a.root != b.root:
        return None
    common = list(takewhile(lambda pair: pair[0] == pair[1],
                            zip(a.bridges, b.bridges, strict=False)))
    return common[-1][0] if len(common) > 1 else None


def _path(device: Device) -> str:
    """'root port 0000:00:01.1': where a device enters the host bridge."""
    return f"root port {device.bridges[0]}" if device.bridges else f"host bridge {device.root}"

