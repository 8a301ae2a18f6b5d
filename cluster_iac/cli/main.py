"""The command line: the only place that prints or exits."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from cluster_iac import __version__
from cluster_iac.base.errors import Diagnostic
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.render import PARALLEL_NODES, Build, PipelineError, build, render_into

if TYPE_CHECKING:
    from cluster_iac.base.source import SourceMap
    from cluster_iac.cli.findings import FindingsLog
    from cluster_iac.emit.parallel import WorkerUsage
    from cluster_iac.plan import Plan
    from cluster_iac.render import Findings

SPEC = click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
STRICT = click.option("--strict", is_flag=True, help="Treat warnings as errors.")
REALLOCATE = click.option(
    "--reallocate", multiple=True, metavar="DEVICE",
    help="Give DEVICE new identities instead of those the lock records (repeatable); "
         "'retired' frees every identity of removed devices.")

Command = TypeVar("Command", bound=Callable[..., None])


def FINDINGS(command: Command) -> Command:  # a decorator, as SPEC and STRICT are
    """--format and --output-findings on ``command``, which runs inside ``_findings``."""

    @functools.wraps(command)
    def run(*args: object, fmt: str, findings_file: Path | None, **kwargs: Any) -> None:
        with _findings(command.__name__, kwargs["spec"], fmt, findings_file):
            command(*args, **kwargs)

    run = click.option(
        "--output-findings", "findings_file", type=click.Path(dir_okay=False, path_type=Path),
        help="With --format json or sarif: write the document to this file instead; the "
             "terminal then shows what --format text shows.")(run)
    run = click.option(
        "--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
        show_default=True, help="Findings as text for people (standard error), or as one "
        "JSON (schemas/findings.schema.json) or SARIF 2.1.0 document on standard output, "
        "where the command's other output then goes to standard error.")(run)
    return cast(Command, run)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cluster-iac")
def main() -> None:
    """Compile a GPU-cluster spec into Slurm, NCCL, Lustre, Ansible, facility and cabling files."""


@main.command()
@SPEC
@STRICT
@REALLOCATE
@FINDINGS
def validate(spec: Path, strict: bool, reallocate: tuple[str, ...]) -> None:
    """Check SPEC, its lock and its design; exit 1 on any error. Writes nothing."""
    result = _build_or_exit(spec, strict=strict, emit=False, reallocate=reallocate)
    _say(f"{spec}: ok ({_summary(result)})")


def _change_summary(out_dir: Path, result: Build) -> str:
    """render --check's head: what the stale tree's change does (cluster-iac changes)."""
    from cluster_iac.change.change_plan import change_plan, summary

    assert result.lock is not None
    plan = change_plan(_on_disk(out_dir), result.files, result.lock.before, result.lock.after,
                       (result.plan.slurm.release.version,))
    return summary(plan, objects=False)


def _output_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """-o names a folder of its own: not '' (which would be the current folder), not '/',
    not a file."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty path; name a folder, e.g. -o out", ctx, param)
    if os.path.realpath(value) == "/":
        raise click.BadParameter("the root folder; name a folder of its own", ctx, param)
    return Path(value)


@main.command()
@SPEC
@click.option("-o", "--output", "out_dir", required=True, callback=_output_folder,
              type=click.Path(file_okay=False), help="Output directory.")
@click.option("--check", is_flag=True,
              help="Write nothing; print a diff and exit 1 if the output directory is stale.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that render the files: 1, or 2 (the default where two CPUs "
                   f"are free and the plan has at least {PARALLEL_NODES} nodes; a smaller "
                   "plan renders in one process, where a fork would cost more than it "
                   "saves).")
@STRICT
@REALLOCATE
@FINDINGS
def render(spec: Path, out_dir: Path, check: bool, jobs: int | None, strict: bool,
           reallocate: tuple[str, ...]) -> None:
    """Render every output file of SPEC into the folder given by -o/--output, and write
    SPEC's lock beside SPEC (the identities allocated: README, 'The lock file')."""
    from cluster_iac.emit.parallel import EmitWorkerError
    from cluster_iac.write.tree import OutputRefused

    try:
        if check:
            _check(spec, out_dir, _keep_to_exit(_build_or_exit(
                spec, strict=strict, emit=True, jobs=jobs, reallocate=reallocate)))
            return
        result, written = _keep_to_exit(_or_exit(spec, lambda findings: render_into(
            spec, out_dir, strict=strict, jobs=jobs, on_findings=findings,
            reallocate=reallocate), writes=True))
    except EmitWorkerError as exc:
        _fail(spec, "EMIT-WORKER", f"{exc}; nothing written")
    except OutputRefused as exc:
        _fail(exc.filename, "IO-FOREIGN", f"nothing written: {exc.strerror}")
    except OSError as exc:
        _write_failed(exc, out_dir)
    _say(f"{out_dir}: {written.files} files, {len(written.changed)} changed "
         f"({_summary(result)})")
    if result.lock is not None and result.lock.stale:
        _say(f"{result.lock.path}: {'written' if result.lock.before is None else 'updated'}"
             f" (commit it with the spec)")
    _process_stats(written.workers)


