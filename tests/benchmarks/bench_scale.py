"""Scale benchmark: time and peak memory of each pipeline stage for N-GPU specs.

    python tests/benchmarks/bench_scale.py                 # 100,000 GPUs
    python tests/benchmarks/bench_scale.py --gpus 12500 25000 50000 100000 --stages

For each size, two runs in processes of their own, so that each peak RSS is its own: the CLI
end to end (`python -m cluster_iac render SPEC -o DIR --jobs N`, files written to an empty
folder under the first --where folder, by default the temporary one; wall time, CPU time (user
+ system, the emitter worker's included) and peak RSS), and the pipeline in-process, stage by
stage (CPU seconds of this process per stage, from "import", the program's modules, to "lock",
the lock's text a first render makes last; "emit.FAMILY" renders a family as the CLI does and
writes its files under the same --where folder, its system CPU shown beside; --costs writes
these figures into cluster_iac/emit/costs.json, which splits the families between two
processes: measure them on tmpfs, --where /dev/shm). With two processes (--jobs 2, the CLI's
default on two CPUs) the CLI's peak is the sum of each process's own peak (the CLI reports
them, CLUSTER_IAC_PROCESS_STATS): wait4 of the CLI alone gives the larger of the two, and pages
the worker shares with its parent count twice (at the fork the worker's resident set is the
parent's whole one). That sum is the headline figure, an upper bound. Beside it, "PSS MiB" is
the largest sum of the processes' proportional set sizes (each shared page counted once, split
between the processes that map it), read from /proc/PID/smaps_rollup every 10 ms while the CLI
runs: nearer what the machine really spends, but sampled, so a peak shorter than 10 ms can be
missed; and taken from a run of its own, as the sampling costs most of a core (the timed runs
are not sampled). With --runs N each size is rendered N times and the least wall, CPU and path
time (the largest summed peak) is shown. CPU time is the figure to compare on a shared machine:
wall time grows with whatever else runs, CPU time barely. "CLI path" is the CPU time along the
longest path, the parent's before the fork plus the larger of the parent's and the worker's
after it: the wall time two idle cores would take, and the figure to compare for two processes
on a busy machine. The growth exponents of the CLI's CPU and wall time from the first size to
the last are printed last.

With --commands it measures instead every command a user runs (validate, the first render, a
render with the lock into a fresh folder, a render into its own tree, render --check, changes,
labels, reconcile) at each size of --gpus, in each folder of --where, against issue 42's
budget: see tests/benchmarks/bench_commands.py.

The spec is a DGX H100 cluster (8 NDR NICs per node) on a rail-optimized Quantum-X800 (Q3400,
144-port) fabric, four nodes per rack, fabric switches in network racks, management and BMC
networks: the shape of a real 100k-GPU build. With --fabric roce the same cluster's compute
fabric is RoCE instead: eight ConnectX-7 400GbE NICs per node on Spectrum-4 SN5600 (64 x 800G)
leaves and spines, BGP unnumbered, as examples/spectrum-x-roce.yaml (every switch's FRR, AVD
and QoS files are rendered then). Not a test: timings are reported, never asserted.
The package's modules are compiled to bytecode first, as an installed package's are.
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_commands import report as commands_report  # noqa: E402

ROW_RACKS = 3125
FABRICS = {  # --fabric: the compute fabric's spec and the node type's NICs
    "infiniband": ("{technology: infiniband, design: rail-optimized, leaf_switch: q3400", ""),
    "roce": ("{technology: roce, design: rail-optimized, leaf_switch: sn5600, "
             "underlay: {bgp: unnumbered, p2p_pool: 10.240.0.0/13}",
             ", nics: [{role: compute, model: cx7-400gbe, count: 8}, "
             "{role: storage, model: cx7-200g-ib, count: 2}, "
             "{role: inband, model: eth-1g, count: 1}, {role: bmc, model: eth-1g, count: 1}]"),
}
fabric_choice = "infiniband"  # main() sets it from --fabric; the child processes get it too


def spec_yaml(gpus: int) -> str:
    fabric, nics = FABRICS[fabric_choice]
    nodes = math.ceil(gpus / 8)
    racks = math.ceil(nodes / 4)
    first_rack = range(0, racks, ROW_RACKS)
    # rows of at most ROW_RACKS racks (100,000 GPUs: one): one row of 6,250 racks (200,000
    # GPUs) routes a node's cable to its leaf past 2 km, which no 400G medium reaches. Each
    # compute row has a network row of its own beside it, for up to one 4U Q3400 per 2 of
    # its nodes over three tiers, 10 per 48U rack: one network row of them all (4,375 racks
    # at 700,000 GPUs) would itself be 2.6 km long. (The product deals each tier's switches
    # round-robin over the fabric's racks, so a leaf is not always in its nodes' row: at
    # 700,000 GPUs the longest node-leaf cable is 1,844 m, at 100,000 1,802 m.)
    net_rows = [max(1, math.ceil(min(4 * ROW_RACKS, nodes - 4 * first) / 2 / 10))
                for first in first_rack]
    net_racks = sum(net_rows)
    rows = ""
    for k, (first, count) in enumerate(zip(first_rack, net_rows, strict=True)):
        suffix = k + 1 if racks > ROW_RACKS else ""
        net_first = sum(net_rows[:k]) + 1
        service = ",\n            {names: svc1, height_u: 42, pdu: svc}" if k == 0 else ""
        rows += f"""  - name: compute{suffix}
    racks: [{{names: "r[{first + 1}-{min(racks, first + ROW_RACKS)}]", height_u: 48,
             cooling: liquid, liquid_capacity_kw: 80, max_power_kw: 80, pdu: three}}]
  - name: network{suffix}
    racks: [{{names: "net[{net_first}-{net_first + count - 1}]", height_u: 48, cooling: liquid,
             liquid_capacity_kw: 120, max_power_kw: 120, pdu: net}}{service}]
