"""The command line: the only place that prints or exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click

from cluster_iac import __version__
from cluster_iac.console import format_diagnostic
from cluster_iac.errors import Diagnostic
from cluster_iac.render import PARALLEL_NODES, Build, PipelineError, build, render_into

if TYPE_CHECKING:
    from cluster_iac.emit.parallel import WorkerUsage
    from cluster_iac.plan import Plan
    from cluster_iac.render import Findings
    from cluster_iac.source import SourceMap

SPEC = click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
STRICT = click.option("--strict", is_flag=True, help="Treat warnings as errors.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cluster-iac")
def main() -> None:
    """Compile a GPU-cluster spec into Slurm, NCCL, Lustre, Ansible, facility and cabling files."""


@main.command()
@SPEC
@STRICT
def validate(spec: Path, strict: bool) -> None:
    """Check SPEC and its design; exit 1 on any error."""
    result = _build_or_exit(spec, strict=strict, emit=False)
    click.echo(f"{spec}: ok ({_summary(result)})")


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
def render(spec: Path, out_dir: Path, check: bool, jobs: int | None, strict: bool) -> None:
    """Render every output file of SPEC into the folder given by -o/--output."""
    from cluster_iac.emit.parallel import EmitWorkerError
    from cluster_iac.writer import OutputRefused

    try:
        if check:
            _check(spec, out_dir, _build_or_exit(spec, strict=strict, emit=True, jobs=jobs))
            return
        result, written = _or_exit(spec, lambda findings: render_into(
            spec, out_dir, strict=strict, jobs=jobs, on_findings=findings), writes=True)
    except EmitWorkerError as exc:
        click.echo(f"{spec}: error[EMIT-WORKER] {exc}; nothing written", err=True)
        sys.exit(1)
    except OutputRefused as exc:
        click.echo(f"{exc.filename}: error[IO-FOREIGN] nothing written: {exc.strerror}", err=True)
        sys.exit(1)
    except OSError as exc:
        _write_failed(exc, out_dir)
    click.echo(f"{out_dir}: {written.files} files, {len(written.changed)} changed "
               f"({_summary(result)})")
    _process_stats(written.workers)


def _check(spec: Path, out_dir: Path, result: Build) -> None:
    """--check: the files rendered in memory, compared with what is on disk."""
    from cluster_iac.writer import stale_diff

    diff = stale_diff(out_dir, result.files)
    if diff:
        click.echo(diff, nl=False)
        click.echo(f"{out_dir}: stale; run 'cluster-iac render {spec} -o {out_dir}'", err=True)
        sys.exit(1)
    click.echo(f"{out_dir}: up to date ({len(result.files)} files)")


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
        from cluster_iac.plan import dump

        if counts_only:
            data = dump.counts(plan)
            text = _json(data) if fmt == "json" else dump.yaml_text(data)
        else:
            text = dump.to_json(plan) if fmt == "json" else dump.to_yaml(plan)
        if out_file is None:
            click.echo(text, nl=False)
            return
        from cluster_iac.writer import write_file

        try:
            write_file(out_file, text)
        except OSError as exc:
            _write_failed(exc, out_file)

    def built_so_far(exc: PipelineError) -> None:
        if exc.plan is not None:
            show(exc.plan)

    show(_build_or_exit(spec, strict=strict, emit=False, on_error=built_so_far).plan)


@main.command()
@SPEC
@STRICT
def report(spec: Path, strict: bool) -> None:
    """Print SPEC's report.md: counts, BOM, power, cooling, predicted busbw, findings."""
    from cluster_iac.emit.report import render as render_report

    result = _build_or_exit(spec, strict=strict, emit=False)
    click.echo(render_report(result.plan)["report.md"], nl=False)


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
    from cluster_iac.init import Answers, InitError, starting_spec

    if out_file is not None and out_file.exists():
        raise click.BadParameter(f"{out_file} exists; name a new file", param_hint="-o")
    try:
        text = starting_spec(Answers(phases=int(phases), **answers))  # type: ignore[arg-type]
    except InitError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if out_file is None:
        click.echo(text, nl=False)
        return
    from cluster_iac.writer import write_file

    try:
        write_file(out_file, text)
    except OSError as exc:
        _write_failed(exc, out_file)
    click.echo(f"{out_file}: written; next: cluster-iac validate {out_file}", err=True)


@main.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """What a finding CODE means, its formula and sources, and how to fix it; without CODE,
    every code."""
    from cluster_iac import explain as codes

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


def _build_or_exit(spec: Path, *, strict: bool, emit: bool, jobs: int | None = 1,
                   on_error: Callable[[PipelineError], object] | None = None) -> Build:
    return _or_exit(spec, lambda findings: build(spec, strict=strict, emit=emit, jobs=jobs,
                                                 on_findings=findings), on_error=on_error)


Run = TypeVar("Run")


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


def _write_failed(exc: OSError, target: Path) -> NoReturn:
    """A file the OS refused (permissions, a file where a folder must be): say which, exit 1."""
    where = exc.filename or target
    click.echo(f"{where}: error[IO-WRITE] cannot write output: {exc.strerror or exc}", err=True)
    sys.exit(1)


def _print_diagnostics(diagnostics: list[Diagnostic], source: SourceMap | None,
                       file: str) -> None:
    for diag in diagnostics:
        click.echo(format_diagnostic(diag, source, file), err=True)


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

    gc.disable()
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
