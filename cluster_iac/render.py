"""The pipeline, top to bottom, and the one place that runs it: load the spec (and its lock),
compile the plan, check it, emit every file, write the tree, then the lock.

    1. load     load/loader.py        the YAML with every position (SourceMap)
    2. spec     spec/parse.py         validated models; lock/read.py the identities kept
    3. compile  compile/__init__.py   PASSES: spec -> plan
    4. check    checks/__init__.py    CHECKS: plan -> findings; any error stops here
    5. emit     emit/__init__.py      EMITTERS: plan -> files (emit/parallel.py on two cores)
    6. write    write/tree.py         the tree swapped in whole, or compared (--check:
                write/compare.py, only the files whose bytes differ read); 5-6 skipped
                when the folder holds what these inputs were last rendered to
                (write/inputs.py)
    7. lock     lock/text.py          the identities this plan holds, beside the spec
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.processes import PARALLEL_NODES, available_cpus
from cluster_iac.base.source import SourceMap
from cluster_iac.checks import run_checks
from cluster_iac.compile import Pass, compile_on, compile_plan, for_emit
from cluster_iac.load.loader import load_spec_file
from cluster_iac.lock.moves import apply_moves, unsaid_renames
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.read import read_lock
from cluster_iac.lock.text import lock_text
from cluster_iac.plan import Plan
from cluster_iac.plan.kept import Lock
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.parse import parse_spec
from cluster_iac.write.compare import Checked, Made, TreeCheck
from cluster_iac.write.files import text_digest, write_file
from cluster_iac.write.inputs import Known, confirmed, known, remember, render_key
from cluster_iac.write.outcome import Outcome
from cluster_iac.write.scan import scan
from cluster_iac.write.tree import staged_tree

if TYPE_CHECKING:  # the emitters load only when a command renders (_emitters)
    from cluster_iac.emit.parallel import WorkerUsage

Findings = Callable[[list[Diagnostic], SourceMap], None]
"""Told the checks' findings (warnings and infos) as soon as the checks have passed, before
anything is rendered: the CLI prints them then, whatever happens next."""


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

    def __init__(self, path: Path, before: str | None, make: Callable[[], str],
                 digest: str | None = None) -> None:
        self.path = path
        self.before = before
        self._before_digest = digest  # text_digest(before), when known
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

    @property
    def digest(self) -> str:
        """The SHA-256 of ``after`` (files.text_digest), not made again where it is the
        text read (13.5 MiB at 100,000 GPUs)."""
        if self.after is self.before and self._before_digest is not None:
            return self._before_digest
        return text_digest(self.after)


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
          lock_file: Path | None = None, reallocate: tuple[str, ...] = (),
          complete: bool = True) -> Build:
    """Run the whole pipeline in memory; raise PipelineError on any error finding. ``jobs``
    2 or more renders on two processes (emit/parallel.py); None: default_jobs. Without
    ``emit`` nothing is rendered. ``lock_file`` (by default the spec's name with .lock,
    beside it) holds the identities the passes keep; Build.lock has the text this plan makes
    of it, which only render_into writes. ``complete`` False (validate, without ``emit``):
    the plan only as far as the checks and the lock read it (compile.EMIT_ONLY left out)."""
    spec, plan, source = _compiled(spec_file, lock_file, reallocate,
                                   emit_only=emit or complete)  # 1-3
    plan = _checked(plan, source, strict, on_findings)  # 4
    files: dict[str, str] = {}
    workers: tuple[WorkerUsage, ...] = ()
    if emit:  # 5. emit: every output file, in memory (report.md lists the findings)
        files, workers = _emitters().render_files(plan, _jobs(plan, jobs))
    return Build(plan=plan, findings=list(plan.findings), files=files, source=source,
                 workers=workers, lock=_locked(plan, spec_file))


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
    """The pipeline, each family's files written into the tree at ``out_dir`` as soon as
    they are made, in the process that made them (so no process holds the whole output),
    the tree replaced as a whole (write/tree.py). Raises PipelineError (the output
    untouched, nothing made beside it), what the writer raises, and an emitter's error or
    EmitWorkerError with the output left as it was. The lock is written (atomically, beside
    the spec) once the tree is."""
    spec, plan, source = _compiled(spec_file, lock_file, reallocate, emit_only=False)  # 1-3
    plan = _checked(plan, source, strict, on_findings)  # 4
    read = _read_digest(plan)
    key = render_key(spec_file, read, strict, reallocate)
    made = known(key)
    locked = _locked(plan, spec_file, read, made)
    plan = _let_go(plan, locked)
    # 5-6. emit and write: each family's files into the staged tree, swapped in at the end
    with staged_tree(out_dir) as tree:
        current = tree.confirmed(made)  # the tree these inputs make, as the folder holds it
        workers: tuple[WorkerUsage, ...] = ()
        if current is not None:
            digests = current
        else:
            digests, workers = _emitters().render_each(for_emit(spec, plan), _jobs(plan, jobs),
                                                       tree.write_all, chunked=True)
        changed = tree.commit(digests)  # tree.manifest: the SHA-256 of its manifest
    # 7. the lock: the identities this plan holds, beside the spec
    if locked.stale:
        write_file(locked.path, locked.after)
    _remember(spec_file, key, Known(tree.manifest, locked.digest, _outcome(plan, source)),
              locked, strict, reallocate)
    built = Build(plan=plan, findings=list(plan.findings), files={}, source=source,
                  workers=workers, lock=locked)
    return built, Written(files=len(digests), changed=changed, workers=workers)


def _remember(spec_file: str | Path, key: str, made: Known, locked: Locked, strict: bool,
              reallocate: tuple[str, ...]) -> None:
    """What the inputs of ``key`` were rendered to (write/inputs.py; nothing written where
    the cache knows it already); and when the lock was written (no device reallocated), what
    the next render over it makes: the same tree and the same lock, as a render over the lock
    it wrote keeps it as it is (the lock holds the plan's identities;
    tests/test_render_inputs.py holds every example to it). So the next render, into a fresh
    folder, does not make the lock's text again only to find it current (0.5 s at 100,000
    GPUs). Its outcome is not foretold: that render keeps it (write/outcome.py)."""
    remember(key, made)
    if locked.stale and not reallocate:
        remember(render_key(spec_file, made.lock, strict, ()), made._replace(outcome=None))


def check_against(spec_file: str | Path, out_dir: Path, *, strict: bool = False,
                  jobs: int | None = None, on_findings: Findings | None = None,
                  lock_file: Path | None = None, reallocate: tuple[str, ...] = (),
                  ) -> tuple[Build, Checked]:
    """render --check: the pipeline, each family's files compared with the folder's as soon
    as they are made, nothing written (write/compare.py TreeCheck: the folder's SHA-256s from
    its manifest and stat record, only the files that differ kept). Raises PipelineError."""
    spec, plan, source = _compiled(spec_file, lock_file, reallocate, emit_only=False)  # 1-3
    plan = _checked(plan, source, strict, on_findings)  # 4
    # 5-6. emit and compare: each family's files hashed and dropped where the folder has them
    out = Path(os.path.realpath(out_dir))  # as render_into writes it (write/tree.py)
    found = scan(out)
    read = _read_digest(plan)
    key = render_key(spec_file, read, strict, reallocate)
    known_made = known(key)
    current = confirmed(found, known_made)  # write/inputs.py: no render needed
    workers: tuple[WorkerUsage, ...] = ()
    locked = _locked(plan, spec_file, read, known_made)
    plan = _let_go(plan, locked)
    if current is not None:
        made: dict[str, Made] = {path: (digest, None) for path, digest in current.items()}
    else:
        made, workers = _emitters().render_each(for_emit(spec, plan), _jobs(plan, jobs),
                                                TreeCheck(found).compare_all, chunked=True)
    checked = Checked.of(out, found, made)
    remember(key, Known(checked.manifest, locked.digest, _outcome(plan, source)))
    built = Build(plan=plan, findings=list(plan.findings), files={}, source=source,
                  workers=workers, lock=locked)
    return built, checked


def default_jobs(plan: Plan) -> int:
    """2 where two CPUs are free and the plan has at least PARALLEL_NODES nodes, else 1."""
    return min(2, available_cpus()) if len(plan.nodes) >= PARALLEL_NODES else 1


def _emitters() -> ModuleType:
    """The emitters, and the templates and libraries they load, imported only by the
    commands that render: validate, plan and report never load them (tests/test_startup.py)."""
    import cluster_iac.emit

    return cluster_iac.emit


def _jobs(plan: Plan, jobs: int | None) -> int:
    return default_jobs(plan) if jobs is None else jobs


def compile_through(spec_file: str | Path, through: Pass) -> Plan:
    """Stages 1-3 with the spec's lock, the passes up to ``through`` only: for reconcile,
    where a render already knows that these inputs compile and pass the checks
    (cli/reconcile.py); PipelineError on any error."""
    return _compiled(spec_file, None, (), emit_only=False, through=through)[1]


def compile_on_through(spec_file: str | Path, plan: Plan, after: Pass, through: Pass) -> Plan:
    """compile_through's plan through ``after``, compiled on through ``through`` (the spec
    loaded again, a few milliseconds: the plan holds the lock as read, its moves applied);
    PipelineError on any error."""
    source = None
    try:
        data, source = load_spec_file(spec_file)
        return compile_on(parse_spec(data), plan, after, through)
    except CompileError as exc:
        raise PipelineError(exc.diagnostics, source or exc.source, None) from None


def _compiled(spec_file: str | Path, lock_file: Path | None, reallocate: tuple[str, ...], *,
              emit_only: bool, through: Pass | None = None) -> tuple[ClusterSpec, Plan, SourceMap]:
    """Stages 1-3 (``emit_only`` False: compile.EMIT_ONLY's passes left out, for_emit runs
    them; ``through``: no pass after it); PipelineError on any error."""
    source = None
    try:
        # 1. load: YAML with positions
        data, source = load_spec_file(spec_file)
        # 2. spec: validated pydantic models; the lock: the identities kept from before
        spec = parse_spec(data)
        lock = read_lock(lock_file or lock_path(spec_file), reallocate)
        lock, moves = apply_moves(spec, lock)  # the spec's renames, before any allocation
        if moves:
            raise CompileError(moves)
        # 3. compile: passes expand the spec into the plan and its graphs
        return spec, _compiled_kept(spec, lock, emit_only, through), source
    except CompileError as exc:
        plan = exc.plan if isinstance(exc.plan, Plan) else None
        found = _unplaced_findings(plan) if plan is not None and exc.complete else []
        raise PipelineError([*exc.diagnostics, *found], source or exc.source, plan) from None


def _compiled_kept(spec: ClusterSpec, lock: Lock, emit_only: bool,
                   through: Pass | None = None) -> Plan:
    """Stage 3, refused when a node group was renamed without a move (lock/moves.py), even
    where the lock's identities would otherwise conflict with the renamed hosts."""
    try:
        plan = compile_plan(spec, lock, emit_only=emit_only, through=through)
    except CompileError:
        renames = unsaid_renames(spec, lock, lambda: _devices_made(spec))
        if renames:
            raise CompileError(renames) from None
        raise
    renames = unsaid_renames(spec, lock, lambda: plan.placements)
    if renames:
        raise CompileError(renames)
    return plan