"""
    # each network wide enough for a GPU's address and a quarter more (100,000 GPUs and
    # below: /14), one after another from 10.0.0.0
    prefix = min(14, 32 - math.ceil(math.log2(gpus * 1.25)))
    step = 2 ** (16 - prefix)  # the second octet's step between two networks
    return f"""
cluster: {{name: bench, slurm_version: "23.11"}}
node_types:
  dgx: {{platform: dgx-h100{nics}}}
  head: {{platform: mgmt-1u}}
node_groups:
  - {{name: gpu, node_type: dgx, count: {nodes}, hostname: "g#####",
     racks: "r[1-{racks}]", per_rack: 4}}
  - {{name: head, role: controller, node_type: head, count: 2, hostname: "head#", racks: svc1}}
rows:
{rows}power:
  pdu_profiles:
    three: {{layout: three, voltage_v: 415, phases: 3, breaker_a: 63, circuits: 1,
            rated_100_percent: true, outlets: 36}}
    net: {{layout: three, voltage_v: 415, phases: 3, breaker_a: 63, circuits: 2,
          rated_100_percent: true, outlets: 60}}
    svc: {{layout: ab, voltage_v: 415, phases: 3, breaker_a: 32}}
fabric:
  compute: {fabric},
            racks: "net[1-{net_racks}]"}}
networks:
  management: {{cidr: 10.0.0.0/{prefix}}}
  bmc: {{cidr: 10.{step}.0.0/{prefix}}}
  ipoib: {{cidr: 10.{2 * step}.0.0/{prefix}}}
slurm:
  partitions: [{{name: batch, node_groups: [gpu], default: true, exclusive: true}}]
policy:
  levels: {{COOLING-FACILITY: ignore}}
