"""`cluster-iac fabric ...`: the InfiniBand fabric on site, compared with the plan."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group("fabric")
def fabric() -> None:
    """The InfiniBand fabrics on site: check a discovery against the plan."""


@fabric.command("verify")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("discovered", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--network", type=click.Choice(["compute", "storage"]), default=None,
              help="The fabric DISCOVERED is of (default: the one whose switches it holds).")
def verify_command(spec: Path, discovered: Path, network: str | None) -> None:
    """Compare DISCOVERED (`ibnetdiscover` output of one fabric) with SPEC's cables: print
    every missing, miswired and extra link by cable label with both ends located (row/rack/U
    device port); exit 1 on any."""
    from cluster_iac.checks.discovered import describe, fabric_of, verify
    from cluster_iac.cli import _build_or_exit
    from cluster_iac.ibnetdiscover import TopologyError, parse
    from cluster_iac.plan.subnet import infiniband_fabrics

    try:
        text = discovered.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] cannot read: {exc.strerror or exc}")
    try:
        topology = parse(text)
    except TopologyError as exc:
        _fail(f"{discovered}:{exc.line}: error[FABRIC-DISCOVERY] {exc.args[0].split(': ', 1)[1]}")
    plan = _build_or_exit(spec, strict=False, emit=False).plan
    fabrics = infiniband_fabrics(plan)
    if network is not None and network not in fabrics:
        _fail(f"{spec}: error[FABRIC-DISCOVERY] no InfiniBand {network} fabric in the plan "
              f"(its InfiniBand fabrics: {', '.join(fabrics) or 'none'})")
    network = network or fabric_of(plan, topology)
    if network is None:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] none of the plan's InfiniBand switches "
              "is in this discovery (are the switches' node descriptions their names?); "
              "name the fabric with --network")
    mismatches = verify(plan, network, topology)
    for mismatch in mismatches:
        click.echo(describe(plan, mismatch))
    if mismatches:
        kinds = [m.kind for m in mismatches]
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("missing", "miswired", "extra"))
        _fail(f"{discovered}: the {network} fabric differs from the plan: {counts}")
    cables = sum(1 for n in plan.cables.network if n == network)
    click.echo(f"{discovered}: the {network} fabric matches the plan ({cables} cables)")


def _fail(message: str) -> None:
    click.echo(message, err=True)
    sys.exit(1)