def _check(spec: Path, out_dir: Path, result: Build) -> None:
    """--check: the files rendered in memory, compared with what is on disk."""
    from cluster_iac.write.tree import stale_diff

    diff = stale_diff(out_dir, result.files)
    lock = result.lock
    if lock is not None and lock.stale:
        import difflib

        name = str(lock.path)
        diff += "".join(difflib.unified_diff(
            (lock.before or "").splitlines(keepends=True), lock.after.splitlines(keepends=True),
            "/dev/null" if lock.before is None else f"a/{name}", f"b/{name}"))
    if diff:
        _say(_change_summary(out_dir, result), nl=False)
        _say(diff, nl=False)
        if lock is not None and lock.stale:
            click.echo(f"{lock.path}: {'missing' if lock.before is None else 'stale'}", err=True)
        click.echo(f"{out_dir}: stale; run 'cluster-iac render {spec} -o {out_dir}'", err=True)
        sys.exit(1)
    _say(f"{out_dir}: up to date ({len(result.files)} files)")


@main.command()
@SPEC
@click.option("-o", "--output", "out_dir", required=True, callback=_output_folder,
              type=click.Path(file_okay=False),
              help="The rendered folder: its tree (and the lock beside SPEC) is the state "
                   "the change starts from.")
@click.option("--base", metavar="GITREF",
              help="Start from the tree and lock committed at GITREF instead of what is on "
                   "disk (a pull request's base branch).")
@click.option("--release", "releases", multiple=True, metavar="VERSION",
              help="Slurm release to give the actions for (repeatable; default: the spec's).")
@click.option("--work-order", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the cabling work order here: CSV (.csv) or Markdown.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="The plan as Markdown for people, or JSON.")
@click.option("--lustre-new", is_flag=True,
              help="The Lustre file system is new: rewriting its targets is allowed.")
@STRICT
@REALLOCATE
def changes(spec: Path, out_dir: Path, base: str | None, releases: tuple[str, ...],
            work_order: Path | None, fmt: str, lustre_new: bool, strict: bool,
            reallocate: tuple[str, ...]) -> None:
    """What the change from the rendered state to SPEC does to the running cluster: objects
    added, changed and removed, the cables to lay and pull, and what to run, per Slurm
    release. Exit 1 when the change needs a Lustre target rewrite the spec does not allow."""
    from cluster_iac.change.change_plan import (
        as_json,
        change_plan,
        summary,
        work_order_csv,
        work_order_markdown,
    )
    from cluster_iac.write.tree import write_file

    result = _build_or_exit(spec, strict=strict, emit=True, reallocate=reallocate)
    lock, files = result.lock, result.files
    assert lock is not None
    lock.after  # noqa: B018  # made while the plan is here
    releases = releases or (result.plan.slurm.release.version,)
    del result  # the plan is not needed from here: its memory back before the trees are read
    import gc

    gc.collect()
    old_files, old_lock = (_committed(base, out_dir, lock.path) if base
                           else (_on_disk(out_dir), lock.before))
    try:
        plan = change_plan(old_files, files, old_lock, lock.after, releases, lustre_new)
    except ValueError as exc:  # an unknown release
        raise click.BadParameter(str(exc), param_hint="--release") from None
    click.echo(_json(as_json(plan)) if fmt == "json" else summary(plan), nl=False)
    if work_order is not None:
        write_file(work_order, work_order_csv(plan) if work_order.suffix == ".csv"
                   else work_order_markdown(plan))
    for action in plan.refused:
        click.echo(f"{spec}: error[CHANGE-LUSTRE-REWRITE] {action.why}: "
                   f"{'; '.join(action.causes)}", err=True)
        click.echo("      = hint: a formatted target keeps its fsname, index and MGS NID; "
                   "say --lustre-new only for a file system that holds no data yet", err=True)
    if plan.refused:
        sys.exit(1)


