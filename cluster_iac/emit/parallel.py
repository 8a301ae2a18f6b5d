"""Emitting on two cores: a forked worker renders a share of the emitter families.

The plan is built and checked once; ``os.fork`` gives the worker the same plan without
copying it (copy-on-write), and the parent renders the other families meanwhile. Each process
hands each family's files to the same ``sink`` as it makes them: when rendering into a folder
the sink writes them into the render's staging folder (writer.StagedTree) and answers their
SHA-256s, so only those small answers cross the pipe back and no process holds another's
text. Emitters read only the plan, so each file is byte-for-byte what the serial path makes
(tests/test_parallel_emit.py). The parent alone swaps the staged tree in, after the worker
has succeeded, so a failed worker leaves nothing written.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TypeVar, cast

from cluster_iac.plan import Plan

Emitter = Callable[[Plan], dict[str, str]]
Made = TypeVar("Made")
Sink = Callable[[dict[str, str]], Made]
"""What becomes of one family's files (path -> text) in the process that rendered them; its
answer must pickle, as the worker's answers come back through a pipe."""


class EmitWorkerError(RuntimeError):
    """The worker died or failed in a way that cannot be re-raised as it was."""


@dataclass(frozen=True)
class WorkerUsage:
    """The worker's own peak resident set and CPU seconds (os.wait4), for the benchmark."""

    peak_rss_kib: int
    cpu_s: float


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def split(families: dict[str, float], together: Iterable[Collection[str]] = (),
          ) -> tuple[list[str], list[str]]:
    """(parent's, worker's) families: heaviest first, each to the lighter share; the families
    of each ``together`` group count as one and go to the same share."""
    units: list[list[str]] = [sorted(group) for group in together]
    grouped = {family for unit in units for family in unit}
    units += [[family] for family in families if family not in grouped]
    cost = {tuple(unit): sum(families.get(f, 0.0) for f in unit) for unit in units}
    shares: tuple[list[str], list[str]] = ([], [])
    loads = [0.0, 0.0]
    for unit in sorted(cost, key=lambda u: (-cost[u], u)):
        lighter = 0 if loads[0] <= loads[1] else 1
        shares[lighter].extend(unit)
        loads[lighter] += cost[unit]
    return shares


def render_two(plan: Plan, emitters: dict[str, Emitter], worker_families: Iterable[str],
               sink: Sink[Made]) -> tuple[dict[str, Made], WorkerUsage]:
    """Family -> ``sink`` of its files, every family rendered once: ``worker_families`` in a
    forked worker, the rest here. An emitter's exception is raised here as the serial path
    raises it; a worker that dies is EmitWorkerError."""
    theirs = [f for f in emitters if f in set(worker_families)]
    ours = [f for f in emitters if f not in theirs]
    reader, writer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the worker: render, send, and end without running any cleanup
        os.close(reader)
        _worker(plan, emitters, theirs, sink, writer, parent)
    os.close(writer)
    try:
        made = {family: sink(emitters[family](plan)) for family in ours}
        with os.fdopen(reader, "rb") as pipe:
            outcome = _receive(pipe)
    except BaseException:
        _stop(pid)
        raise
    _pid, status, usage = os.wait4(pid, 0)
    if isinstance(outcome, BaseException):
        raise outcome
    if outcome is None or os.waitstatus_to_exitcode(status) != 0:
        raise EmitWorkerError(f"the emitter worker (pid {pid}) ended with status "
                              f"{os.waitstatus_to_exitcode(status)} before sending its files")
    made.update(cast(dict[str, Made], outcome))
    return made, WorkerUsage(usage.ru_maxrss, usage.ru_utime + usage.ru_stime)


def _worker(plan: Plan, emitters: dict[str, Emitter], families: list[str], sink: Sink[Made],
            fd: int, parent: int) -> None:
    code = 0
    try:
        # Every object the worker inherited moves to the collector's permanent generation (one
        # splice of its lists), so a collection here never walks, or writes into, the parent's
        # pages. The CLI runs without the collector anyway (cli.run); library callers may not.
        gc.freeze()
        _die_with(parent)
        try:
            payload: object = {f: sink(emitters[f](plan)) for f in families}
        except BaseException as exc:  # sent to the parent, which raises it
            payload = _picklable(exc)
        with os.fdopen(fd, "wb") as pipe:
            pickle.dump(payload, pipe, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # the pipe itself failed: the parent sees no payload
        code = 1
    finally:
        os._exit(code)


def _die_with(parent: int) -> None:
    """The worker is killed when the parent dies (a render killed mid-way leaves no worker
    behind): Linux's PR_SET_PDEATHSIG; elsewhere it ends at its next write to the pipe."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # an exception that cannot cross: its traceback as text
        text = "".join(traceback.format_exception(exc))
        return EmitWorkerError(f"an emitter failed in the worker:\n{text}")
    return exc


def _receive(pipe: object) -> object:
    try:
        return pickle.load(pipe)  # type: ignore[arg-type]
    except (EOFError, pickle.UnpicklingError):  # the worker died before it sent everything
        return None


def _stop(pid: int) -> None:
    """End and reap the worker when the parent fails first."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