def _devices_made(spec: ClusterSpec) -> Iterable[str] | None:
    """Every racked device of the spec's plan without the lock (None if it does not
    compile): asked only when the plan with the lock failed and a group may be renamed."""
    try:
        return compile_plan(spec).placements
    except CompileError:
        return None


def _unplaced_findings(plan: Plan) -> list[Diagnostic]:
    """The checks' findings on a plan compiled past a rack too short for its devices, but
    those on cables, whose lengths follow the units the devices could not have."""
    return [f for f in run_checks(plan) if not f.code.startswith("CABLE")]


def _read_digest(plan: Plan) -> str | None:
    """The SHA-256 of the lock as read (None: there was none), for the inputs' key and for
    what it was last rendered to: the reader's, made as it checked the trailer (lock/trailer.py
    checked_trailer), else made here."""
    held = plan.lock
    return (held.digest or text_digest(held.text)) if held.exists else None


def _outcome(plan: Plan, source: SourceMap) -> Outcome | None:
    """What the commands print of ``plan`` (write/outcome.py), kept with its inputs' key."""
    return Outcome.of(plan.findings, source, nodes=len(plan.nodes), gpus=plan.gpu_count,
                      racks=len(plan.racks), release=plan.slurm.release.version,
                      moves=bool(plan.link_moves))


