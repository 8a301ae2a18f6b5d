"""Stand-in device tools for the generated health check, and a slurmd that runs it.

The program sets PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:... itself (slurmd gives it
no environment but SLURMD_NODENAME), so the stand-ins go in a directory bind-mounted over
/usr/local/bin in the daemon's mount namespace: nvidia-smi, ibstat and findmnt print what a
node of the type would print, from state files the test writes per node (a GPU missing, a
port down, ECC errors). A meminfo file bind-mounted over /proc/meminfo gives the node's
memory. Nothing outside the namespace changes.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness

# nvidia-smi --query-gpu=index,name,ecc.errors.uncorrected.volatile.total
#            --format=csv,noheader,nounits prints one line per GPU: "0, NVIDIA H100 80GB HBM3, 0"
NVIDIA_SMI = """#!/bin/sh
state=/usr/local/bin/state/${SLURMD_NODENAME:-node}
date +%s.%N >>"$state.ran"
gpus=$(cat "$state.gpus" 2>/dev/null || echo @GPUS@)
model=$(cat "$state.model" 2>/dev/null || echo @MODEL@)
ecc=$(cat "$state.ecc" 2>/dev/null || echo 0)
[ -e "$state.hang" ] && sleep 600
i=0
while [ "$i" -lt "$gpus" ]; do
    printf '%s, %s, %s\\n' "$i" "$model" "$ecc"
    i=$((i + 1))
done
"""
# ibstat: one CA per port, as infiniband-diags prints it (tab-indented)
IBSTAT = """#!/bin/sh
state=/usr/local/bin/state/${SLURMD_NODENAME:-node}
ports=$(cat "$state.ports" 2>/dev/null || echo @PORTS@)
rate=$(cat "$state.rate" 2>/dev/null || echo @RATE@)
i=0
while [ "$i" -lt "$ports" ]; do
    printf "CA 'mlx5_%s'\\n\\tCA type: MT4129\\n\\tNumber of ports: 1\\n" "$i"
    printf '\\tFirmware version: 28.39.1002\\n\\tHardware version: 0\\n'
    printf '\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tPhysical state: LinkUp\\n'
    printf '\\t\\tRate: %s\\n\\t\\tBase lid: %s\\n\\t\\tLMC: 0\\n\\t\\tSM lid: 1\\n' "$rate" "$i"
    printf '\\t\\tLink layer: @LAYER@\\n'
    i=$((i + 1))
done
"""
# findmnt --noheadings --types lustre --mountpoint M: a line and 0 when mounted, else 1
FINDMNT = """#!/bin/sh
state=/usr/local/bin/state/${SLURMD_NODENAME:-node}
[ -e "$state.nolustre" ] && exit 1
echo @MOUNT@' 10.0.0.1@o2ib:/fs lustre rw'
"""


@dataclass(frozen=True)
class NodeSpec:
    """What the stand-ins report by default: the node as the plan describes it."""

    gpus: int
    gpu_model: str
    ports: int
    rate: int
    layer: str
    lustre: str | None
    memory_kib: int


def install_tools(directory: Path, node: NodeSpec) -> Path:
    """The stand-in tools in ``directory`` (to be mounted over /usr/local/bin)."""
    (directory / "state").mkdir(parents=True, exist_ok=True)
    words = {"@GPUS@": str(node.gpus), "@MODEL@": shlex.quote(node.gpu_model),
             "@PORTS@": str(node.ports), "@RATE@": str(node.rate), "@LAYER@": node.layer,
             "@MOUNT@": shlex.quote(node.lustre or "")}
    tools = {"nvidia-smi": NVIDIA_SMI, "ibstat": IBSTAT}
    if node.lustre:
        tools["findmnt"] = FINDMNT
    for name, text in tools.items():
        for word, value in words.items():
            text = text.replace(word, value)
        path = directory / name
        path.write_text(text)
        path.chmod(0o755)
    return directory


def meminfo(path: Path, kib: int) -> Path:
    path.write_text(f"MemTotal:       {kib} kB\nMemFree:        {kib // 2} kB\n")
    return path


def set_state(tools: Path, node: str, **faults: object) -> None:
    """Per-node faults the stand-ins report: gpus=7, ecc=2, ports=0, rate=100, hang=True,
    nolustre=True; None removes one."""
    for key, value in faults.items():
        path = tools / "state" / f"{node}.{key}"
        if value is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(f"{'' if value is True else value}\n")


class Slurmd:
    """`slurmd -D -N node` in the sandbox with the stand-ins, stopped by ``stop``."""

    def __init__(self, box: ah.Sandbox, node: str, tools: Path, memory: Path, gpus: int,
                 topology: tuple[int, int, int], program: Path):
        self.box, self.node = box, node
        (box.work / "spool" / node).mkdir(exist_ok=True)
        sockets, cores, threads = topology
        env = {**box.env(), "SLURM_CONF": "/etc/slurm/slurm.conf",
               "HWLOC_SYNTHETIC": f"pack:{sockets} core:{cores} pu:{threads}"}
        # the node type's program where slurm.conf's HealthCheckProgram names it
        mounts = [(tools, "/usr/local/bin"), (memory, "/proc/meminfo"),
                  (program, "/etc/slurm/healthcheck.sh")]
        self.proc = box.spawn([box.tool("slurmd"), "-D", "-N", node],
                              f"slurmd-{node}-stdout.log", mounts=mounts, env=env,
                              gpus=gpus)

    def stop(self) -> None:
        harness._stop(self.proc)


def wait_for(cluster: harness.SlurmCluster, node: str,
             predicate: Callable[[dict[str, str]], bool], what: str,
             daemon: Slurmd | None = None, wait_s: float = 60.0) -> dict[str, str]:
    """Poll `scontrol show node` until predicate(record) holds."""
    deadline = time.monotonic() + wait_s
    record: dict[str, str] = {}
    while time.monotonic() < deadline:
        record = cluster.node(node)
        if predicate(record):
            return record
        if daemon is not None and daemon.proc.poll() is not None:
            break
        time.sleep(0.25)
    raise harness.HarnessError(f"{node}: {what} did not happen; last record {record}\n"
                               + cluster.log(f"slurmd-{node}"))


def registered(record: dict[str, str]) -> bool:
    return record.get("SlurmdStartTime", "None") != "None"
