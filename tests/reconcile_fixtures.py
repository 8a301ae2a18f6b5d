"""Discovery files for reconcile tests, made from the real outputs in tests/data/reconcile/
(their form kept, their values set to a planned node's or planted)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from cluster_iac.emit.slurm import hardware_keys
from cluster_iac.plan import Plan
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "reconcile"
RELEASES = ("22.05", "24.11", "26.05")


def slurmd_text(plan: Plan, host: str, release: str = "22.05", **changed: int) -> str:
    """`slurmd -C` of ``release`` as it prints it, saying what slurm.conf says of ``host``
    (RealMemory: the installed memory, as slurmd reports it), then ``changed``."""
    nt = plan.node_types[next(n.node_type for n in plan.nodes if n.hostname == host)]
    values = {k: str(v) for k, v in hardware_keys(plan, nt)
              if k in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
                       "ThreadsPerCore")}
    values["RealMemory"] = str(nt.memory_gib * 1024 - 1024)
    values.update({k: str(v) for k, v in changed.items()})
    text = (DATA / f"slurmd-C-{release}.txt").read_text()
    text = text.replace("NodeName=vm", f"NodeName={host}")
    for key, value in values.items():
        text = re.sub(rf"\b{key}=\d+", f"{key}={value}", text)
    return text


def nvidia_smi_text(product: str, gpus: int, cluster_uuid: str = "N/A",
                    clique: str = "N/A") -> str:
    """The 575 driver's `nvidia-smi -q -x` excerpt with ``gpus`` GPUs of ``product`` and
    that NVLink fabric identity."""
    text = (DATA / "nvidia-smi-q-x-575-excerpt.xml").read_text()
    start, end = text.index("\t<gpu "), text.index("</nvidia_smi_log>")
    block = text[start:end]
    block = block.replace("NVIDIA GeForce RTX 4070 Laptop GPU", product)
    block = block.replace("<cliqueId>N/A", f"<cliqueId>{clique}")
    block = block.replace("<clusterUuid>N/A", f"<clusterUuid>{cluster_uuid}")
    body = "".join(block.replace('"00000000:01:00.0"', f'"00000000:{i:02X}:00.0"')
                   for i in range(gpus))
    text = text.replace("<attached_gpus>1<", f"<attached_gpus>{gpus}<")
    return text[:start] + body + text[end:]


def redfish_system(sockets: int, memory_gib: int, hostname: str = "web483") -> str:
    """DMTF's public-rackmount1 ComputerSystem with the CPU count and memory set."""
    data = json.loads((DATA / "redfish-system-public-rackmount1.json").read_text())
    data["ProcessorSummary"]["Count"] = sockets
    data["MemorySummary"]["TotalSystemMemoryGiB"] = memory_gib
    data["HostName"] = hostname
    return json.dumps(data, indent=4)


def redfish_power(supplies: int, watts: int) -> str:
    """DMTF's public-rackmount1 Power with its one supply repeated ``supplies`` times."""
    data = json.loads((DATA / "redfish-power-public-rackmount1.json").read_text())
    one = data["PowerSupplies"][0]
    data["PowerSupplies"] = []
    for i in range(supplies):
        psu = copy.deepcopy(one)
        psu["MemberId"] = str(i)
        psu["PowerCapacityWatts"] = watts
        data["PowerSupplies"].append(psu)
    return json.dumps(data, indent=4)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path
