"""Every compute node of a spec up at once, each registered by a real slurmd of its own.

``sbatch --test-only`` places a job only on nodes that are up, so a test that asks where each
acceptance job would start needs every node of the spec registered. One slurmd a node, one
after another (slurm_harness.SlurmCluster.register), costs a sandbox start and a registration
wait per node: minutes for 127 nodes on three releases. Here all of a cluster's slurmds run in
one sandbox (one mount namespace, one private /dev, one /etc/hosts; for a root's release one
chroot) and start together; the test then waits once until every node has registered.

Each slurmd runs in a UTS namespace of its own whose host name is its node's (a sandbox
host name, like slurm_harness's private /etc/hosts): slurmd binds its listening socket to the
address of the machine's host name (CommunicationParameters=NoInAddrAny, the harness's), not
of its ``-N`` node name, so without it every slurmd of the fleet binds 127.0.0.1:SlurmdPort:
the second one fails ('Unable to bind listen port ...: Address already in use', seen on
22.05, 24.11 and 26.05 alike), and slurmctld, which sends to the node's own loopback address
(hosts_text), reaches none of them. With its node's host name each slurmd binds its node's
address, so slurm.conf's NodeName lines and SlurmdPort stay as the harness leaves them.

One more line, like slurm_harness's rewrites written to work/overrides.txt with its reason
(``fleet_rewrites``): ``SlurmdParameters=config_overrides``, since the test machine is smaller
than the nodes, and a node registered with 'Low RealMemory' would be drained and take no job.
The nodes' real hardware checks (CPU topology, GPU count, without this key) are
test_slurm_real.py's.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass

from tests.real import slurm_harness as harness

OVERRIDES = "SlurmdParameters=config_overrides"
# per registering node on top of the harness's WAIT_S: slurmctld handles the registrations
# one RPC at a time on a busy 2-core machine
WAIT_PER_NODE_S = 0.5
# a slurmd forwarding slurmctld's fan-out to another node ('forward_thread to X (addr):
# Connection refused' in 22.05, '_forward_thread: failed to X (addr): ...' in 24.11, 26.05)
REFUSED = re.compile(r"forward_thread(?: to|: failed to) (\S+) \([^)]*\): Connection refused")
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT[\d:.]+)\]")
# slurmd's first registration message, logged as its registration thread builds it:
# 'CPUs=224 Boards=1 Sockets=2 Cores=56 Threads=2 Memory=...' in 22.05-26.05. slurmd listens
# before it: 22.05 from before 'slurmd started on'; 24.11 and 26.05 (src/slurmd/slurmd/slurmd.c)
# start accepting right after they create that thread, and log 'started on' long before
REGISTERS = re.compile(r"\] CPUs=\d+ Boards=\d+ ")


@dataclass(frozen=True)
class Shape:
    """A node's faked hardware: its slurmd's CPU topology (HWLOC_SYNTHETIC), its number of
    /dev/nvidiaN stand-ins and its MIG capability minors."""

    sockets: int
    cores: int
    threads: int
    gpus: int
    caps: tuple[int, ...] = ()


def fleet_rewrites(conf: harness.SlurmConf) -> list[str]:
    """Add config_overrides to slurmctld's and slurmd's copies; return the rewrite (also
    appended to work/overrides.txt)."""
    for path in (conf.path, conf.slurmd_path):
        lines = path.read_text().splitlines()
        lines.insert(harness._first_node_line(lines), OVERRIDES)
        path.write_text("\n".join(lines) + "\n")
    overrides = [f"added {OVERRIDES} (the test machine is smaller than the nodes: a node "
                 "registered with 'Low RealMemory' would be drained)"]
    conf.overrides += overrides
    with open(conf.directory.parent / "overrides.txt", "a") as out:
        out.writelines(f"{o}\n" for o in overrides)
    return overrides


def start_fleet(cluster: harness.SlurmCluster, shapes: dict[str, Shape]
                ) -> dict[str, dict[str, str]]:
    """Start `slurmd -D -N node` for every node in ``shapes`` at once, each under its node's
    host name, in one sandbox that the cluster stops with its other daemons; wait until
    every node has registered and return each node's `scontrol show node` record. A slurmd
    that exits fails it at once, with its log."""
    if os.geteuid() != 0:
        raise harness.HarnessError("the fleet needs root: a UTS namespace per slurmd")
    work, runtime = cluster.work, cluster.runtime
    lines = ["#!/bin/sh"]
    for node, shape in shapes.items():
        (work / "spool" / node).mkdir(exist_ok=True)  # SlurmdSpoolDir=.../%n
        (work / "log" / f"slurmd-{node}.rc").unlink(missing_ok=True)
        synthetic = f"pack:{shape.sockets} core:{shape.cores} pu:{shape.threads}"
        command = harness.under_node_name(runtime, node, [
            "env", f"HWLOC_SYNTHETIC={synthetic}", runtime.tool("slurmd"), "-D", "-f",
            str(cluster.conf.slurmd_path), "-N", node])
        log = shlex.quote(str(work / "log" / f"slurmd-{node}-stdout.log"))
        rc = shlex.quote(str(work / "log" / f"slurmd-{node}.rc"))
        lines.append(f'{{ {shlex.join(command)}; echo "$?" >{rc}; }} >{log} 2>&1 &')
    lines.append("wait")
    script = work / "fleet.sh"
    script.write_text("\n".join(lines) + "\n")
    gpus = max(shape.gpus for shape in shapes.values())
    caps = tuple(sorted({c for shape in shapes.values() for c in shape.caps}))
    argv = harness._sandbox(work, runtime, ["sh", str(script)], gpus, caps)
    proc = cluster._spawn(argv, "fleet-stdout.log")
    cluster.daemons.append(proc)
    deadline = time.monotonic() + harness.WAIT_S + WAIT_PER_NODE_S * len(shapes)
    waiting = set(shapes)
    while True:
        exited = sorted(n for n in shapes if (work / "log" / f"slurmd-{n}.rc").exists())
        if exited:
            raise harness.HarnessError(f"slurmd -N {exited[0]} exited ({len(exited)} of "
                                       f"{len(shapes)}):\n" + cluster.log(f"slurmd-{exited[0]}"))
        records = {r["NodeName"]: r for r in cluster.records("nodes")}
        waiting = {n for n in waiting if records[n].get("SlurmdStartTime", "None") == "None"}
        if not waiting:
            return {node: records[node] for node in shapes}
        if proc.poll() is not None or time.monotonic() > deadline:
            first = sorted(waiting)[0]
            raise harness.HarnessError(
                f"{len(waiting)} of {len(shapes)} slurmds did not register "
                f"(fleet exited: {proc.returncode}); {first}'s log:\n"
                + cluster.log(f"slurmd-{first}"))
        time.sleep(0.5)


def fleet_log_errors(cluster: harness.SlurmCluster, daemon: str) -> list[str]:
    """error:/fatal: lines of a daemon's log file (work/log/<daemon>.log, every line stamped)
    that neither the sandbox (slurm_harness.SANDBOX_NOISE) nor the fleet's start explains.
    The fleet's one: slurmctld's first fan-out to the nodes goes out while the fleet's slurmds
    are still starting, and a slurmd that forwards it to a node whose slurmd has not started
    yet is refused. Such a line is explained only when it is stamped before that node's slurmd
    logged its first registration (REGISTERS); a refusal after it is an error. ('slurmd
    started on' would not do: 26.05 logs it before it binds, and refusals came after it.)"""
    noise = list(harness.SANDBOX_NOISE)
    if any(o.startswith("AccountingStorageType=accounting_storage/slurmdbd ->")
           for o in cluster.conf.overrides):
        noise.append(harness.NO_DBD_NOISE)
    path = cluster.work / "log" / f"{daemon}.log"
    errors = harness._errors(path.read_text(errors="replace"), noise)
    return [line for line in errors if not _before_start(cluster, line)]


def _before_start(cluster: harness.SlurmCluster, line: str) -> bool:
    refused, stamp = REFUSED.search(line), STAMP.search(line)
    if refused is None or stamp is None:
        return False
    log = cluster.work / "log" / f"slurmd-{refused.group(1)}.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    registered = [m.group(1) for m in map(STAMP.search, text.splitlines())
                  if m and REGISTERS.search(m.string)]
    return bool(registered) and stamp.group(1) < registered[0]  # one ISO format: text order is time
