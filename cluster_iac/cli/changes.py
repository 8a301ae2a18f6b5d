"""`cluster-iac changes`: what the change from the rendered state to the spec does to the
running cluster; and the head `render --check` prints above its diff, the same plan.

cluster_iac.change.change_plan (tens of milliseconds to load) is imported inside the two
functions that use it, so that validate, render and the other commands start without it; and
the pipeline (cluster_iac.render: the spec models, compile, checks) inside ``_planned``, the
one that compiles, so that `changes` over a folder already current (write/recall.py) runs
without it. Neither hides a circle: neither imports the CLI (tests/test_house.py).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cluster_iac.cli.common import (
    REALLOCATE,
    SPEC,
    STRICT,
    build_or_exit,
    json_text,
    or_exit,
    output_folder,
    print_diagnostics,
)
from cluster_iac.write.files import write_file
from cluster_iac.write.manifest import MANIFEST
from cluster_iac.write.recall import confirm_check, recall

if TYPE_CHECKING:
    from cluster_iac.render import Build
    from cluster_iac.write.compare import Checked


@click.command()
@SPEC
@click.option("-o", "--output", "out_dir", required=True, callback=output_folder,
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
    # on demand: see the module docstring
    from cluster_iac.change.change_plan import (
        as_json,
        change_plan,
        summary,
        work_order_csv,
        work_order_markdown,
    )

    old_files: Mapping[str, str] | None
    old_lock: str | None
    recalled = None if base else recall(spec, strict, reallocate)
    checked = None if recalled is None else confirm_check(out_dir, recalled)
    if recalled is not None and checked is not None and not recalled.outcome.moves:
        # the tree and the lock current, the outcome known (write/recall.py): no plan made
        print_diagnostics(recalled.findings, recalled.source, str(spec))
        old_files, files = checked.trees()
        differ: set[str] | None = checked.changed
        old_lock, new_lock = recalled.lock_text, recalled.lock_text
        releases = releases or (recalled.outcome.release,)
        moved_links: tuple[object, ...] = ()
    else:
        old_files, files, differ, old_lock, new_lock, releases, moved_links = _planned(
            spec, out_dir, base, releases, strict, reallocate)
    try:
        plan = change_plan(old_files, files, old_lock, new_lock,  # type: ignore[arg-type]
                           releases, lustre_new, moved_links, differ=differ)
    except ValueError as exc:  # an unknown release
        raise click.BadParameter(str(exc), param_hint="--release") from None
    click.echo(json_text(as_json(plan)) if fmt == "json" else summary(plan), nl=False)
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


def _planned(spec: Path, out_dir: Path, base: str | None, releases: tuple[str, ...],
             strict: bool, reallocate: tuple[str, ...]) -> tuple[
                 Mapping[str, str] | None, Mapping[str, str], set[str] | None, str | None, str,
                 tuple[str, ...], tuple[object, ...]]:
    """The change's two trees and locks from the spec's plan (compiled, checked, its
    findings printed), the files that may differ (None: any), the releases and the plan's
    moved cables."""
    from cluster_iac.render import check_against  # the pipeline: see the module docstring

    if base:
        result = build_or_exit(spec, strict=strict, emit=True, reallocate=reallocate,
                               keep=False)  # let go below
        files: Mapping[str, str] = result.files
        differ = None
    else:  # as render --check compares: only the files that differ are held and read twice
        result, checked = or_exit(spec, lambda findings: check_against(
            spec, out_dir, strict=strict, on_findings=findings, reallocate=reallocate))
        old_tree, files = checked.trees()
        differ = checked.changed
    lock = result.lock
    assert lock is not None
    lock.after  # noqa: B018  # made while the plan is here
    releases = releases or (result.plan.slurm.release.version,)
    moved_links = result.plan.link_moves
    del result  # the plan is not needed from here: its memory back before the trees are read
    if base:  # the whole rendered tree was held: a collection returns what cycles kept
        gc.collect()
    old_files, old_lock = (_committed(base, out_dir, lock.path) if base
                           else (old_tree, lock.before))
    return old_files, files, differ, old_lock, lock.after, releases, moved_links


def change_summary(result: Build, checked: Checked) -> str:
    """render --check's head: the plan `cluster-iac changes` prints for the same spec and
    folder, from the files that differ (the others read from the folder when asked)."""
    # on demand: see the module docstring
    from cluster_iac.change.change_plan import change_plan, summary

    assert result.lock is not None
    old, new = checked.trees()
    plan = change_plan(old, new, result.lock.before,  # type: ignore[arg-type]
                       result.lock.after, (result.plan.slurm.release.version,),
                       moved_links=result.plan.link_moves, differ=checked.changed)
    return summary(plan)


def _committed(ref: str, out_dir: Path, lock: Path) -> tuple[dict[str, str] | None, str | None]:
    """The tree and lock committed at git ``ref`` (paths as seen from here)."""
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
