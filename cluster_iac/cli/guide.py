"""The commands that read no spec: `cluster-iac init` writes a starting one; `explain`,
`schema` and `catalog` look up a finding code, the spec's JSON Schema and the built-in
catalog.

Each command imports what it reads inside itself, not at the top: the four share this module,
and `explain` would otherwise load the spec models and the built-in catalog it never reads
(and `catalog` the checks); cli/main.py imports this module when any of the four runs. None of
these imports hides a circle: nothing below the CLI imports it (tests/test_house.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cluster_iac.cli.common import echo_or_write


@click.command()
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
    # Here, not at the top: cli/init.py takes milliseconds to load that only init needs.
    from cluster_iac.cli.init import Answers, InitError, starting_spec

    if out_file is not None and out_file.exists():
        raise click.BadParameter(f"{out_file} exists; name a new file", param_hint="-o")
    try:
        text = starting_spec(Answers(phases=int(phases), **answers))  # type: ignore[arg-type]
    except InitError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if echo_or_write(text, out_file):
        click.echo(f"{out_file}: written; next: cluster-iac validate {out_file}", err=True)


@click.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """What a finding CODE means, its formula and sources, and how to fix it; without CODE,
    every code."""
    from cluster_iac.cli import explain as codes  # what explain reads: module docstring

    if code is None:
        click.echo(codes.listing(), nl=False)
        return
    text = codes.explain(code)
    if text is None:
        click.echo(f"error: no finding code '{code}'; {codes.unknown_hint(code)}", err=True)
        sys.exit(1)
    click.echo(text, nl=False)


@click.command()
def schema() -> None:
    """Print the JSON Schema of the spec."""
    from cluster_iac.spec.schema import schema_text  # what schema reads: module docstring

    click.echo(schema_text(), nl=False)


@click.command()
@click.argument("kind", required=False)
@click.argument("pattern", metavar="[FILTER]", required=False)
def catalog(kind: str | None, pattern: str | None) -> None:
    """List the built-in catalog: KIND (platforms, gpus, nics, switches...), entries whose key,
    name or figures contain FILTER, each with its key figures and source."""
    from cluster_iac.catalog.listing import UnknownKind, listing  # module docstring

    try:
        text = listing(kind, pattern)
    except UnknownKind as exc:
        raise click.BadParameter(str(exc), param_hint="KIND") from None
    if not text:
        click.echo(f"no {kind or 'catalog'} entry matches '{pattern}'", err=True)
        sys.exit(1)
    click.echo(text, nl=False)
