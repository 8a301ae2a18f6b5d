"""`cluster-iac reconcile SPEC DISCOVERY...`: what a delivered cluster reports about itself
against its design, as a punch list by object and place."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cluster_iac.cli.common import build_or_exit


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
                   "redfish, lldp), where its content does not tell it.")
def reconcile_command(spec: Path, discovery: tuple[Path, ...], named: tuple[str, ...]) -> None:
    """Compare DISCOVERY files (any mix of `ibnetdiscover`, `slurmd -C`, `nvidia-smi -q -x`,
    Redfish Systems/Power JSON and `lldpcli show neighbors -f json`, each told by its
    content; a per-host or per-device file named HOST.<anything>; a folder stands for the
    files in it) with SPEC's plan: print every difference by object and place with what to
    do, and every file that cannot be read with its line; exit 1 on any, 0 when the
    delivered cluster is as planned."""
    from cluster_iac.reconcile.run import reconcile

    files = [(None, path) for path in _files(discovery)] + _as(named)
    if not files:
        raise click.UsageError("give at least one DISCOVERY file")
    plan = build_or_exit(spec, strict=False, emit=False).plan
    outcome = reconcile(plan, files)
    for error in outcome.errors:
        click.echo(error.text(), err=True)
    for finding in outcome.findings:
        click.echo(f"{finding.file}: {finding.line()}")
    judged = ", ".join(f"{n} {kind}" for kind, n in outcome.judged.items()) or "no file"
    if outcome.findings or outcome.errors:
        click.echo(f"{len(outcome.findings)} difference(s) from the plan, "
                   f"{len(outcome.errors)} file(s) not read ({judged} judged)", err=True)
        sys.exit(1)
    click.echo(f"the delivered cluster matches the plan ({judged} judged)")