def _on_disk(out_dir: Path) -> dict[str, str] | None:
    """The rendered tree in ``out_dir`` as its manifest lists it, each file read when asked
    (a 100,000-GPU tree is 240 MiB); None when nothing was rendered there (a first
    deployment)."""
    from cluster_iac.write.tree import MANIFEST, RenderedTree

    if not (out_dir / MANIFEST).is_file():
        return None
    return RenderedTree(out_dir)  # type: ignore[return-value]


def _committed(ref: str, out_dir: Path, lock: Path) -> tuple[dict[str, str] | None, str | None]:
    """The tree and lock committed at git ``ref`` (paths as seen from here)."""
    import subprocess

    from cluster_iac.write.tree import MANIFEST

    def show(path: Path) -> str | None:
        run = subprocess.run(["git", "show", f"{ref}:./{path.as_posix()}"],
                             capture_output=True, text=True, check=False)
        return run.stdout if run.returncode == 0 else None

    if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                      capture_output=True, check=False).returncode != 0:
        raise click.BadParameter(f"'{ref}' is not a commit of this repository",
                                 param_hint="--base")
    manifest = show(out_dir / MANIFEST)
    if manifest is None:
        return None, show(lock)
    files = {}
    for line in manifest.splitlines():
        path = line.partition("  ")[2] or line
        text = show(out_dir / path)
        if text is not None:
            files[path] = text
    return files, show(lock)


