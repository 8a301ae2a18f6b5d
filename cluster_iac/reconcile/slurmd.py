"""`slurmd -C` (what a node's slurmd detects) against what slurm.conf's NodeName line says.

The real output (Slurm 22.05, 24.11 and 26.05 print it alike; tests/data/reconcile/)::

    NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105
    UpTime=0-01:23:48

slurmd registers a node with less than slurm.conf says (CPUs, sockets, cores, threads,
RealMemory) as invalid and drains it ('Low RealMemory', 'Low socket*core*thread count').
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import node_type, place

KIND = "slurmd"
_LINE = re.compile(r"^NodeName=\S+(?: \w+=\S+)+$")
_TOPOLOGY = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")


def detect(text: str) -> bool:
    """A `slurmd -C` output: a line 'NodeName=... CPUs=...'."""
    return re.search(r"^NodeName=\S+ .*\bCPUs=\d+", text, re.MULTILINE) is not None


def read(text: str) -> dict[str, str]:
    """The NodeName line's keys and values (UpTime and blank lines skipped)."""
    record: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("UpTime="):
            continue
        if record or not _LINE.match(line):
            raise ReadError(number, f"not a line of `slurmd -C`'s output: {raw[:80]!r}")
        record = dict(pair.split("=", 1) for pair in line.split())
    if not record:
        raise ReadError(0, "no NodeName line")
    for key in ("CPUs", "RealMemory"):
        if not record.get(key, "").isdigit():
            raise ReadError(1, f"{key} is not a number: {record.get(key)!r}")
    return record


def host(data: dict[str, str]) -> str:
    """The node's name as slurmd knows it."""
    return data["NodeName"]


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each node's detected hardware against its NodeName line in slurm.conf."""
    for item in found:
        yield from _node(plan, item)


def _node(plan: Plan, item: Discovery) -> Iterator[Finding]:
    # imported here: the emitters' package (all 26 families, Jinja) is some 0.2 s of a
    # reconcile that reads no slurmd output (reconcile/sources.py imports every source)
    from cluster_iac.emit.slurm import hardware_keys

    nt = node_type(plan, item.host)
    where = place(plan, item.host)
    if nt is None:
        yield Finding("RECONCILE-UNKNOWN-HOST", where, "slurmd runs on a node the plan does "
                      "not have", "name the file after a planned node, or add it to the spec",
                      str(item.path))
        return
    conf: dict[str, Any] = dict(hardware_keys(plan, nt))
    detected = item.data
    differ = [f"{key}={detected[key]} (slurm.conf {conf[key]})" for key in _TOPOLOGY
              if key in detected and str(conf[key]) != detected[key]]
    if differ:
        yield Finding("RECONCILE-SLURM-CPUS", where, "slurmd detects " + ", ".join(differ),
                      f"fix the node's hardware or BIOS (SMT, cores) to match node type "
                      f"{nt.name}, or change the node type in the spec and render: slurmd "
                      f"drains a node with fewer CPUs than slurm.conf says",
                      str(item.path))
    memory, wanted = int(detected["RealMemory"]), int(conf["RealMemory"])
    installed = nt.memory_gib * 1024
    if memory < wanted or memory > installed:
        yield Finding("RECONCILE-SLURM-MEMORY", where,
                      f"this node's memory differs from slurm.conf's RealMemory: slurmd "
                      f"detects {memory} MiB, slurm.conf says RealMemory={wanted} "
                      f"(node type {nt.name}: {nt.memory_gib} GiB installed)",
                      "replace or reseat the missing DIMMs (slurmd drains it: Low RealMemory)"
                      if memory < wanted else
                      f"set node type {nt.name}'s memory to what is delivered and render",
                      str(item.path))
