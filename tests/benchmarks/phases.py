"""Where one CLI command's CPU goes, phase by phase, in both render processes.

    python tests/benchmarks/phases.py render SPEC -o DIR [--jobs N]   # any cluster-iac command

Runs the command in this process as `cluster-iac` does (no cyclic garbage collector), with the
pipeline's phases wrapped: the imports, each of render.py's stages (load, the lock's reading,
compile, checks, for_emit, the lock's text...), each emitter family, each sink call
(StagedTree.write_all: a family's large files are made there, as they are written), the fork
and the wait for the worker. For each phase, in the process that ran it (the parent, or the
forked emitter worker), the user and system CPU seconds and the page faults (getrusage
deltas), summed over its calls, are printed once the command has ended; then each process's
total. Phases nest (a family's write_all runs inside nothing else, the lock's reading inside
no other listed phase), so a process's total less the sum of its phases is what no phase
holds: the command line, printing; the worker's total is its rusage once reaped. Not a test.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOG = Path(tempfile.mkdtemp(prefix="phases-")) / "phases.tsv"
RENDER_PHASES = ("load_spec_file", "parse_spec", "read_lock", "compile_plan", "run_checks",
                 "for_emit", "lock_text", "write_file", "render_key", "_remember")


def usage() -> tuple[float, float, int]:
    """This process's user and system CPU seconds and page faults so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt


def record(name: str, before: tuple[float, float, int]) -> None:
    after = usage()
    with open(LOG, "a") as log:  # one line a call, appended by whichever process ran it
        log.write(f"{os.getpid()}\t{name}\t{after[0] - before[0]}\t{after[1] - before[1]}\t"
                  f"{after[2] - before[2]}\n")


def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before = usage()
        try:
            return function(*args, **kwargs)
        finally:
            record(name, before)
    return wrapper


def instrument() -> None:
    """Wrap every phase; the modules imported here are the ones a render imports."""
    import cluster_iac.emit as emit
    import cluster_iac.emit.parallel as parallel
    import cluster_iac.render as render
    import cluster_iac.write.tree as tree

    for name in RENDER_PHASES:
        setattr(render, name, timed(f"render.{name}", getattr(render, name)))
    for table in (emit.EMITTERS, emit.CHUNKED):
        for family, emitter in table.items():
            table[family] = timed(f"emit.{family}", emitter)
    tree.StagedTree.write_all = timed("write_all", tree.StagedTree.write_all)  # type: ignore
    tree.StagedTree.commit = timed("commit", tree.StagedTree.commit)  # type: ignore
    parallel.Worker.start = timed("fork", parallel.Worker.start)  # type: ignore
    parallel.Worker.finish = timed("wait for the worker", parallel.Worker.finish)  # type: ignore


def report() -> None:
    """Each process's phases, largest first, and its total."""
    rows: dict[str, dict[str, list[float]]] = {}
    for line in LOG.read_text().splitlines():
        pid, name, user, system, faults = line.split("\t")
        sums = rows.setdefault(pid, {}).setdefault(name, [0.0, 0.0, 0.0])
        for i, value in enumerate((user, system, faults)):
            sums[i] += float(value)
    for number, (pid, phases) in enumerate(rows.items()):
        print(f"{'parent' if number == 0 else 'worker'} (pid {pid})")
        for name, (user, system, faults) in sorted(phases.items(),
                                                   key=lambda kv: -kv[1][0] - kv[1][1]):
            print(f"  {name:<28} user {user:6.3f} s  system {system:6.3f} s  "
                  f"{int(faults):>8} page faults")


def main() -> None:
    gc.disable()  # as cli.run
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    sys.path.insert(0, str(ROOT))
    start = (0.0, 0.0, 0)
    from cluster_iac.cli.main import main as command

    instrument()
    record("start-up and imports", start)
    with contextlib.suppress(SystemExit):
        command(sys.argv[1:], standalone_mode=False)
    record("TOTAL", start)
    sys.stdout.flush()
    report()
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker, once it has ended
    print(f"worker TOTAL (reaped): user {reaped.ru_utime:.3f} s  system {reaped.ru_stime:.3f} s"
          f"  {reaped.ru_minflt} page faults")
    shutil.rmtree(LOG.parent)


if __name__ == "__main__":
    main()
