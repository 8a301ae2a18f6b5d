"""Emitters: each family renders the plan into {relative path: text}."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from cluster_iac.base.errors import CompileError
from cluster_iac.emit import parallel
from cluster_iac.emit.parallel import Made, Sink, Worker, WorkerUsage, split
from cluster_iac.plan import Plan

if TYPE_CHECKING:
    from cluster_iac.formats.chunks import Chunks

Emitter = Callable[[Plan], dict[str, str]]
ChunkEmitter = Callable[[Plan], dict[str, "str | Chunks"]]


class Family:
    """One family's ``render``, its module (and the templates and libraries it loads)
    imported on first use: with two processes each imports only its own families', after
    the fork, instead of the parent importing all of them before it. ``chunks`` is the
    module's ``render_chunks`` where it has one (its large files as formats.Chunks, written
    piece by piece), else its ``render``."""

    __slots__ = ("module", "_render", "_chunks")

    def __init__(self, module: str) -> None:
        self.module = module
        self._render: Emitter | None = None
        self._chunks: ChunkEmitter | None = None

    def load(self) -> Emitter:
        if self._render is None:
            module = importlib.import_module(f"{__name__}.{self.module}")
            self._render = module.render
            self._chunks = getattr(module, "render_chunks", module.render)
        return self._render

    def __call__(self, plan: Plan) -> dict[str, str]:
        return self.load()(plan)

    def chunks(self, plan: Plan) -> dict[str, str | Chunks]:
        self.load()
        assert self._chunks is not None
        return self._chunks(plan)


# One entry per artifact family; grep here to find who writes a file (emit/<module>.py).
EMITTERS: dict[str, Emitter] = {family: Family(family) for family in (
    "slurm", "slurmdbd", "healthcheck", "ansible", "terraform", "cabling", "netbox_cables",
    "netbox_types", "netbox", "facility", "nccl", "lustre", "monitoring", "subnet_manager",
    "imex", "mig", "drawings", "acceptance", "report")}


# CPU seconds of each family at 100,000 GPUs, writing its files included, as
# `tests/benchmarks/bench_scale.py --stages` prints them ("emit.FAMILY": the family rendered
# as the CLI renders it and its files written into a folder on this machine's disk; the
# families the parent may render timed on a plan that has not made the cable table), 27 Nov
# 2026 21:00 UTC, with every family of that day merged. Written into a fresh folder: on this
# machine's disk (ext4 without a journal) a file created soon after many were removed costs
# 0.2-0.3 ms more CPU (bench_scale.cli_render), which made the families of many files
# (the acceptance jobs' 1,219, the drawings' 476, NetBox's cables in 1,565 parts) weigh
# two or three times their rendering in the table before this one.
# Only to split the families between two processes about evenly.
COST: dict[str, float] = {
    "cabling": 0.52, "subnet_manager": 0.52, "drawings": 0.48, "acceptance": 0.28,
    "netbox_cables": 0.25, "facility": 0.23, "ansible": 0.21, "netbox_types": 0.15,
    "monitoring": 0.13, "report": 0.12, "netbox": 0.12, "terraform": 0.12, "slurm": 0.03,
}
CHECKS_COST = 0.4
"""CPU seconds the parent spends at 100,000 GPUs besides its families while the worker
starts: the checks (0.13) and the lock's new text (render_into; 0.25 for a lock that keeps
its lines, 0.4 for one sorted anew)."""
CABLES_COST = 0.30
"""CPU seconds of the cable table at 100,000 GPUs (compile/plan_cabling.py cable_table):
the worker makes it, as the first of its families reads it."""

CABLED = ("cabling", "netbox_cables")
"""The families that read plan.cables: the worker renders them, so the table is made there
and only there (the parent never reads it). NetBox's other files do not: its racks, devices,
vocabulary and power chain (emit/netbox.py), and its device types (emit/netbox_types.py,
whose interfaces are the links' and whose PSU types are the media of a few cords planned by
themselves, Plan.cords_cabled) are families the split may give either process. The cabling
files and NetBox's cables were also the two that took by far the most memory while they
were made (at 100,000 GPUs 140 and 60 MiB over the plan, beside Ansible's 60): one process
peaks with them, the other with neither."""
TOGETHER = (("netbox", "netbox_types"),)
"""Families that read one product made on first use, rendered in one process so it is made
once: NetBox's devices and device types (netbox_types.device_types)."""
SHARED = ("power_cords", "power_lines", "power_pdus")
"""Plan tables made on first read (plan/power_rows.py) that both processes read however the
split falls: the cords by the cable table (the worker) and the lock's new text (the parent),
the lines and PDU loads by the checks (the parent) and by families on either side (the PDU
tables, monitoring, the acceptance jobs). With a worker they are made before the fork,
once: made after it, each process made them (0.075 s more CPU in all at 100,000 GPUs, for
0.075 s less before the fork)."""
PARENT = ("report",)
"""The families that read the findings (report.md lists them): the worker is forked before
the checks run, so its plan has none, and these stay in the parent."""


def worker_families() -> list[str]:
    """The families a forked worker renders (``jobs`` 2 or more)."""
    costs = {family: COST.get(family, 0.01) for family in EMITTERS}
    return split(costs, TOGETHER, ours=PARENT, theirs=CABLED,
                 loads=(CHECKS_COST, CABLES_COST))[1]


def render_all(plan: Plan, jobs: int = 1) -> dict[str, str]:
    """Every output file, keyed by its path under the output directory, sorted."""
    return render_files(plan, jobs)[0]


def render_files(plan: Plan, jobs: int = 1) -> tuple[dict[str, str], tuple[WorkerUsage, ...]]:
    """render_all, and the forked worker's usage: with ``jobs`` 2 or more a worker renders
    about half of the families (emit/parallel.py); the files are the same."""
    with Rendering(plan, jobs) as rendering:
        return rendering.files(plan)


def render_each(plan: Plan, jobs: int, sink: Sink[list[tuple[str, Made]]],
                ) -> tuple[dict[str, Made], tuple[WorkerUsage, ...]]:
    """Each family's files handed to ``sink`` as soon as the family is made, in this process
    or (``jobs`` 2 or more) in the forked worker, which renders about half of the families;
    path -> what the sink made of it, for every path (each written by one family only)."""
    with Rendering(plan, jobs) as rendering:
        return rendering.finish(plan, sink)


class Rendering:
    """The families of one plan being rendered: with ``jobs`` 2 or more the worker is forked
    at once and starts on its families (emit/parallel.py), before the caller runs the checks;
    ``finish`` renders the rest here, with the checked plan, and hands both processes' files
    to the sink. Leaving the ``with`` block without finishing (the checks failed) stops the
    worker before it has written anything."""

    def __init__(self, plan: Plan, jobs: int, *, chunked: bool = False) -> None:
        self.theirs = worker_families() if jobs > 1 else []
        assert not set(self.theirs) & set(PARENT), "the worker's plan has no findings"
        # with ``chunked`` (a sink that writes, writer.StagedTree.write_all) the large files
        # come as formats.Chunks, written piece by piece
        self.emitters: dict[str, parallel.Emitter] = {
            family: getattr(emitter, "chunks", emitter) if chunked else emitter
            for family, emitter in EMITTERS.items()}
        if self.theirs:
            for table in SHARED:
                len(getattr(plan, table))  # made now, for both processes
        self.worker = Worker.start(plan, self.emitters, self.theirs) if self.theirs else None

    def __enter__(self) -> Rendering:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.worker is not None:
            self.worker.__exit__(*exc)

    def finish(self, plan: Plan, sink: Sink[list[tuple[str, Made]]],
               ) -> tuple[dict[str, Made], tuple[WorkerUsage, ...]]:
        """Render this process's families of ``plan`` (the checked plan: report.md lists its
        findings) and collect the worker's; path -> what the sink made of it."""
        theirs = set(self.theirs)
        if self.worker is not None:
            self.worker.hand(sink)
        try:
            made = {family: sink(emitter(plan)) for family, emitter in self.emitters.items()
                    if family not in theirs}
        except Exception:
            self._worker_error_first()
            raise
        workers: tuple[WorkerUsage, ...] = ()
        if self.worker is not None:
            outcome, usage = self.worker.finish()
            made.update(cast(dict[str, list[tuple[str, Made]]], outcome))
            workers = (usage,)
        every: dict[str, Made] = {}
        for family in EMITTERS:
            for path, value in made[family]:
                if path in every:
                    raise ValueError(f"emitter {family!r} writes {path!r} twice")
                every[path] = value
        return every, workers

    def _worker_error_first(self) -> None:
        """A family of this process failed: when the worker failed on the plan itself (the
        cable table's CompileError, located at the spec), raise that instead, as one process
        would have (the table is made before the families that read the links' ports, such
        as the subnet manager's topology, which would only say 'cabled twice')."""
        if self.worker is None:
            return
        try:
            self.worker.finish()
        except CompileError:
            raise
        except Exception:  # noqa: S110  # the worker's own failure: this process's is raised
            pass

    def files(self, plan: Plan) -> tuple[dict[str, str], tuple[WorkerUsage, ...]]:
        """``finish`` into memory: every file, sorted by path."""
        made, workers = self.finish(plan, _pairs)
        return dict(sorted(made.items())), workers


def _pairs(files: dict[str, str]) -> list[tuple[str, str]]:
    return list(files.items())
