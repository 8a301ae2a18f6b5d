"""Emitting on two cores: a forked worker renders a share of the emitter families.

The worker is forked as soon as the plan is compiled, before the checks (Worker.start): it
renders its families (the cabling files and NetBox's cables, making the cable table they
read, which no other family does: emit.CABLED) while the parent runs the checks and then
renders the other families.
``os.fork`` gives the worker the same plan without copying it (copy-on-write); the checks'
findings come after the fork, so the worker's plan has none, and the families that list them
stay in the parent (emit.PARENT). Files go where the parent says once the checks have passed:
it hands the worker a ``sink`` (Worker.hand), which each process calls with each family's
files as it makes them. When rendering into a folder the sink writes them into the render's
staging folder (writer.StagedTree) and answers their SHA-256s, so only those small answers
cross the pipe back and no process holds another's text. Emitters read only the plan, so
each file is byte-for-byte what the serial path makes (tests/test_parallel_emit.py). When the
checks fail the worker is stopped before it was handed anywhere to write; the parent alone
swaps the staged tree in, after the worker has succeeded, so a failed worker leaves nothing
written.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from cluster_iac.plan import Plan

Emitter = Callable[[Plan], dict[str, Any]]
"""A family: path -> text (a str, or where the render writes, formats.Chunks)."""
Made = TypeVar("Made")
Sink = Callable[[dict[str, Any]], Made]
"""What becomes of one family's files (path -> text) in the process that rendered them; its
answer must pickle, as the worker's answers come back through a pipe."""


class EmitWorkerError(RuntimeError):
    """The worker died or failed in a way that cannot be re-raised as it was."""


@dataclass(frozen=True)
class WorkerUsage:
    """The worker's own peak resident set and CPU seconds (os.wait4), and the parent's CPU
    seconds when it forked, for the benchmark: on a busy machine, where wall time means
    little, forked_at_cpu_s + the larger of each process's CPU after the fork is the wall
    time two idle cores would take."""

    peak_rss_kib: int
    cpu_s: float
    forked_at_cpu_s: float = 0.0


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def split(families: dict[str, float], together: Iterable[Collection[str]] = (), *,
          ours: Collection[str] = (), theirs: Collection[str] = (),
          loads: tuple[float, float] = (0.0, 0.0)) -> tuple[list[str], list[str]]:
    """(parent's, worker's) families: ``ours`` to the parent and ``theirs`` to the worker,
    the others heaviest first, each to the lighter share; the families of each ``together``
    group count as one and go to the same share. ``loads`` is what each process does besides
    its families (the parent's checks, the worker's cable table)."""
    units: list[list[str]] = [sorted(group) for group in together]
    grouped = {family for unit in units for family in unit}
    units += [[family] for family in families if family not in grouped]
    cost = {tuple(unit): sum(families.get(f, 0.0) for f in unit) for unit in units}
    shares: tuple[list[str], list[str]] = ([], [])
    load = list(loads)
    pinned = {family: 0 for family in ours} | {family: 1 for family in theirs}
    # the pinned units first, so the others balance against their load
    for unit in sorted(cost, key=lambda u: (not set(u) & set(pinned), -cost[u], u)):
        side = {pinned[f] for f in unit if f in pinned}
        if len(side) > 1:
            raise ValueError(f"families {unit} go together but are pinned apart")
        share = side.pop() if side else (0 if load[0] <= load[1] else 1)
        shares[share].extend(unit)
        load[share] += cost[unit]
    return shares


