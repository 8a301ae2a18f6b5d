"""`cluster-iac reconcile SPEC DISCOVERY...`: what a delivered cluster reports about itself
against its design, as a punch list by object and place; with --accept, the facts of
delivered hardware (MACs, serials, GUIDs) recorded in the lock."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cluster_iac.cli.common import build_or_exit, keep_to_exit, print_diagnostics
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.text import lock_text
from cluster_iac.render import PipelineError, compile_on_through, compile_through
from cluster_iac.write.files import write_file
from cluster_iac.write.recall import recall

if TYPE_CHECKING:
    from cluster_iac.plan import Plan
    from cluster_iac.reconcile.accept import Fact
    from cluster_iac.reconcile.finding import Finding
    from cluster_iac.reconcile.run import Outcome, Read


def _as(value: tuple[str, ...]) -> list[tuple[str, Path]]:
    """--as KIND=FILE pairs; a kind no source reads is a usage error."""
    from cluster_iac.reconcile.sources import SOURCES

    pairs = []
    for item in value:
        kind, sep, file = item.partition("=")
        if not sep or kind not in SOURCES or not file:
            raise click.BadParameter(f"{item!r} is not KIND=FILE with KIND one of "
                                     f"{', '.join(SOURCES)}", param_hint="'--as'")
        pairs.append((kind, Path(file)))
    return pairs


def _files(paths: tuple[Path, ...]) -> list[Path]:
    """The paths given, each folder replaced by the files in it (sorted; hidden ones and
    subfolders left out)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        else:
            out.append(path)
    return out


@click.command("reconcile")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("discovery", nargs=-1, type=click.Path(path_type=Path))
@click.option("--as", "named", multiple=True, metavar="KIND=FILE",
              help="A discovery file and its kind (ibnetdiscover, slurmd, nvidia-smi, "
                   "nvidia-smi-topo, lspci, redfish, lldp, pdu), where its content does not "
                   "tell it.")
@click.option("--accept", is_flag=True,
              help="Record the facts of delivered hardware the files report (MACs, serials, "
                   "GUIDs) in SPEC's lock, from which render writes Kea's reservations, "
                   "NetBox's serials and OpenSM's GUID files. Nothing is written when one "
                   "contradicts the lock.")
def reconcile_command(spec: Path, discovery: tuple[Path, ...], named: tuple[str, ...],
                      accept: bool) -> None:
    """Compare DISCOVERY files (any mix of `ibnetdiscover`, `slurmd -C`, `nvidia-smi -q -x`,
    `nvidia-smi topo -m`, `lspci -tv`,
    Redfish Systems/Power/EthernetInterface JSON, `lldpcli show neighbors -f json` (or EOS's
    `show lldp neighbors detail | json`) and PDU outlet readings, each told by its content;
    a per-host or per-device file named HOST.<anything>; a folder stands for the files in
    it) with SPEC's plan: print every difference by object and place with what to do, and
    every file that cannot be read with its line; exit 1 on any, 0 when the delivered
    cluster is as planned. The facts the lock does not hold yet are counted; --accept writes
    them to the lock."""
    from cluster_iac.reconcile.run import read_files

    files = [(None, path) for path in _files(discovery)] + _as(named)
    if not files:
        raise click.UsageError("give at least one DISCOVERY file")
    plan, outcome, new, conflicts = _judged(spec, accept, read_files(files))
    findings = outcome.findings + conflicts
    for error in outcome.errors:
        click.echo(error.text(), err=True)
    for finding in findings:
        click.echo(f"{finding.file}: {finding.line()}")
    _facts(spec, plan, new, conflicts, accept)
    judged = ", ".join(f"{n} {kind}" for kind, n in outcome.judged.items()) or "no file"
    if findings or outcome.errors:
        click.echo(f"{len(findings)} difference(s) from the plan, "
                   f"{len(outcome.errors)} file(s) not read ({judged} judged)", err=True)
        sys.exit(1)
    click.echo(f"the delivered cluster matches the plan ({judged} judged)")


