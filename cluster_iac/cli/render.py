"""`cluster-iac validate` and `cluster-iac render` (with --check): the spec checked, its files
rendered into a folder, or compared with the folder's."""

from __future__ import annotations

import difflib
import os
import resource
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cluster_iac.base.errors import EmitWorkerError
from cluster_iac.base.processes import PARALLEL_NODES
from cluster_iac.cli.changes import change_summary
from cluster_iac.cli.common import (
    FINDINGS,
    REALLOCATE,
    SPEC,
    STRICT,
    build_or_exit,
    fail,
    json_text,
    keep_to_exit,
    or_exit,
    output_folder,
    print_diagnostics,
    recalled_summary,
    say,
    summary,
    write_failed,
)
from cluster_iac.write.recall import Recalled, confirm_check, confirm_into, recall
from cluster_iac.write.tree import OutputRefused

if TYPE_CHECKING:
    from cluster_iac.emit.parallel import WorkerUsage
    from cluster_iac.render import Build
    from cluster_iac.write.compare import Checked


@click.command()
@SPEC
@STRICT
@REALLOCATE
@FINDINGS
def validate(spec: Path, strict: bool, reallocate: tuple[str, ...]) -> None:
    """Check SPEC, its lock and its design; exit 1 on any error. Writes nothing."""
    result = build_or_exit(spec, strict=strict, emit=False, reallocate=reallocate,
                           complete=False)  # what only the emitters read is not made
    say(f"{spec}: ok ({summary(result)})")


@click.command()
@SPEC
@click.option("-o", "--output", "out_dir", required=True, callback=output_folder,
              type=click.Path(file_okay=False), help="Output directory.")
@click.option("--check", is_flag=True,
              help="Write nothing; print the change plan (as `cluster-iac changes` does) and "
                   "a diff, and exit 1, if the output directory or the lock is stale.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that render the files: 1, or 2 (the default where two CPUs "
                   f"are free and the plan has at least {PARALLEL_NODES} nodes; a smaller "
                   "plan renders in one process, where a fork would cost more than it saves).")
@STRICT
@REALLOCATE
@FINDINGS
def render(spec: Path, out_dir: Path, check: bool, jobs: int | None, strict: bool,
           reallocate: tuple[str, ...]) -> None:
    """Render every output file of SPEC into the folder given by -o/--output, and write
    SPEC's lock beside SPEC (the identities allocated: README, 'The lock file')."""
    recalled = recall(spec, strict, reallocate)  # the outcome known: nothing to compile
    try:
        if check:
            if recalled is not None and _check_known(spec, out_dir, recalled):
                return
            from cluster_iac.render import check_against  # unknown: the pipeline (docstring)

            _check(spec, out_dir, *keep_to_exit(or_exit(spec, lambda findings: check_against(
                spec, out_dir, strict=strict, jobs=jobs, on_findings=findings,
                reallocate=reallocate))))
            return
        if recalled is not None and _render_known(spec, out_dir, recalled):
            return
        from cluster_iac.render import render_into  # unknown: the pipeline (docstring)

        result, written = keep_to_exit(or_exit(spec, lambda findings: render_into(
            spec, out_dir, strict=strict, jobs=jobs, on_findings=findings,
            reallocate=reallocate), writes=True))
    except EmitWorkerError as exc:
        fail(spec, "EMIT-WORKER", f"{exc}; nothing written")
    except OutputRefused as exc:
        fail(exc.filename, "IO-FOREIGN", f"nothing written: {exc.strerror}")
    except OSError as exc:
        write_failed(exc, out_dir)
    say(f"{out_dir}: {written.files} files, {len(written.changed)} changed "
        f"({summary(result)})")
    if result.lock is not None and result.lock.stale:
        say(f"{result.lock.path}: {'written' if result.lock.before is None else 'updated'}"
            f" (commit it with the spec)")
    _process_stats(written.workers)


def _render_known(spec: Path, out_dir: Path, recalled: Recalled) -> bool:
    """A render over a folder that holds what the inputs' known outcome names: its findings
    and summary printed as a render prints them, nothing written; False (nothing printed)
    where the folder is not confirmed (write/recall.py)."""
    done = confirm_into(out_dir, recalled, lambda: print_diagnostics(
        recalled.findings, recalled.source, str(spec)))
    if done is None:
        return False
    files, changed = done
    say(f"{out_dir}: {files} files, {len(changed)} changed ({recalled_summary(recalled)})")
    _process_stats(())
    return True


def _check_known(spec: Path, out_dir: Path, recalled: Recalled) -> bool:
    """--check over a folder that holds what the inputs' known outcome names: up to date;
    False (nothing printed) where it does not (write/recall.py)."""
    checked = confirm_check(out_dir, recalled)
    if checked is None:
        return False
    print_diagnostics(recalled.findings, recalled.source, str(spec))
    say(f"{out_dir}: up to date ({len(checked.rendered)} files)")
    _process_stats(())
    return True


def _check(spec: Path, out_dir: Path, result: Build, checked: Checked) -> None:
    """--check: the change plan (the same as `cluster-iac changes` prints) and the diff of
    the files that differ, exit 1; or up to date."""
    diff = checked.diff()
    lock = result.lock
    if lock is not None and lock.stale:
        name = str(lock.path)
        diff += "".join(difflib.unified_diff(
            (lock.before or "").splitlines(keepends=True), lock.after.splitlines(keepends=True),
            "/dev/null" if lock.before is None else f"a/{name}", f"b/{name}"))
    if diff or checked.stale:
        say(change_summary(result, checked), nl=False)
        say(diff, nl=False)
        for path in checked.found.foreign:
            click.echo(f"{out_dir / path}: not written by cluster-iac (not in its manifest); "
                       "render refuses to run until it is moved away", err=True)
        if lock is not None and lock.stale:
            click.echo(f"{lock.path}: {'missing' if lock.before is None else 'stale'}", err=True)
        click.echo(f"{out_dir}: stale; run 'cluster-iac render {spec} -o {out_dir}'", err=True)
        _process_stats(result.workers)
        sys.exit(1)
    say(f"{out_dir}: up to date ({len(checked.rendered)} files)")
    _process_stats(result.workers)


def _process_stats(workers: tuple[WorkerUsage, ...]) -> None:
    """For tests/benchmarks/bench_scale.py: with CLUSTER_IAC_PROCESS_STATS=FILE, each
    process's own peak resident set and CPU time (this one's, and the emitter worker's from
    wait4), since a parent's wait4 of this process reports only the largest peak."""
    target = os.environ.get("CLUSTER_IAC_PROCESS_STATS")
    if not target:
        return
    own = resource.getrusage(resource.RUSAGE_SELF)
    Path(target).write_text(json_text({
        "parent": {"peak_rss_kib": own.ru_maxrss, "cpu_s": own.ru_utime + own.ru_stime},
        "workers": [{"peak_rss_kib": w.peak_rss_kib, "cpu_s": w.cpu_s,
                     "forked_at_cpu_s": w.forked_at_cpu_s} for w in workers],
    }))
