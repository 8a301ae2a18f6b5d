"""Every command a user runs, measured at each size: `bench_scale.py --commands` (main there).

    python tests/benchmarks/bench_scale.py --commands                       # 100,000 GPUs
    python tests/benchmarks/bench_scale.py --commands --gpus 100000 200000 400000 700000 \\
        --where /dev/shm /var/tmp --out table.md

For each size and each folder of --where (tmpfs and the disk give different figures: on this
VM's disk, ext4 without a journal, each new file or folder costs 0.2-0.3 ms of system time in
the kernel's inode allocator (ext4 recently_deleted, walking the inodes freed in the last
minutes by every process on the disk; perf record, 29 Nov 2026), so a first render's 17,600 new
inodes cost some 4-5 s there that tmpfs does not; see cli_render in bench_scale.py), in a fresh
folder holding the generated spec (bench_scale.spec_yaml), these commands in this order, each a
process of its own as a user runs it (``python -m cluster_iac ...``, bytecode compiled first):

1. ``validate SPEC``;
2. ``render SPEC -o first``: the first render, with no lock (it writes the lock);
3. ``render SPEC -o out``: with the lock, into a fresh folder;
4. ``render SPEC -o out``: again into its own tree, nothing changed;
5. ``render SPEC -o out --check``: nothing written, exit 0 as nothing differs (the user's cache
   knows these inputs, as it does on a workstation or a CI runner that keeps its cache);
   then the same with an empty cache (``$CLUSTER_IAC_CACHE`` a new folder), as a fresh CI
   runner that keeps nothing runs it: the full path, compile, checks and every file made and
   compared (docs/ci.md);
6. ``changes SPEC -o out``: the change plan from the rendered tree to the spec (none);
7. ``labels out``: every cable's two labels as CSV, from the rendered tree's cables.csv (the
   render makes no labels file: a crew prints them, by rack or row, when it needs them);
8. ``reconcile SPEC DISCOVERY...``: the design against a full discovery of every InfiniBand
   fabric, exit 0 as nothing differs. The discovery is generated, not measured: each fabric's
   exported topology (``out/opensm/<fabric>/topology.ibnetdiscover``) rewritten into the form
   the real ibnetdiscover prints (``discovery``: vendid/devid/sysimgguid lines, each port's
   ``lid 0 4xSDR`` tail and an adapter port's ``lid 0 lmc 0``, as it prints ibsim's fabrics in
   tests/real), every cable where the plan has it.

Each is measured by wait4 on the command: CPU time (user + system, of the process and every
child it reaped: the render's second process included), wall time, and peak RSS. A render on two
processes reports each process's own peak (CLUSTER_IAC_PROCESS_STATS), and their sum is shown
(wait4 gives only the larger; the sum counts the pages the worker shares with its parent twice:
an upper bound); other commands run in one process, whose wait4 peak is shown.

The budget (issue 42): every command at most 5 s of CPU and 1 GiB at 100,000 GPUs and at most
25 s and 2 GiB at 700,000; a size between is held to the budget interpolated linearly between
those two points (a size below 100,000 to the 100,000 budget, above 700,000 to the 700,000 one).
The growth exponent of each command's CPU time is the slope of log CPU over log GPUs fitted by
least squares over every size measured (target: at most 1.05). Figures are printed as a
Markdown table, and written to --out when given. Not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]

# (GPUs, CPU seconds, peak GiB) of issue 42's budget; between the points, linear
BUDGET = ((100_000, 5.0, 1.0), (700_000, 25.0, 2.0))
TARGET_EXPONENT = 1.05

COMMANDS = (
    ("validate", ["validate", "{spec}"]),
    ("render (first, no lock)", ["render", "{spec}", "-o", "{dir}/first"]),
    ("render (lock, fresh folder)", ["render", "{spec}", "-o", "{dir}/out"]),
    ("render (again, unchanged)", ["render", "{spec}", "-o", "{dir}/out"]),
    ("render --check", ["render", "{spec}", "-o", "{dir}/out", "--check"]),
    ("render --check (no cache)", ["render", "{spec}", "-o", "{dir}/out", "--check", "{nocache}"]),
    ("changes", ["changes", "{spec}", "-o", "{dir}/out"]),
    ("labels", ["labels", "{dir}/out"]),
    ("reconcile (full discovery)", ["reconcile", "{spec}", "{discoveries}"]),
)
# argv entries that are not arguments: the discovery files go there; the command runs with an
# empty cache of its own
MARKS = ("{discoveries}", "{nocache}")

_SWITCH_PORT = re.compile(r'^(\[\d+\]\t"[SH]-[0-9a-f]+"\[\d+\](?:\([0-9a-f]+\))?)(\t\t# "[^"]*")$',
                          re.MULTILINE)
_CA_PORT = re.compile(r'^(\[1\]\([0-9a-f]+\))(\t"S-[0-9a-f]+"\[\d+\])\t\t# ("[^"]*")$',
                      re.MULTILINE)
_RECORD = re.compile(r"^(switchguid|caguid)=0x([0-9a-f]+)", re.MULTILINE)


def discovery(exported: str) -> str:
    """An exported topology as the real ibnetdiscover prints the fabric (see the docstring)."""
    text = _SWITCH_PORT.sub(lambda m: f"{m.group(1)}{' ' if '(' in m.group(1) else ''}"
                            f"{m.group(2)} lid 0 4xSDR", exported)
    text = _CA_PORT.sub(r"\1 \2\t\t# lid 0 lmc 0 \3 lid 0 4xSDR", text)
    return _RECORD.sub(r"vendid=0x0\ndevid=0x0\nsysimgguid=0x\2\n\1=0x\2", text)


def write_discoveries(folder: Path) -> list[Path]:
    """``folder``/discovered/<fabric>.ibnetdiscover from the rendered tree in out/."""
    target = folder / "discovered"
    target.mkdir(exist_ok=True)
    written = []
    for exported in sorted((folder / "out" / "opensm").glob("*/topology.ibnetdiscover")):
        path = target / f"{exported.parent.name}.ibnetdiscover"
        path.write_text(discovery(exported.read_text()))
        written.append(path)
    return written


def discoveries_written(folder: Path) -> list[Path]:
    """write_discoveries in a process of its own: the 40 MiB of text it reads and rewrites at
    100,000 GPUs would grow this process for good, and every command started after it would
    report this process's peak as its own (a child started by vfork or fork keeps its
    parent's high-water mark through exec in its rusage: 216 MiB for `labels` where its own
    peak is 33 MiB)."""
    subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_commands", str(folder)],
                   cwd=ROOT, check=True)
    return sorted((folder / "discovered").glob("*.ibnetdiscover"))


class Measured(NamedTuple):
    command: str
    gpus: int
    where: str  # the folder's file system: tmpfs, ext4...
    cpu_s: float
    wall_s: float
    peak_mib: float

    def within(self) -> bool:
        cpu, gib = budget(self.gpus)
        return self.cpu_s <= cpu and self.peak_mib <= gib * 1024


class CommandFailed(Exception):
    """A command exited non-zero: its size is reported without its later commands."""


def budget(gpus: int) -> tuple[float, float]:
    """(CPU seconds, GiB) allowed to one command at ``gpus`` GPUs."""
    (n0, c0, m0), (n1, c1, m1) = BUDGET
    share = min(1.0, max(0.0, (gpus - n0) / (n1 - n0)))
    return c0 + share * (c1 - c0), m0 + share * (m1 - m0)


def run_commands(sizes: Sequence[int], places: Sequence[Path], spec_yaml: Callable[[int], str]
                 ) -> list[Measured]:
    """Every command at every size in every place, in that order; a place's folders are
    removed after each size on tmpfs (memory), at the end of the place on a disk (ext4
    skips recently freed inodes: a removal just before a render slows it)."""
    results: list[Measured] = []
    for place in places:
        kind = fs_type(place)
        keep = tempfile.mkdtemp(prefix="bench-commands-", dir=place)
        try:
            for gpus in sizes:
                folder = Path(tempfile.mkdtemp(dir=keep))
                spec = folder / "bench.yaml"
                spec.write_text(spec_yaml(gpus))
                for name, argv in COMMANDS:
                    try:
                        line = run_one(name, argv, spec, folder, gpus, kind)
                    except CommandFailed as failed:  # the size's later commands need it
                        print(f"  {kind:>5} {gpus:>8} {failed}", file=sys.stderr)
                        break
                    print(f"  {kind:>5} {gpus:>8} {name:<28} {line.cpu_s:7.2f} s CPU "
                          f"{line.wall_s:7.2f} s wall {line.peak_mib:7.0f} MiB", file=sys.stderr)
                    results.append(line)
                if kind == "tmpfs":
                    shutil.rmtree(folder)
        finally:
            shutil.rmtree(keep)
    return results


def run_one(name: str, argv: list[str], spec: Path, folder: Path, gpus: int,
            kind: str) -> Measured:
    stats = folder / "stats.json"
    stats.unlink(missing_ok=True)
    found = discoveries_written(folder) if "{discoveries}" in argv else []
    args = [a.format(spec=spec, dir=folder) for a in argv if a not in MARKS]
    env = {**os.environ, "CLUSTER_IAC_PROCESS_STATS": str(stats)}
    if "{nocache}" in argv:  # a cache of its own, empty: what a fresh CI runner has
        env["CLUSTER_IAC_CACHE"] = tempfile.mkdtemp(prefix="cache-", dir=folder)
    args += [str(path) for path in found]
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "cluster_iac", *args], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=env)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    error = child.stderr.read().decode() if child.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise CommandFailed(f"{' '.join(args)} failed at {gpus} GPUs: {error[-2000:]}")
    peak_kib = float(usage.ru_maxrss)
    if stats.exists():  # a render: each process's own peak, summed
        report = json.loads(stats.read_text())
        peak_kib = report["parent"]["peak_rss_kib"] + sum(
            w["peak_rss_kib"] for w in report["workers"])
    return Measured(name, gpus, kind, usage.ru_utime + usage.ru_stime, wall, peak_kib / 1024)


def fs_type(path: Path) -> str:
    """The file system holding ``path`` (/proc/mounts: the longest mount point above it)."""
    real = str(path.resolve())
    best, kind = "", "?"
    for line in Path("/proc/mounts").read_text().splitlines():
        point, fs = line.split()[1:3]
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best, kind = point, fs
    return kind


def exponents(results: Sequence[Measured]) -> dict[tuple[str, str], float]:
    """(place, command) -> the least-squares slope of log CPU on log GPUs, over 2+ sizes."""
    found: dict[tuple[str, str], float] = {}
    for key in dict.fromkeys((r.where, r.command) for r in results):
        points = [(math.log(r.gpus), math.log(r.cpu_s)) for r in results
                  if (r.where, r.command) == key and r.cpu_s > 0]
        if len({x for x, _y in points}) < 2:
            continue
        mx = sum(x for x, _y in points) / len(points)
        my = sum(y for _x, y in points) / len(points)
        found[key] = (sum((x - mx) * (y - my) for x, y in points)
                      / sum((x - mx) ** 2 for x, _y in points))
    return found


def table(results: Sequence[Measured]) -> str:
    """The Markdown table of every measurement, then each command's growth exponent."""
    lines = ["| command | GPUs | on | CPU s | wall s | peak RSS MiB | budget (CPU s, GiB) "
             "| within budget |", "|---|---:|---|---:|---:|---:|---|---|"]
    for r in results:
        cpu, gib = budget(r.gpus)
        lines.append(f"| `{r.command}` | {r.gpus:,} | {r.where} | {r.cpu_s:.2f} | "
                     f"{r.wall_s:.2f} | {r.peak_mib:,.0f} | {cpu:.3g}, {gib:.3g} | "
                     f"{'yes' if r.within() else 'no'} |")
    grown = exponents(results)
    if grown:
        sizes = sorted({r.gpus for r in results})
        lines += ["", f"Growth of CPU time from {sizes[0]:,} to {sizes[-1]:,} GPUs "
                      f"(least squares over {len(sizes)} sizes; target n^{TARGET_EXPONENT}):",
                  "", "| command | on | exponent | within target |", "|---|---|---:|---|"]
        lines += [f"| `{command}` | {where} | n^{value:.2f} | "
                  f"{'yes' if value <= TARGET_EXPONENT else 'no'} |"
                  for (where, command), value in grown.items()]
    return "\n".join(lines) + "\n"


