"""The pipeline, top to bottom: load -> spec -> compile -> checks -> emit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from cluster_iac.errors import CompileError, Diagnostic
from cluster_iac.plan import Plan
from cluster_iac.source import SourceMap

if TYPE_CHECKING:
    from cluster_iac.emit.parallel import WorkerUsage


@dataclass(frozen=True)
class Build:
    """What one run of the pipeline produced."""

    plan: Plan
    findings: list[Diagnostic]
    files: dict[str, str]
    source: SourceMap
    workers: tuple[WorkerUsage, ...] = ()  # the emitter worker's usage when one was forked


class PipelineError(Exception):
    """A stage failed; carries its diagnostics and the source map to locate them."""

    def __init__(self, diagnostics: list[Diagnostic], source: SourceMap | None):
        self.diagnostics = diagnostics
        self.source = source
        super().__init__(f"{len(diagnostics)} problem(s)")


def build(spec_file: str | Path, *, strict: bool = False, emit: bool = True,
          jobs: int = 1) -> Build:
    """Run the whole pipeline in memory; raise PipelineError on any error finding. ``jobs``
    2 or more renders on two processes (emit/parallel.py)."""
    from cluster_iac.checks import run_checks
    from cluster_iac.compile import compile_plan
    from cluster_iac.loader import load_spec_file
    from cluster_iac.spec.parse import parse_spec

    source = None
    try:
        # 1. load: YAML with positions
        data, source = load_spec_file(spec_file)
        # 2. spec: validated pydantic models
        spec = parse_spec(data)
        # 3. compile: passes expand the spec into the plan and its graphs
        plan = compile_plan(spec)
    except CompileError as exc:
        raise PipelineError(exc.diagnostics, source or exc.source) from None
    # 4. checks: the capacity and consistency validator
    findings = run_checks(plan, strict=strict)
    if any(f.is_error for f in findings):
        raise PipelineError(findings, source)
    # 5. emit: every output file, in memory (report.md lists the findings); the CLI writes
    # them as they are made instead (render_into)
    plan = replace(plan, findings=tuple(findings))
    files: dict[str, str] = {}
    workers: tuple[WorkerUsage, ...] = ()
    try:
        if emit:  # emitters and their templates load only when rendering
            from cluster_iac.emit import render_files

            files, workers = render_files(plan, jobs)
        else:  # what only the emitters read, made here so that a design is checked whole
            plan.cables  # noqa: B018
    except CompileError as exc:  # the cable table (plan.cables), wherever it was made
        raise PipelineError([*findings, *exc.diagnostics], source) from None
    return Build(plan=plan, findings=findings, files=files, source=source, workers=workers)


@dataclass(frozen=True)
class Written:
    """What rendering into a folder did."""

    files: int  # the files of the tree, not counting the manifest
    changed: list[str]  # the paths that changed or were removed
    workers: tuple[WorkerUsage, ...] = ()


def render_into(plan: Plan, out_dir: Path, jobs: int = 1) -> Written:
    """Render every file of a built plan straight into the tree at ``out_dir``, replaced as a
    whole (writer.py): each family's files go to disk as soon as they are made, in the
    process that made them, so no process holds the whole output. Raises what write_tree
    raises, and an emitter's error or EmitWorkerError with the output left as it was."""
    from cluster_iac.emit import render_each
    from cluster_iac.writer import staged_tree

    with staged_tree(out_dir) as tree:
        digests, workers = render_each(plan, jobs, tree.write_all)
        changed = tree.commit(digests)
    return Written(files=len(digests), changed=changed, workers=workers)
