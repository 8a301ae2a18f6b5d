"""`cluster-iac acceptance ...`: the acceptance jobs' results against the plan's bars.

cluster_iac.acceptance is imported inside the command, so that the other commands start
without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group("acceptance")
def acceptance() -> None:
    """The acceptance and burn-in jobs (RENDERED/acceptance): check their results."""


@acceptance.command("check")
@click.argument("rendered", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
def check_command(rendered: Path, results: Path) -> None:
    """Compare RESULTS (the folder the jobs wrote, $ACCEPTANCE_RESULTS) with the bars of
    RENDERED (a rendered tree): print every node, link, NVLink domain, unit, partition or PDU
    line below its bar by name and place, then a summary per test family; exit 1 on any, 2
    on output that cannot be read."""
    from cluster_iac.acceptance.check import check
    from cluster_iac.acceptance.formats import ResultError

    try:
        report = check(rendered, results)
    except ResultError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)
    for family, text in report.failures:
        click.echo(f"FAIL {family}: {text}")
    for line in report.summary():
        click.echo(line)
    if report.failures:
        sys.exit(1)