def speed_probe() -> float:
    """CPU seconds of a fixed pure-Python loop (10**7 additions in a function): this VM's
    speed per CPU second changes from hour to hour, even from minute to minute (neighbours on
    the host: on 29 Nov 2026 one run's probe read 0.42 s before and 0.53 s after), so a
    table's CPU figures are compared with another's only beside their probes."""
    started = time.process_time()
    total = 0
    for i in range(10**7):
        total += i
    return time.process_time() - started


def startup_cpu(*args: str) -> float:
    """CPU seconds (user + system, wait4) of ``python ARGS`` in a process of its own, the
    least of three runs: what every command pays before its own work (``-c "import
    cluster_iac.cli.main"``: the program's import; ``-m cluster_iac --help``: import, parse,
    the listing), so that a regression of the start-up shows beside the probe."""
    spent = []
    for _ in range(3):
        child = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL)
        _pid, _status, usage = os.wait4(child.pid, 0)
        spent.append(usage.ru_utime + usage.ru_stime)
    return min(spent)


def report(sizes: Sequence[int], places: Sequence[Path], out: Path | None,
           spec_yaml: Callable[[int], str]) -> None:
    """Measure, print the table (and write it to ``out``) with the date, machine, load, the
    speed probe before and after, and the start-up's CPU (startup_cpu)."""
    before, started, probe = os.getloadavg(), time.gmtime(), speed_probe()
    imported = startup_cpu("-c", "import cluster_iac.cli.main")
    listed = startup_cpu("-m", "cluster_iac", "--help")
    results = run_commands(sizes, places, spec_yaml)
    after, probe_after = os.getloadavg(), speed_probe()
    cpus = os.cpu_count()
    text = (f"Measured {time.strftime('%d %b %Y %H:%M', started)}-"
            f"{time.strftime('%H:%M UTC', time.gmtime())} on "
            f"{os.uname().nodename} ({cpus} CPUs), load average before {before[0]:.2f}, "
            f"after {after[0]:.2f}, at niceness {os.nice(0)}; speed probe (speed_probe) "
            f"{probe:.2f} s before, {probe_after:.2f} s after; start-up (startup_cpu, least of 3) "
            f"`import cluster_iac.cli.main` {imported:.2f} s CPU, `cluster-iac --help` "
            f"{listed:.2f} s.\n\n" + table(results))
    print(text)
    if out is not None:
        out.write_text(text)
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":  # discoveries_written's process: python -m ... FOLDER
    write_discoveries(Path(sys.argv[1]))
