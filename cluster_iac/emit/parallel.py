"""Emitting on two cores: a forked worker renders a share of the emitter families.

Once the plan is checked, ``render`` forks a worker (``os.fork``: the same plan, its pages
copied only where written) that renders its share of the families while this process renders
the rest. Each process hands each family's files to the ``sink`` as soon as they are made:
when rendering into a folder the sink writes them into the render's staging folder
(write/tree.py StagedTree) and answers their SHA-256s, so only those small answers cross the
pipe back and no process holds another's text. The families are split by the CPU each took
when the benchmark last measured them (costs.json, written by tests/benchmarks/bench_scale.py
--costs), heaviest first, each to the lighter share. Emitters read only the plan, so every
file is byte-for-byte what one process makes (tests/test_parallel_emit.py). The caller swaps
the staged tree in only once both processes have succeeded, so a failed worker leaves
nothing written.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from cluster_iac.base.errors import EmitWorkerError
from cluster_iac.plan import Plan

Emitter = Callable[[Plan], dict[str, Any]]
"""A family: path -> text (a str, or where the render writes, formats' Chunks)."""
Made = TypeVar("Made")
Sink = Callable[[dict[str, Any]], Made]
"""What becomes of one family's files (path -> text) in the process that rendered them; its
answer must pickle, as the worker's answers come back through a pipe."""

COSTS_FILE = Path(__file__).with_name("costs.json")
"""Each family's CPU seconds at the benchmark's largest size, as bench_scale.py --costs
measured them: only to split the families between two processes about evenly."""

TOGETHER = (("netbox", "netbox_types"), ("cabling", "netbox_cables"))
"""Families that read one product made on first use, rendered in one process so that it is
made once: NetBox's device types (emit/netbox_types.py device_types); the cable table's run
stops and checked cells (plan.cables.memo: formats/columnar.py table_stops, table_cells),
which cables.csv and NetBox's cables both print (0.13 s of NetBox's 0.43 s at 100,000 GPUs
when the cabling files have made them first)."""

@dataclass(frozen=True)
class WorkerUsage:
    """The worker's own peak resident set and CPU seconds (os.wait4), and the parent's CPU
    seconds when it forked, for the benchmark: on a busy machine, where wall time means
    little, forked_at_cpu_s + the larger of each process's CPU after the fork is the wall
    time two idle cores would take."""

    peak_rss_kib: int
    cpu_s: float
    forked_at_cpu_s: float = 0.0


def costs() -> dict[str, float]:
    """family -> CPU seconds, as the benchmark last measured them (costs.json)."""
    return dict(json.loads(COSTS_FILE.read_text())["cpu_s"])


def render(plan: Plan, emitters: dict[str, Emitter], jobs: int, sink: Sink[Made],
           ) -> tuple[dict[str, Made], tuple[WorkerUsage, ...]]:
    """family -> what ``sink`` made of its files, in ``emitters``' order; with ``jobs`` 2 or
    more a forked worker renders about half of the families (by cost), and its usage comes
    back with them."""
    if jobs < 2:
        return {family: sink(emitter(plan)) for family, emitter in emitters.items()}, ()
    ours, theirs = split({family: costs().get(family, 0.01) for family in emitters}, TOGETHER)
    with Worker.start(plan, emitters, theirs, sink) as worker:
        made = {family: sink(emitters[family](plan)) for family in ours}
        theirs_made, usage = worker.finish()
    made.update(theirs_made)
    return {family: made[family] for family in emitters}, (usage,)


def split(families: dict[str, float], together: Iterable[Collection[str]] = (),
          ) -> tuple[list[str], list[str]]:
    """(parent's, worker's) families: heaviest first, each to the lighter share; the
    families of each ``together`` group count as one and go to the same share."""
    units: list[list[str]] = [sorted(f for f in group if f in families) for group in together]
    units = [unit for unit in units if unit]
    grouped = {family for unit in units for family in unit}
    units += [[family] for family in families if family not in grouped]
    cost = {tuple(unit): sum(families[f] for f in unit) for unit in units}
    shares: tuple[list[str], list[str]] = ([], [])
    load = [0.0, 0.0]
    for unit in sorted(cost, key=lambda u: (-cost[u], u)):
        share = 0 if load[0] <= load[1] else 1
        shares[share].extend(unit)
        load[share] += cost[unit]
    return shares


class Worker:
    """A forked worker rendering some families of a plan, each family's files handed to the
    sink in the worker; ``finish`` waits for its answers; leaving the ``with`` block without
    them stops it."""

    def __init__(self, pid: int, answers: int) -> None:
        self.pid = pid
        self.forked_at_cpu_s = sum(os.times()[:2])  # this process's user + system CPU
        self._answers: int | None = answers  # the worker's answers (its sink's), for finish
        self._ended = False

    @classmethod
    def start(cls, plan: Plan, emitters: dict[str, Emitter], families: Collection[str],
              sink: Sink[Made]) -> Worker:
        """Fork; the worker renders ``families`` of ``emitters`` (in their order) at once."""
        ours = [family for family in emitters if family in families]
        answers, answer = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: render, send, and end without running any cleanup
            os.close(answers)
            _worker(plan, emitters, ours, sink, answer, parent)
        os.close(answer)
        return cls(pid, answers)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._ended:
            self.stop()

    def finish(self) -> tuple[dict[str, Any], WorkerUsage]:
        """The worker's answers (family -> what its sink made), once it has ended; its
        emitter's exception raised here as it was; EmitWorkerError when it died."""
        answers, self._answers = self._answers, None  # the file object closes it
        assert answers is not None, "finish is called once"
        try:
            with os.fdopen(answers, "rb") as pipe:
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
        assert isinstance(outcome, dict)
        return outcome, WorkerUsage(usage.ru_maxrss, usage.ru_utime + usage.ru_stime,
                                    self.forked_at_cpu_s)

    def stop(self) -> None:
        """End and reap the worker (this process failed); close the pipe."""
        self._ended = True
        _stop(self.pid)
        if self._answers is not None:
            os.close(self._answers)
            self._answers = None


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
            payload: object = {family: sink(emitters[family](plan)) for family in families}
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