class Worker:
    """A forked worker rendering some families of a plan from the moment it starts. It holds
    the first family's files until ``hand`` says where they go (so it can start before there
    is anywhere to write); ``finish`` waits for its answers; leaving the ``with`` block
    without them stops it."""

    def __init__(self, pid: int, answers: int, sinks: int) -> None:
        self.pid = pid
        self.forked_at_cpu_s = sum(os.times()[:2])  # this process's user + system CPU
        self._answers: int | None = answers  # the worker's answers (its sink's), for finish
        self._sinks: int | None = sinks  # where hand sends the sink
        self._unsent = b""
        self._ended = False

    @classmethod
    def start(cls, plan: Plan, emitters: dict[str, Emitter], families: Collection[str]
              ) -> Worker:
        """Fork; the worker renders ``families`` of ``emitters`` (in their order) at once."""
        ours = [family for family in emitters if family in families]
        answers, answer = os.pipe()
        sinks, sink = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: render, send, and end without running any cleanup
            os.close(answers)
            os.close(sink)
            _worker(plan, emitters, ours, sinks, answer, parent)
        os.close(answer)
        os.close(sinks)
        return cls(pid, answers, sink)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._ended:
            self.stop()

    def hand(self, sink: Sink[Made]) -> None:
        """Send the worker the ``sink`` for its families' files. What the pipe does not take
        at once is sent by ``finish``: the worker reads it only once its first family is
        made, and the parent has its own families to render meanwhile."""
        fd = self._sinks
        assert fd is not None, "the sink is handed once"
        data = pickle.dumps(sink, protocol=pickle.HIGHEST_PROTOCOL)
        os.set_blocking(fd, False)
        try:
            sent = os.write(fd, data)
        except BlockingIOError:
            sent = 0
        except BrokenPipeError:  # the worker has ended: finish reads why
            sent = len(data)
        self._unsent = data[sent:]
        if not self._unsent:
            self._close_sinks()

    def finish(self) -> tuple[object, WorkerUsage]:
        """The worker's answers (family -> what its sink made), once it has ended; its
        emitter's exception raised here as it was; EmitWorkerError when it died."""
        answers, self._answers = self._answers, None  # the file object closes it
        assert answers is not None, "finish is called once"
        try:
            with os.fdopen(answers, "rb") as pipe:
                self._send_rest()
                outcome = _receive(pipe)
        except BaseException:
            self.stop()
            raise
        _pid, status, usage = os.wait4(self.pid, 0)
        self._ended = True
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome is None or os.waitstatus_to_exitcode(status) != 0:
            raise EmitWorkerError(f"the emitter worker (pid {self.pid}) ended with status "
                                  f"{os.waitstatus_to_exitcode(status)} before sending its "
                                  f"files")
        return outcome, WorkerUsage(usage.ru_maxrss, usage.ru_utime + usage.ru_stime,
                                    self.forked_at_cpu_s)

    def stop(self) -> None:
        """End and reap the worker (the checks failed, or the parent did); close the pipes."""
        self._ended = True
        _stop(self.pid)
        self._close_sinks()
        if self._answers is not None:
            os.close(self._answers)
            self._answers = None

    def _send_rest(self) -> None:
        if self._sinks is None:
            return
        os.set_blocking(self._sinks, True)
        with contextlib.suppress(BrokenPipeError):  # the worker ended: its answer says why
            view = memoryview(self._unsent)
            while view:
                view = view[os.write(self._sinks, view):]
        self._close_sinks()

    def _close_sinks(self) -> None:
        if self._sinks is not None:
            with contextlib.suppress(OSError):
                os.close(self._sinks)
            self._sinks = None


def _worker(plan: Plan, emitters: dict[str, Emitter], families: list[str], sinks: int,
            fd: int, parent: int) -> None:
    code = 0
    try:
        # Every object the worker inherited moves to the collector's permanent generation (one
        # splice of its lists), so a collection here never walks, or writes into, the parent's
        # pages. The CLI runs without the collector anyway (cli.run); library callers may not.
        gc.freeze()
        _die_with(parent)
        try:
            payload: object = _render(plan, emitters, families, sinks)
        except BaseException as exc:  # sent to the parent, which raises it
            payload = _picklable(exc)
        os.close(sinks)  # a parent still sending the sink stops at once (EPIPE)
        with os.fdopen(fd, "wb") as pipe:
            pickle.dump(payload, pipe, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # the pipe itself failed: the parent sees no payload
        code = 1
    finally:
        os._exit(code)


def _render(plan: Plan, emitters: dict[str, Emitter], families: list[str],
            sinks: int) -> dict[str, object]:
    """Each family's files, made, then handed to the sink the parent sends once its checks
    have passed (read when the first family is made: it blocks only if that comes first)."""
    made: dict[str, object] = {}
    sink: Sink[object] | None = None
    for family in families:
        files = emitters[family](plan)
        if sink is None:
            with os.fdopen(sinks, "rb", closefd=False) as pipe:
                sink = cast("Sink[object] | None", _receive(pipe))
            if sink is None:  # the parent closed the pipe without a sink: it gave up
                os._exit(1)
        made[family] = sink(files)
    return made


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