@main.command("plan")
@SPEC
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Output format.")
@click.option("-o", "--output", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (atomically) instead of standard output.")
@click.option("--counts", "counts_only", is_flag=True, help="Only the counts.")
@STRICT
def plan_command(spec: Path, fmt: str, out_file: Path | None, counts_only: bool,
                 strict: bool) -> None:
    """Print the expanded plan of SPEC: counts, fabrics, NVLink domains, nodes, switches.
    A design the checks reject is printed all the same, beside its errors (exit 1)."""
    def show(plan: Plan) -> None:
        from cluster_iac.formats.yaml import ruamel_yaml_text
        from cluster_iac.plan import dump

        if counts_only:
            data = dump.counts(plan)
            text = _json(data) if fmt == "json" else ruamel_yaml_text(data)
        else:
            text = dump.to_json(plan) if fmt == "json" else dump.to_yaml(plan)
        _echo_or_write(text, out_file)

    def built_so_far(exc: PipelineError) -> None:
        if exc.plan is not None:
            show(exc.plan)

    show(_build_or_exit(spec, strict=strict, emit=False, on_error=built_so_far).plan)


@main.command()
@SPEC
@STRICT
def report(spec: Path, strict: bool) -> None:
    """Print SPEC's report.md: counts, BOM, power, cooling, predicted busbw, findings."""
    from cluster_iac.emit.report import markdown as render_report

    result = _build_or_exit(spec, strict=strict, emit=False)
    click.echo(render_report(result.plan), nl=False)


@main.command()
@click.option("--name", default="cluster", show_default=True, help="Cluster name.")
@click.option("--platform", default="hgx-h100-8gpu", show_default=True,
              help="Catalog GPU server platform of the GPU nodes.")
@click.option("--gpu", default=None, help="Catalog GPU model in place of the platform's.")
@click.option("--nodes", type=click.IntRange(1, 10_000), default=4, show_default=True,
              help="GPU nodes.")
@click.option("--fabric", type=click.Choice(["infiniband", "roce", "none"]),
              default="infiniband", show_default=True, help="Compute fabric.")
@click.option("--voltage", "voltage_v", type=click.IntRange(100, 480), default=415,
              show_default=True, help="PDU voltage, V (line to line when three-phase).")
@click.option("--phases", type=click.Choice(["1", "3"]), default="3", show_default=True,
              help="PDU phases.")
@click.option("--breaker", "breaker_a", type=click.IntRange(1, 400), default=32,
              show_default=True, help="PDU circuit breaker, A.")
@click.option("--lustre", is_flag=True, help="A Lustre file system on its own storage fabric.")
@click.option("--oss", type=click.IntRange(1, 1000), default=2, show_default=True,
              help="Lustre object storage servers.")
@click.option("--accounting", is_flag=True, help="slurmdbd accounting.")
@click.option("-o", "--output", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the spec to this new file instead of standard output.")
def init(out_file: Path | None, phases: str, **answers: object) -> None:
    """Write a starting spec that validates, from a GPU platform, a node count, the fabric
    and the racks' power; nodes per rack are the most the checks accept."""
    from cluster_iac.cli.init import Answers, InitError, starting_spec

    if out_file is not None and out_file.exists():
        raise click.BadParameter(f"{out_file} exists; name a new file", param_hint="-o")
    try:
        text = starting_spec(Answers(phases=int(phases), **answers))  # type: ignore[arg-type]
    except InitError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if _echo_or_write(text, out_file):
        click.echo(f"{out_file}: written; next: cluster-iac validate {out_file}", err=True)


@main.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """What a finding CODE means, its formula and sources, and how to fix it; without CODE,
    every code."""
    from cluster_iac.cli import explain as codes

    if code is None:
        click.echo(codes.listing(), nl=False)
        return
    text = codes.explain(code)
    if text is None:
        click.echo(f"error: no finding code '{code}'; {codes.unknown_hint(code)}", err=True)
        sys.exit(1)
    click.echo(text, nl=False)


@main.command()
def schema() -> None:
    """Print the JSON Schema of the spec."""
    from cluster_iac.spec.schema import schema_text

    click.echo(schema_text(), nl=False)


@main.command()
@click.argument("kind", required=False)
@click.argument("pattern", metavar="[FILTER]", required=False)
def catalog(kind: str | None, pattern: str | None) -> None:
    """List the built-in catalog: KIND (platforms, gpus, nics, switches...), entries whose key,
    name or figures contain FILTER, each with its key figures and source."""
    from cluster_iac.catalog.listing import UnknownKind, listing

    try:
        text = listing(kind, pattern)
    except UnknownKind as exc:
        raise click.BadParameter(str(exc), param_hint="KIND") from None
    if not text:
        click.echo(f"no {kind or 'catalog'} entry matches '{pattern}'", err=True)
        sys.exit(1)
    click.echo(text, nl=False)


def _build_or_exit(spec: Path, *, strict: bool, emit: bool, jobs: int | None = 1,
                   reallocate: tuple[str, ...] = (),
                   on_error: Callable[[PipelineError], object] | None = None) -> Build:
    return _or_exit(spec, lambda findings: build(spec, strict=strict, emit=emit, jobs=jobs,
                                                 on_findings=findings, reallocate=reallocate),
                    on_error=on_error)


Run = TypeVar("Run")
_kept: list[object] | None = None
"""Set by run(): what render built is kept here to the process's end, which os._exit makes
at once, so that a 100,000-GPU plan's millions of objects are not freed one by one when the
command returns (0.14 s of CPU); None where main is called in-process (tests). Not for a
command that lets its plan go to make room for what it does next (changes)."""


def _or_exit(spec: Path, run: Callable[[Findings], Run], *, writes: bool = False,
             on_error: Callable[[PipelineError], object] | None = None) -> Run:
    """``run`` the pipeline, its findings printed as soon as the checks have passed; on an
    error, ``on_error`` told first (plan prints what was built), every diagnostic printed
    and exit 1. ``writes``: the command writes files, so the last line says none were."""
    try:
        return run(lambda findings, source: _print_diagnostics(findings, source, str(spec)))
    except PipelineError as exc:
        if on_error is not None:
            on_error(exc)
        _print_diagnostics(exc.diagnostics, exc.source, str(spec))
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        click.echo(f"{spec}: {errors} error(s){'; nothing written' if writes else ''}",
                   err=True)
        sys.exit(1)


def _keep_to_exit(built: Run) -> Run:
    """``built``, kept to the process's end where run() says so (_kept)."""
    if _kept is not None:
        _kept.append(built)
    return built


def _echo_or_write(text: str, out_file: Path | None) -> bool:
    """``text`` on standard output, or written (atomically) to ``out_file``: True when
    written; a file the OS refuses is IO-WRITE."""
    if out_file is None:
        click.echo(text, nl=False)
        return False
    from cluster_iac.write.tree import write_file

    try:
        write_file(out_file, text)
    except OSError as exc:
        _write_failed(exc, out_file)
    return True


def _write_failed(exc: OSError, target: Path) -> NoReturn:
    """A file the OS refused (permissions, a file where a folder must be): say which, exit 1."""
    where = exc.filename or target
    _fail(where, "IO-WRITE", f"cannot write output: {exc.strerror or exc}")


def _fail(where: object, code: str, message: str) -> NoReturn:
    """An error about an output file or the emitter worker, not about a spec line: said,
    listed among the findings of --format json or sarif, exit 1."""
    click.echo(f"{where}: error[{code}] {message}", err=True)
    if _MACHINE is not None:
        _MACHINE.add_outside(code, str(where), message)
    sys.exit(1)


def _print_diagnostics(diagnostics: list[Diagnostic], source: SourceMap | None,
                       file: str) -> None:
    if _MACHINE is not None:
        _MACHINE.add(diagnostics, source)
        if _MACHINE_ON_STDOUT:
            return
    for diag in diagnostics:
        click.echo(format_diagnostic(diag, source, file), err=True)


_MACHINE: FindingsLog | None = None  # this run's findings, with --format json or sarif
_MACHINE_ON_STDOUT = False  # ... and the document goes to standard output


@contextlib.contextmanager
def _findings(command: str, spec: Path, fmt: str, file: Path | None) -> Iterator[None]:
    """With --format json or sarif, every finding of the block (cli/findings.py), written
    once at its end, on success and on exit 1 alike; text: nothing to do."""
    global _MACHINE, _MACHINE_ON_STDOUT
    if fmt == "text":
        if file is not None:
            raise click.UsageError("--output-findings needs --format json or sarif")
        yield
        return
    from cluster_iac.cli.findings import FindingsLog

    log = FindingsLog(command, str(spec))
    _MACHINE, _MACHINE_ON_STDOUT = log, file is None
    code = 1  # unless the block ends normally or says otherwise
    try:
        yield
        code = 0
    except SystemExit as exc:
        code = 1 if isinstance(exc.code, str) else int(exc.code or 0)
        raise
    finally:
        _MACHINE, _MACHINE_ON_STDOUT = None, False
        text = json.dumps(log.document(fmt, code), indent=2, sort_keys=True,
                          allow_nan=False) + "\n"
        if file is None:
            click.echo(text, nl=False)
        else:
            _write_findings(file, text)


def _write_findings(file: Path, text: str) -> None:
    from cluster_iac.write.tree import write_file

    try:
        write_file(file, text)
    except OSError as exc:
        _write_failed(exc, file)


def _say(text: str, nl: bool = True) -> None:
    """A line for people: on standard output, unless a findings document goes there."""
    click.echo(text, nl=nl, err=_MACHINE_ON_STDOUT)


def _summary(result: Build) -> str:
    plan = result.plan
    return (f"{len(plan.nodes)} nodes, {plan.gpu_count} GPUs, {len(plan.racks)} racks, "
            f"{len(result.findings)} finding(s)")


def _process_stats(workers: tuple[WorkerUsage, ...]) -> None:
    """For tests/benchmarks/bench_scale.py: with CLUSTER_IAC_PROCESS_STATS=FILE, each
    process's own peak resident set and CPU time (this one's, and the emitter worker's from
    wait4), since a parent's wait4 of this process reports only the largest peak."""
    target = os.environ.get("CLUSTER_IAC_PROCESS_STATS")
    if not target:
        return
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    Path(target).write_text(_json({
        "parent": {"peak_rss_kib": own.ru_maxrss, "cpu_s": own.ru_utime + own.ru_stime},
        "workers": [{"peak_rss_kib": w.peak_rss_kib, "cpu_s": w.cpu_s,
                     "forked_at_cpu_s": w.forked_at_cpu_s} for w in workers],
    }))


def _json(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def run() -> NoReturn:
    """The program: ``main`` without the interpreter's slow parts a one-shot run does not need.

    The cyclic garbage collector is off (the pipeline builds large, long-lived tables and
    makes little cyclic garbage; collecting would walk millions of objects again and again),
    and once the output is written and flushed the process ends at once instead of freeing
    every object one by one. pydantic does not look for plugins (unless the environment says
    otherwise): it would read the entry points of every installed distribution when the first
    spec model is made, for plugins that instrument models, which ours are not meant to be.
    Tests call ``main`` in-process and keep the usual behaviour.
    """
    import gc
    import os

    global _kept
    gc.disable()
    _kept = []
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        main()
        code: int = 0
    except SystemExit as exc:  # click ends every command so, even on success
        if isinstance(exc.code, str):
            click.echo(exc.code, err=True)
        code = 1 if isinstance(exc.code, str) else int(exc.code or 0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a closed pipe (cluster-iac report | head): nothing more to say
            code = code or 1
    os._exit(code)


from cluster_iac.cli.fabric import fabric  # noqa: E402  (its own module: the fabric commands)

main.add_command(fabric)

from cluster_iac.cli.acceptance import acceptance  # noqa: E402  (its own module)

main.add_command(acceptance)

from cluster_iac.cli.reconcile import reconcile_command  # noqa: E402  (its own module)

main.add_command(reconcile_command)
