"""The pipeline, top to bottom: load -> spec -> compile -> checks -> emit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.source import SourceMap
from cluster_iac.lock.read import lock_path, read_lock
from cluster_iac.lock.text import lock_text
from cluster_iac.plan import Plan

if TYPE_CHECKING:
    from cluster_iac.emit.parallel import WorkerUsage

Findings = Callable[[list[Diagnostic], SourceMap], None]
"""Told the checks' findings (warnings and infos) as soon as the checks have passed, before
anything is rendered: the CLI prints them then, whatever happens next."""

PARALLEL_NODES = 1000
"""Plans of fewer nodes render in one process unless ``jobs`` says otherwise: at 1,000 nodes
the emitters take about 0.45 s of CPU, at 250 nodes 0.2 s (tests/benchmarks/bench_scale.py
--stages), while the fork and the worker's first touches of the plan's pages cost some
0.05 s; below that the second core saves too little to be worth it."""


@dataclass(frozen=True)
class Build:
    """What one run of the pipeline produced."""

    plan: Plan
    findings: list[Diagnostic]
    files: dict[str, str]
    source: SourceMap
    workers: tuple[WorkerUsage, ...] = ()  # the emitter worker's usage when one was forked
    lock: Locked | None = None  # the lock as read and as this run leaves it


class Locked:
    """The lock file beside the spec (cluster_iac/lock/): its text before the run (None
    when there was none) and the text the run's plan makes, made when first asked for (only
    render, render --check and changes ask: 0.5 s at 100,000 GPUs that validate, plan and
    report need not spend); once made, the plan it was made from is let go."""

    def __init__(self, path: Path, before: str | None, make: Callable[[], str]) -> None:
        self.path = path
        self.before = before
        self._make: Callable[[], str] | None = make
        self._after = ""

    @property
    def after(self) -> str:
        if self._make is not None:
            self._after = self._make()
            self._make = None
        return self._after

    @property
    def stale(self) -> bool:
        return self.before != self.after


class PipelineError(Exception):
    """A stage failed; carries its diagnostics and the source map to locate them."""

    def __init__(self, diagnostics: list[Diagnostic], source: SourceMap | None,
                 plan: Plan | None = None):
        self.diagnostics = diagnostics
        self.source = source
        self.plan = plan  # the compiled plan when only the checks failed (`plan` prints it)
        super().__init__(f"{len(diagnostics)} problem(s)")


def build(spec_file: str | Path, *, strict: bool = False, emit: bool = True,
          jobs: int | None = 1, on_findings: Findings | None = None,
          lock_file: Path | None = None, reallocate: tuple[str, ...] = ()) -> Build:
    """Run the whole pipeline in memory; raise PipelineError on any error finding. ``jobs``
    2 or more renders on two processes (emit/parallel.py), the worker forked before the
    checks; None: default_jobs. Without ``emit`` the cable table, which only emitters read,
    is made here, so a design that cannot be cabled is rejected all the same. ``lock_file``
    (by default the spec's name with .lock, beside it) holds the identities the passes keep;
    Build.lock has the text this plan makes of it, which only render_into writes."""
    lock_file = lock_file or lock_path(spec_file)
    plan, source = _compiled(spec_file, lock_file, reallocate)
    if not emit:
        findings = _checked(plan, source, strict, on_findings)
        with _cable_errors(source, replace(plan, findings=tuple(findings))):
            plan.cables  # noqa: B018  # made now (plan.cabling)
        return Build(plan=replace(plan, findings=tuple(findings)), findings=findings, files={},
                     source=source, lock=_locked(plan, spec_file, lock_file))
    from cluster_iac.emit import Rendering  # emitters and their templates load only here

    with Rendering(plan, _jobs(plan, jobs)) as rendering:  # the worker starts now
        findings = _checked(plan, source, strict, on_findings)
        # 5. emit: every output file, in memory (report.md lists the findings); the CLI
        # writes them as they are made instead (render_into)
        plan = replace(plan, findings=tuple(findings))
        with _cable_errors(source):
            files, workers = rendering.files(plan)
    return Build(plan=plan, findings=findings, files=files, source=source, workers=workers,
                 lock=_locked(plan, spec_file, lock_file))


@dataclass(frozen=True)
class Written:
    """What rendering into a folder did."""

    files: int  # the files of the tree, not counting the manifest
    changed: list[str]  # the paths that changed or were removed
    workers: tuple[WorkerUsage, ...] = ()


def render_into(spec_file: str | Path, out_dir: Path, *, strict: bool = False,
                jobs: int | None = None, on_findings: Findings | None = None,
                lock_file: Path | None = None, reallocate: tuple[str, ...] = (),
                ) -> tuple[Build, Written]:
    """The pipeline, rendering every file straight into the tree at ``out_dir``, replaced as
    a whole (write/tree.py). With two processes the worker is forked right after compiling and
    starts on its families (and the cable table) while this process runs the checks; once
    they pass, each family's files go to disk as soon as they are made, in the process that
    made them, so no process holds the whole output. Raises PipelineError (the output
    untouched, nothing made beside it when the checks fail), what write_tree raises, and an
    emitter's error or EmitWorkerError with the output left as it was. The lock is written
    (atomically, beside the spec) once the tree is."""
    lock_file = lock_file or lock_path(spec_file)
    plan, source = _compiled(spec_file, lock_file, reallocate)
    from cluster_iac.emit import Rendering
    from cluster_iac.write.tree import staged_tree, write_file

    # chunked: the large files are written piece by piece as they are made (formats.Chunks)
    with Rendering(plan, _jobs(plan, jobs), chunked=True) as rendering:  # the worker starts
        findings = _checked(plan, source, strict, on_findings)
        plan = replace(plan, findings=tuple(findings))
        # the lock's new text while the worker renders (written once the tree is)
        locked = _locked(plan, spec_file, lock_file)
        locked.after  # noqa: B018  # made now
        with staged_tree(out_dir) as tree, _cable_errors(source):
            digests, workers = rendering.finish(plan, tree.write_all)
            changed = tree.commit(digests)
    if locked.stale:
        write_file(locked.path, locked.after)
    built = Build(plan=plan, findings=findings, files={}, source=source, workers=workers,
                  lock=locked)
    return built, Written(files=len(digests), changed=changed, workers=workers)


def default_jobs(plan: Plan) -> int:
    """2 where two CPUs are free and the plan has at least PARALLEL_NODES nodes, else 1."""
    from cluster_iac.emit.parallel import available_cpus

    return min(2, available_cpus()) if len(plan.nodes) >= PARALLEL_NODES else 1


def _jobs(plan: Plan, jobs: int | None) -> int:
    return default_jobs(plan) if jobs is None else jobs


def _compiled(spec_file: str | Path, lock_file: Path,
              reallocate: tuple[str, ...]) -> tuple[Plan, SourceMap]:
    """Stages 1-3; PipelineError on any error."""
    from cluster_iac.compile import compile_plan
    from cluster_iac.load.loader import load_spec_file
    from cluster_iac.spec.parse import parse_spec

    source = None
    try:
        # 1. load: YAML with positions
        data, source = load_spec_file(spec_file)
        # 2. spec: validated pydantic models; the lock: the identities kept from before
        spec = parse_spec(data)
        lock = read_lock(lock_file, reallocate)
        # 3. compile: passes expand the spec into the plan and its graphs
        return compile_plan(spec, lock), source
    except CompileError as exc:
        raise PipelineError(exc.diagnostics, source or exc.source) from None


def _locked(plan: Plan, spec_file: str | Path, lock_file: Path) -> Locked:
    old = plan.lock
    before = old.text if old.exists else None
    return Locked(lock_file, before, lambda: lock_text(plan, old, Path(spec_file).name))


def _checked(plan: Plan, source: SourceMap, strict: bool,
             on_findings: Findings | None) -> list[Diagnostic]:
    """4. checks: the capacity and consistency validator; PipelineError on any error."""
    from cluster_iac.checks import run_checks

    findings = run_checks(plan, strict=strict)
    if any(f.is_error for f in findings):
        raise PipelineError(findings, source, replace(plan, findings=tuple(findings)))
    if on_findings is not None:
        on_findings(findings, source)
    return findings


@contextlib.contextmanager
def _cable_errors(source: SourceMap, plan: Plan | None = None) -> Iterator[None]:
    """The cable table's CompileError (plan.cables, made wherever it is first read: here, or
    in the emitter worker, whose exception is raised here) as the pipeline's error, with
    the ``plan`` the error is about when there is one to show (`plan` prints it)."""
    try:
        yield
    except CompileError as exc:
        raise PipelineError(exc.diagnostics, source, plan) from None