"""


def measure(gpus: int, where: Path) -> dict[str, Any]:
    """Run every stage once in this process; CPU seconds per stage (and the system's share of
    them) and peak RSS; each family's files written under ``where``. The cyclic garbage
    collector is off, as in `cluster-iac` itself (cli.run)."""
    import gc

    gc.disable()
    imported = time.process_time()  # the program's modules, as a render imports them
    from cluster_iac.checks import run_checks
    from cluster_iac.compile import PASSES
    from cluster_iac.emit import CHUNKED, EMITTERS
    from cluster_iac.load.loader import load_spec_file
    from cluster_iac.lock.text import lock_text
    from cluster_iac.plan import Plan
    from cluster_iac.plan.model import Settings
    from cluster_iac.spec.parse import parse_spec
    from cluster_iac.write.tree import staged_tree

    timings: dict[str, float] = {"import": time.process_time() - imported}
    system: dict[str, float] = {}  # the system CPU seconds of each emit stage
    clock = time.process_time  # CPU seconds: a busy machine barely moves them
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(spec_yaml(gpus))
        start = clock()
        data, _source = load_spec_file(path)
        spec = parse_spec(data)
        timings["load+parse"] = clock() - start
    from cluster_iac.catalog import merged_catalog

    plan = Plan(cluster=spec.cluster, catalog=merged_catalog(spec.catalog),
                settings=Settings.from_spec(spec))
    from cluster_iac.base.errors import CompileError

    for compile_pass in PASSES:
        start = clock()
        try:
            plan = compile_pass(spec, plan)
        except CompileError as error:
            raise SystemExit("\n".join(d.message for d in error.diagnostics[:5])) from None
        timings[f"compile.{compile_pass.__name__}"] = clock() - start
    start = clock()
    findings = run_checks(plan)
    timings["checks"] = clock() - start
    emitters = {family: CHUNKED.get(family, emitter) for family, emitter in EMITTERS.items()}
    family_mib: dict[str, float] = {}
    # Each family's files as the CLI makes them (its large files in pieces) and written, into a
    # staging folder that is never swapped in, in the folder the CLI runs wrote into (--where):
    # on this VM's disk a new file or folder costs 0.2-0.3 ms of system time (cli_render), and
    # frr's 7,213 switch folders cost 3 s there where tmpfs takes 0.1 s.
    with tempfile.TemporaryDirectory(dir=where) as tmp, \
            staged_tree(Path(tmp) / "out") as tree:
        for family in EMITTERS:
            start, sys_start = clock(), _system_s()
            family_mib[f"emit.{family}"] = _rendered_mib(emitters[family], plan, tree)
            timings[f"emit.{family}"] = clock() - start
            system[f"emit.{family}"] = _system_s() - sys_start
    # the lock's text, which a first render makes once its files are written (render.py)
    start = clock()
    lock_text(plan, plan.lock, path.name)
    timings["lock"] = clock() - start
    cables = len(plan.cables)
    files_mib = sum(family_mib.values())
    fabric = plan.fabrics["compute"]
    return {
        "gpus": plan.gpu_count, "nodes": len(plan.nodes), "racks": len(plan.racks),
        "switches": len(plan.switches),
        "fabric": {"tiers": fabric.tiers, **fabric.switch_counts},
        "cables": cables,
        "errors": sum(1 for f in findings if f.is_error),
        "output_mib": round(files_mib, 1),
        "total_s": round(sum(timings.values()), 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "stages_s": {k: round(v, 3) for k, v in timings.items()},
        "stages_sys_s": {k: round(v, 3) for k, v in system.items()},
        "stages_mib": {k: round(v, 1) for k, v in family_mib.items()},
    }


def _system_s() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def _rendered_mib(emitter: Any, plan: Any, tree: Any) -> float:
    """Render one family as the CLI does (its large files as Chunks where it makes them so)
    and write its files into ``tree``; the MiB written."""
    files = emitter(plan)
    written = tree.write_all(files)
    return sum((tree.stage / path).stat().st_size for path, _digest in written) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, nargs="+", default=[100_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process
    parser.add_argument("--fabric", choices=sorted(FABRICS), default="infiniband",
                        help="The compute fabric's technology (default infiniband).")
    parser.add_argument("--stages", action="store_true", help="Print per-stage times.")
    parser.add_argument("--jobs", type=int, default=2, help="The CLI's --jobs (default 2).")
    parser.add_argument("--runs", type=int, default=1,
                        help="Timed CLI runs per size; the least of each figure is shown "
                             "(the issue's figures: 5).")
    parser.add_argument("--lock", action="store_true",
                        help="Time the render that reads the spec's lock (a first, untimed "
                             "render writes it), as every render after the first is.")
    parser.add_argument("--costs", action="store_true",
                        help="Write each family's CPU seconds at the largest size into "
                             "cluster_iac/emit/costs.json (how the render splits the families "
                             "between two processes).")
    parser.add_argument("--commands", action="store_true",
                        help="Measure every command a user runs at each size against the "
                             "budget (bench_commands.py) instead.")
    parser.add_argument("--where", type=Path, nargs="+",
                        default=[Path(tempfile.gettempdir())],
                        help="The folders to write in (e.g. /dev/shm and a disk folder); "
                             "default the temporary folder. With --commands each in turn; "
                             "else the first only, for the CLI runs and the stages.")
    parser.add_argument("--out", type=Path, help="With --commands: write the table here too.")
    args = parser.parse_args()
    global fabric_choice
    fabric_choice = args.fabric
    if args.one:
        print(json.dumps(measure(args.one, args.where[0])))
        return
    # Bytecode for every module first, as an installed package has it (pip compiles it): a
    # shell with PYTHONDONTWRITEBYTECODE set, or a tree just edited, would otherwise compile
    # the changed modules from source in every run (measured 0.2 s more before the fork).
    compileall.compile_dir(ROOT / "cluster_iac", quiet=1)
    if args.commands:
        commands_report(args.gpus, args.where, args.out, spec_yaml)
        return
    print(f"{'GPUs':>8} {'nodes':>7} {'switches':>8} {'cables':>8} {'tiers':>5} "
          f"{'out MiB':>7} {'CLI s':>6} {'CLI cpu':>7} {'CLI path':>8} {'CLI MiB':>7} "
          f"{'PSS MiB':>7} {'stages cpu':>10} {'peak MiB':>8}")
    timed: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory(dir=args.where[0]) as kept:  # every run's files
        clis = [(gpus, cli_runs(gpus, args, Path(kept))) for gpus in args.gpus]
    # the stages after every CLI run: each stage run removes the files it wrote (a staging
    # folder never swapped in), which would slow the next CLI run's (cli_render)
    for gpus, cli in clis:
        timed.append(report(gpus, cli, args, args.where[0]))
    if args.costs:
        write_costs(max(args.gpus), args.where[0])
    if len(timed) > 1:
        (n0, w0, c0), (n1, w1, c1) = timed[0], timed[-1]
        grow = math.log(n1 / n0)
        print(f"CLI time grows as n^{math.log(c1 / c0) / grow:.2f} (CPU), "
              f"n^{math.log(w1 / w0) / grow:.2f} (wall) from {n0} to {n1} GPUs")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def write_costs(gpus: int, where: Path) -> None:
    """emit/costs.json: each family's CPU seconds at ``gpus`` GPUs, measured now in a process
    of its own."""
    child = subprocess.run([sys.executable, __file__, "--one", str(gpus),
                            "--fabric", fabric_choice, "--where", str(where)],
                           capture_output=True, text=True, check=True)
    stages = json.loads(child.stdout)["stages_s"]
    cpu = {stage.removeprefix("emit."): seconds for stage, seconds in stages.items()
           if stage.startswith("emit.")}
    (ROOT / "cluster_iac" / "emit" / "costs.json").write_text(json.dumps(
        {"measured": f"tests/benchmarks/bench_scale.py --costs at {gpus:,} GPUs, "
                     f"{time.strftime('%d %b %Y', time.gmtime())}: CPU seconds of each "
                     f"family rendered and written as the CLI does",
         "cpu_s": dict(sorted(cpu.items()))}, indent=2) + "\n")
    print(f"wrote cluster_iac/emit/costs.json ({len(cpu)} families at {gpus} GPUs)")


def cli_runs(gpus: int, args: argparse.Namespace, folder: Path) -> CliRun:
    """``gpus`` GPUs rendered by the CLI as args say: the least of each figure (the largest
    peak), and the PSS of a sampled run of its own."""
    runs = [cli_render(gpus, args.jobs, folder, lock=args.lock)
            for _ in range(max(1, args.runs))]
    sampled = cli_render(gpus, args.jobs, folder, sample_pss=True, lock=args.lock)  # not shown
    return CliRun(min(r.seconds for r in runs), min(r.cpu_s for r in runs),
                  max(r.peak_mib for r in runs), sampled.pss_mib,
                  min(r.worker_cpu_s for r in runs), min(r.path_s for r in runs),
                  min(r.forked_s for r in runs), min(r.parent_after_s for r in runs))


def report(gpus: int, cli: CliRun, args: argparse.Namespace, where: Path,
           ) -> tuple[int, float, float]:
    """Print the line of ``gpus`` GPUs (and their stages, measured now in a process of its
    own); (GPUs, wall, CPU)."""
    child = subprocess.run([sys.executable, __file__, "--one", str(gpus),
                            "--fabric", fabric_choice, "--where", str(where)],
                           capture_output=True, text=True, check=True)
    r = json.loads(child.stdout)
    print(f"{r['gpus']:>8} {r['nodes']:>7} {r['switches']:>8} {r['cables']:>8} "
          f"{r['fabric']['tiers']:>5} {r['output_mib']:>7} {cli.seconds:>6.2f} "
          f"{cli.cpu_s:>7.2f} {cli.path_s:>8.2f} {cli.peak_mib:>7} {cli.pss_mib:>7} "
          f"{r['total_s']:>10} {r['peak_rss_mib']:>8}")
    if r["errors"]:
        print(f"         ({r['errors']} validator errors in the benchmark spec)")
    if args.stages:
        print(f"           CLI cpu {cli.cpu_s:.2f} s - stages {r['total_s']:.2f} s = "
              f"{cli.cpu_s - r['total_s']:.2f} s in neither (the interpreter's start, the "
              f"command line, the second process's copy-on-write: docs/development.md)")
        if cli.worker_cpu_s:
            print(f"           CLI cpu: parent {cli.cpu_s - cli.worker_cpu_s:.2f} s "
                  f"(before the fork {cli.forked_s:.2f} s, after it "
                  f"{cli.parent_after_s:.2f} s), worker {cli.worker_cpu_s:.2f} s")
        for stage, seconds in sorted(r["stages_s"].items(), key=lambda kv: -kv[1])[:30]:
            written = r["stages_mib"].get(stage)
            system = r["stages_sys_s"].get(stage)
            print(f"           {stage:<40} {seconds:>8.3f}"
                  + (f" {written:>7.1f} MiB, system {system:.3f} s" if written else ""))
    return gpus, cli.seconds, cli.cpu_s


class CliRun(NamedTuple):
    seconds: float  # wall
    cpu_s: float  # user + system, the worker's included
    peak_mib: int  # the sum of each process's own peak resident set
    pss_mib: int  # the largest sampled sum of the processes' proportional set sizes
    worker_cpu_s: float  # the worker's share of cpu_s (0 on one process)
    path_s: float  # CPU along the longest path: what two idle cores would take (wall)
    forked_s: float = 0.0  # the parent's CPU when it forked the worker
    parent_after_s: float = 0.0  # the parent's CPU after the fork


def cli_render(gpus: int, jobs: int, folder: Path, *, sample_pss: bool = False,
               lock: bool = False) -> CliRun:
    """`cluster-iac render` into an empty folder, measured. With ``sample_pss`` the PSS
    sampler runs beside it: reading smaps_rollup walks the page tables of both processes
    (measured 2.7-3.3 s of CPU over one 100k-GPU render, most of a core of the two), so a
    sampled run's times are not the render's own; main() times unsampled runs only. With
    ``lock`` a first render (not timed) writes the spec's lock, and the timed one reads and
    keeps it, as every render after a cluster's first does. Each run's files stay in a
    folder of its own under ``folder``, which main removes after every run: on ext4 without
    a journal (this machine's disk) the kernel skips, for each new file, the inodes freed in
    the last 60 to 360 seconds (fs/ext4/ialloc.c, recently_deleted), and a render made just
    after the previous run's 7,500 files were removed spent 0.2-0.3 ms more CPU a file (1 to
    3 s in all; a fresh folder on the same disk: 0.02 ms a file)."""
    tmp = tempfile.mkdtemp(dir=folder)
    spec = Path(tmp) / "bench.yaml"
    spec.write_text(spec_yaml(gpus))
    stats = Path(tmp) / "stats.json"
    if lock:
        subprocess.run([sys.executable, "-m", "cluster_iac", "render", str(spec), "-o",
                        str(Path(tmp) / "first")], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        size = (Path(tmp) / "bench.lock").stat().st_size
        lines = (Path(tmp) / "bench.lock").read_text().count("\n")
        print(f"lock at {gpus} GPUs: {size / 2**20:.1f} MiB, {lines} lines", file=sys.stderr)
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "cluster_iac", "render", str(spec),
                              "-o", str(Path(tmp) / "out"), "--jobs", str(jobs)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "CLUSTER_IAC_PROCESS_STATS": str(stats)})
    sampler = PssSampler(child.pid)
    if sample_pss:
        sampler.start()
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if sample_pss:
        sampler.stop.set()
        sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"cluster-iac render failed at {gpus} GPUs: "
                         f"{child.stderr.read().decode()[-2000:] if child.stderr else ''}")
    report = json.loads(stats.read_text())
    peaks = [report["parent"]["peak_rss_kib"]]
    peaks += [worker["peak_rss_kib"] for worker in report["workers"]]
    # wait4's figures include the reaped worker's CPU time; its peak is the larger one only
    cpu = usage.ru_utime + usage.ru_stime
    parent = report["parent"]["cpu_s"]
    path, forked = parent, 0.0
    for worker in report["workers"]:  # before the fork, then the longer of the two after
        forked = worker["forked_at_cpu_s"]
        path = forked + max(parent - forked, worker["cpu_s"])
    return CliRun(seconds, cpu, round(sum(peaks) / 1024), round(sampler.peak_kib / 1024),
                  sum(worker["cpu_s"] for worker in report["workers"]), path, forked,
                  parent - forked)


class PssSampler(threading.Thread):
    """The largest sum of the proportional set sizes of a process and its children, read
    every 10 ms until ``stop`` is set."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kib = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.01):
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(pid) for pid in self._family()))

    def _family(self) -> list[int]:
        try:
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            children = []
        return [self.pid, *map(int, children)]


def _pss_kib(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:  # ended meanwhile, or no such file (not Linux)
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


if __name__ == "__main__":
    main()