def _locked(plan: Plan, spec_file: str | Path, read: str | None = None,
            made: Known | None = None) -> Locked:
    """The lock as read (``read``: its SHA-256, when made) and as ``plan`` leaves it: when
    ``made`` (what these inputs were last rendered to, write/inputs.py) names the text read,
    that text, not made again."""
    old = plan.lock  # as read, from the file it names
    before = old.text if old.exists else None
    if before is not None and made is not None and made.lock == (read or text_digest(before)):
        return Locked(Path(old.file), before, lambda: before, read)
    return Locked(Path(old.file), before, lambda: lock_text(plan, old, Path(spec_file).name),
                  read)


def _let_go(plan: Plan, locked: Locked) -> Plan:
    """``plan`` without the entries of the lock it was compiled with, once the lock's new
    text is made from them (``locked.after``): the passes and the checks have read them, and
    the emitters never do. At 100,000 GPUs the lock's 260,000 entries hold some 130 MiB,
    which a forked emitter worker would otherwise map as well (the lock's text, 14 MiB, is
    kept: the next stages compare and write it). A plan read without a lock is as it was:
    its lock's text is made after the emitters, as there is nothing to let go before them."""
    held = plan.lock
    if not held.groups:
        return plan
    _ = locked.after  # made now, from the entries about to be let go
    return replace(plan, lock=Lock(file=held.file, text=held.text, digest=held.digest,
                                   reallocated=held.reallocated))


def _checked(plan: Plan, source: SourceMap, strict: bool,
             on_findings: Findings | None) -> Plan:
    """4. checks: the capacity and consistency validator; the plan with its findings, or
    PipelineError on any error."""
    findings = run_checks(plan, strict=strict)
    plan = replace(plan, findings=tuple(findings))
    if any(f.is_error for f in findings):
        raise PipelineError(findings, source, plan)
    if on_findings is not None:
        on_findings(findings, source)
    return plan