def _judged(spec: Path, accept: bool, read: Read) -> tuple[Plan, Outcome, list[Fact],
                                                          list[Finding]]:
    """The files read judged against SPEC's plan (its findings printed): (the plan, the
    outcome, the facts the lock does not hold yet, the facts that contradict it). Where a
    render knows the outcome of SPEC and its lock (write/recall.py: they compile and pass
    the checks, with these findings), the plan is compiled only as far as the sources read
    it and the checks are not run again: first as far as the files need to tell whether
    they agree with it (sources.EARLY: an InfiniBand discovery, through build_fabric), then,
    where they do not, on through the passes that describe a difference (NEEDS). Otherwise,
    and with --accept (which writes the lock from the whole plan), the pipeline as validate
    runs it, but for what only the emitters read (compile.EMIT_ONLY): no source compares
    it."""
    from cluster_iac.reconcile.run import judged

    recalled = None if accept else recall(spec, False, ())
    if recalled is not None:
        try:
            plan, outcome, new, conflicts = _known(spec, read)
        except PipelineError:  # not the inputs the render knew after all: the whole path
            recalled = None
    if recalled is None:
        plan = build_or_exit(spec, strict=False, emit=False, complete=False).plan
        outcome = judged(plan, read)
        return (plan, outcome, *_facts_judged(plan, outcome))
    print_diagnostics(recalled.findings, recalled.source, str(spec))
    return keep_to_exit(plan), outcome, new, conflicts


def _known(spec: Path, read: Read) -> tuple[Plan, Outcome, list[Fact], list[Finding]]:
    """_judged where a render knows SPEC's outcome: the plan through sources.EARLY's passes
    where every kind read has one and the files agree with it (no finding, no fact
    contradicting the lock), else through NEEDS' (compiled on from the earlier plan);
    PipelineError where the spec does not compile after all."""
    from cluster_iac.reconcile.run import agree, judged
    from cluster_iac.reconcile.sources import last_early, last_needed

    early = last_early(read.files)
    last = last_needed(read.files) if read.files else last_needed()
    if early is None:
        plan = compile_through(spec, last)
    else:
        plan = compile_through(spec, early)
        if agree(plan, read):
            outcome = judged(plan, read)
            new, conflicts = _facts_judged(plan, outcome)
            if not outcome.findings and not conflicts:
                return plan, outcome, new, conflicts
        plan = compile_on_through(spec, plan, early, last)
    outcome = judged(plan, read)
    return (plan, outcome, *_facts_judged(plan, outcome))


def _facts_judged(plan: Plan, outcome: Outcome) -> tuple[list[Fact], list[Finding]]:
    """accept.judge of the outcome's facts: (new ones, conflicts)."""
    from cluster_iac.reconcile.accept import judge

    return judge(plan, outcome.facts)


def _facts(spec: Path, plan: Plan, new: list[Fact], conflicts: list[Finding],
           accept: bool) -> None:
    """Say what the lock does not hold yet; with ``accept`` and no conflict, write it."""
    from cluster_iac.reconcile.accept import accepted, by_kind

    counts = ", ".join(f"{n} {kind}" for kind, n in by_kind(new))
    if accept and conflicts:
        click.echo(f"{counts or 'no new fact'} accepted: the lock is unchanged while a fact "
                   "contradicts it", err=True)
        return
    if not new:
        return
    if not accept:
        click.echo(f"{counts} the lock does not hold yet: --accept records them", err=True)
        return
    lock = lock_path(spec)
    text = lock_text(accepted(plan, new), plan.lock, spec.name)
    try:
        write_file(lock, text)
    except OSError as exc:
        click.echo(f"{exc.filename or lock}: error[IO-WRITE] {exc.strerror or exc}", err=True)
        sys.exit(1)
    click.echo(f"{lock}: {counts} accepted; render writes them (Kea's reservations, "
               "NetBox's serials, OpenSM's GUID files)", err=True)
