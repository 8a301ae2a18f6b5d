"""What the commands share: their common arguments and options (SPEC, --strict,
--reallocate, --format and --output-findings), running the pipeline with its findings
printed and exit 1 on an error, and the lines and files a command writes.

The command modules (cli/render.py, changes.py, plan.py, guide.py, fabric.py,
acceptance.py) import this one; cli/main.py imports each when its command runs. This module
imports no command.

The pipeline (cluster_iac.render: the spec models, the compile passes, the checks; a third of
a second of CPU to import) is imported inside the two functions that run it, not at the top:
a render or `changes` over a folder already current answers from write/recall.py and never
needs it (tests/test_startup.py). A dependency cut, not a hidden circle: cluster_iac.render
imports nothing of the CLI (tests/test_house.py).
"""

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

from cluster_iac.base.errors import Diagnostic
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.write.files import write_file

if TYPE_CHECKING:
    from cluster_iac.base.source import SourceMap
    from cluster_iac.cli.findings import FindingsLog
    from cluster_iac.render import Build, Findings, PipelineError
    from cluster_iac.write.recall import Recalled

SPEC = click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
STRICT = click.option("--strict", is_flag=True, help="Treat warnings as errors.")
REALLOCATE = click.option(
    "--reallocate", multiple=True, metavar="DEVICE",
    help="Give DEVICE new identities instead of those the lock records (repeatable); "
         "'retired' frees every identity of removed devices.")

Command = TypeVar("Command", bound=Callable[..., None])


def FINDINGS(command: Command) -> Command:  # a decorator, as SPEC and STRICT are
    """--format and --output-findings on ``command``, which runs inside
    ``findings_document``."""

    @functools.wraps(command)
    def run(*args: object, fmt: str, findings_file: Path | None, **kwargs: Any) -> None:
        with findings_document(command.__name__, kwargs["spec"], fmt, findings_file):
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


def output_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """-o names a folder of its own: not '' (which would be the current folder), not '/',
    not a file."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty path; name a folder, e.g. -o out", ctx, param)
    if os.path.realpath(value) == "/":
        raise click.BadParameter("the root folder; name a folder of its own", ctx, param)
    return Path(value)


def build_or_exit(spec: Path, *, strict: bool, emit: bool, jobs: int | None = 1,
                  reallocate: tuple[str, ...] = (),
                  on_error: Callable[[PipelineError], object] | None = None,
                  complete: bool = True, keep: bool = True) -> Build:
    """The pipeline (render.build), or exit 1 on its errors (or_exit); what it built kept
    to the process's end (keep_to_exit) unless ``keep`` is False (a command that lets the
    plan go to make room for what it does next)."""
    from cluster_iac.render import build  # the pipeline, where it runs: module docstring

    built = or_exit(spec, lambda findings: build(spec, strict=strict, emit=emit, jobs=jobs,
                                                 on_findings=findings, reallocate=reallocate,
                                                 complete=complete),
                    on_error=on_error)
    return keep_to_exit(built) if keep else built


Run = TypeVar("Run")
_kept: list[object] | None = None
"""Set by keep_builds() (cli/main.py's run): what a command built is kept here to the process's
end, which os._exit makes at once, so that a 100,000-GPU plan's millions of objects are not
freed one by one when the command returns (0.14 s of CPU); None where main is called
in-process (tests). Not for a command that lets its plan go to make room for what it does
next (changes)."""


def keep_builds() -> None:
    """From now on, keep_to_exit keeps what it is given (_kept)."""
    global _kept
    _kept = []


def or_exit(spec: Path, run: Callable[[Findings], Run], *, writes: bool = False,
            on_error: Callable[[PipelineError], object] | None = None) -> Run:
    """``run`` the pipeline, its findings printed as soon as the checks have passed; on an
    error, ``on_error`` told first (plan prints what was built), every diagnostic printed
    and exit 1. ``writes``: the command writes files, so the last line says none were."""
    from cluster_iac.render import PipelineError  # the pipeline, where it runs: docstring

    try:
        return run(lambda findings, source: print_diagnostics(findings, source, str(spec)))
    except PipelineError as exc:
        if on_error is not None:
            on_error(exc)
        print_diagnostics(exc.diagnostics, exc.source, str(spec))
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        click.echo(f"{spec}: {errors} error(s){'; nothing written' if writes else ''}",
                   err=True)
        sys.exit(1)


def keep_to_exit(built: Run) -> Run:
    """``built``, kept to the process's end where run() says so (_kept)."""
    if _kept is not None:
        _kept.append(built)
    return built


def echo_or_write(text: str, out_file: Path | None) -> bool:
    """``text`` on standard output, or written (atomically) to ``out_file``: True when
    written; a file the OS refuses is IO-WRITE."""
    if out_file is None:
        click.echo(text, nl=False)
        return False
    try:
        write_file(out_file, text)
    except OSError as exc:
        write_failed(exc, out_file)
    return True


def write_failed(exc: OSError, target: Path) -> NoReturn:
    """A file the OS refused (permissions, a file where a folder must be): say which, exit 1."""
    where = exc.filename or target
    fail(where, "IO-WRITE", f"cannot write output: {exc.strerror or exc}")


def fail(where: object, code: str, message: str) -> NoReturn:
    """An error about an output file or the emitter worker, not about a spec line: said,
    listed among the findings of --format json or sarif, exit 1."""
    click.echo(f"{where}: error[{code}] {message}", err=True)
    if _MACHINE is not None:
        _MACHINE.add_outside(code, str(where), message)
    sys.exit(1)


def print_diagnostics(diagnostics: list[Diagnostic], source: SourceMap | None,
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
def findings_document(command: str, spec: Path, fmt: str, file: Path | None) -> Iterator[None]:
    """With --format json or sarif, every finding of the block (cli/findings.py), written
    once at its end, on success and on exit 1 alike; text: nothing to do."""
    global _MACHINE, _MACHINE_ON_STDOUT
    if fmt == "text":
        if file is not None:
            raise click.UsageError("--output-findings needs --format json or sarif")
        yield
        return
    # Here, not at the top: a run with --format text (the default) never loads it.
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
    try:
        write_file(file, text)
    except OSError as exc:
        write_failed(exc, file)


def say(text: str, nl: bool = True) -> None:
    """A line for people: on standard output, unless a findings document goes there."""
    click.echo(text, nl=nl, err=_MACHINE_ON_STDOUT)


def summary(result: Build) -> str:
    plan = result.plan
    return counts(len(plan.nodes), plan.gpu_count, len(plan.racks), len(result.findings))


def recalled_summary(recalled: Recalled) -> str:
    """``summary`` of the plan whose outcome the cache knows (write/recall.py)."""
    known = recalled.outcome
    return counts(known.nodes, known.gpus, known.racks, len(known.findings))


def counts(nodes: int, gpus: int, racks: int, findings: int) -> str:
    return f"{nodes} nodes, {gpus} GPUs, {racks} racks, {findings} finding(s)"


def json_text(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
