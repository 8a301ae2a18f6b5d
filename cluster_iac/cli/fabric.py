"""`cluster-iac fabric ...`: the fabrics on site (InfiniBand by ibnetdiscover, Ethernet by
LLDP tables), compared with the plan; and the planned InfiniBand fabrics of a rendered tree
exported for field verification tools (export, cli/fabric_export.py).

What reads a discovery and compares it (reconcile/, formats/ibnetdiscover.py, plan/subnet.py)
and the subnet manager's emitter are imported inside the commands that use them, so that the
other commands start without them and validate loads no emitter (tests/test_startup.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from cluster_iac.cli.common import build_or_exit
from cluster_iac.write.files import write_file

if TYPE_CHECKING:
    from cluster_iac.formats.ibnetdiscover import Topology
    from cluster_iac.plan import Plan


@click.group("fabric")
def fabric() -> None:
    """The fabrics on site: check a discovery (ibnetdiscover, LLDP) against the plan."""


@fabric.command("verify")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("discovered", type=click.Path(path_type=Path))
@click.option("--network", type=click.Choice(["compute", "storage", "management"]),
              default=None, help="The network to judge (default: InfiniBand, the fabric whose "
              "switches DISCOVERED holds; LLDP, every Ethernet network).")
def verify_command(spec: Path, discovered: Path, network: str | None) -> None:
    """Compare DISCOVERED with SPEC's cables: `ibnetdiscover` output of one InfiniBand
    fabric, or the Ethernet networks' LLDP tables (`lldpcli show neighbors -f json`, or an
    Arista switch's `show lldp neighbors detail | json`, a file per device named
    DEVICE.<anything>, or a folder of them). Print every missing, miswired
    and extra link by cable label with both ends located (row/rack/U device port), and each
    switch (or device) not seen at all once; exit 1 on any."""
    from cluster_iac.reconcile.infiniband import describe, verify

    if discovered.is_dir() or _is_lldp(discovered):
        _verify_ethernet(spec, discovered, network)
        return
    plan, network, topology = _load(spec, discovered, network)
    mismatches = verify(plan, network, topology)
    for mismatch in mismatches:
        click.echo(describe(plan, mismatch))
    if mismatches:
        _fail(f"{discovered}: the {network} fabric differs from the plan: "
              f"{_counts([m.kind for m in mismatches])}")
    cables = sum(1 for n in plan.cables.network if n == network)
    click.echo(f"{discovered}: the {network} fabric matches the plan ({cables} cables)")


def _counts(kinds: list[str], unseen: str = "switch(es)") -> str:
    """'1 missing, 2 miswired, 0 extra[, 1 switch(es) not seen]'."""
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("missing", "miswired", "extra"))
    if "unseen" in kinds:
        counts += f", {kinds.count('unseen')} {unseen} not seen"
    return counts


def _is_lldp(path: Path) -> bool:
    """Whether a file is an LLDP table, lldpcli's or EOS's JSON (a file that cannot be read is
    left to _load)."""
    from cluster_iac.reconcile.lldp import detect

    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return detect(handle.read(4096))
    except OSError:
        return False


def _verify_ethernet(spec: Path, discovered: Path, network: str | None) -> None:
    """The Ethernet networks' cables against LLDP tables (reconcile/ethernet.py)."""
    from cluster_iac.reconcile.ethernet import ethernet_networks, verify
    from cluster_iac.reconcile.infiniband import describe
    from cluster_iac.reconcile.lldp import read_tables

    paths = (sorted(p for p in discovered.iterdir() if p.is_file() and
                    not p.name.startswith(".")) if discovered.is_dir() else [discovered])
    plan = build_or_exit(spec, strict=False, emit=False, complete=False).plan
    networks = ethernet_networks(plan)
    if network is not None and network not in networks:
        _fail(f"{spec}: error[FABRIC-DISCOVERY] no Ethernet {network} network in the plan "
              f"(its Ethernet networks: {', '.join(networks) or 'none'})")
    tables, errors = read_tables(plan, paths)
    for path, line, reason in errors:
        click.echo(f"{path}{f':{line}' if line else ''}: error[FABRIC-DISCOVERY] {reason}",
                   err=True)
    if errors or not tables:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] {len(errors)} file(s) not read, "
              f"{len(tables)} LLDP table(s) read; nothing judged")
    verdict = verify(plan, tables, None if network is None else [network])
    if not verdict.judged:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] no planned {network or 'Ethernet'} "
              f"cable ends on a device whose LLDP table was given ("
              f"{', '.join(device for device, _ in tables[:5])}); nothing judged")
    for mismatch in verdict.mismatches:
        click.echo(describe(plan, mismatch))
    what = network or "Ethernet"
    if verdict.mismatches:
        _fail(f"{discovered}: the {what} cabling differs from the plan: "
              f"{_counts([m.kind for m in verdict.mismatches], 'device(s)')}")
    note = (f"; {verdict.silent} cable(s) to PDUs or BMCs, which send no LLDP, not judged"
            if verdict.silent else "")
    click.echo(f"{discovered}: the {what} cabling matches the plan ({verdict.found} of "
               f"{verdict.judged} cables seen from {len(tables)} LLDP table(s){note})")


def _load(spec: Path, discovered: Path, network: str | None) -> tuple[Plan, str, Topology]:
    """SPEC's plan, the fabric DISCOVERED is of, and DISCOVERED read; exit 1 with a located
    error when one cannot be."""
    from cluster_iac.formats.ibnetdiscover import TopologyError, parse
    from cluster_iac.plan.subnet import infiniband_fabrics
    from cluster_iac.reconcile.infiniband import fabric_of

    try:
        text = discovered.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] cannot read: {exc.strerror or exc}")
    try:
        topology = parse(text)
    except TopologyError as exc:
        _fail(f"{discovered}:{exc.line}: error[FABRIC-DISCOVERY] {exc.reason}")
    plan = build_or_exit(spec, strict=False, emit=False, complete=False).plan
    fabrics = infiniband_fabrics(plan)
    if network is not None and network not in fabrics:
        _fail(f"{spec}: error[FABRIC-DISCOVERY] no InfiniBand {network} fabric in the plan "
              f"(its InfiniBand fabrics: {', '.join(fabrics) or 'none'})")
    network = network or fabric_of(plan, topology)
    if network is None:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] none of the plan's InfiniBand switches "
              "is in this discovery (are the switches' node descriptions their names?); "
              "name the fabric with --network")
    return plan, network, topology


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(1)


@fabric.command("guids")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("discovered", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path), help="Folder to write into.")
@click.option("--network", type=click.Choice(["compute", "storage"]), default=None,
              help="The fabric DISCOVERED is of (default: the one whose switches it holds).")
def guids_command(spec: Path, discovered: Path, out_dir: Path, network: str | None) -> None:
    """Write the files that need delivered hardware's GUIDs, read from DISCOVERED: the
    fabric's partitions.conf with real port GUIDs, node-name-map (OpenSM's
    node_name_map_name) and root-guids (its root_guid_file: the top tier's switches).
    A cable not where it was planned gives no GUID: exit 1, writing nothing, when a
    partition's adapter is not found (run `fabric verify` first)."""
    from cluster_iac.emit.subnet_manager import partition_members, partitions_conf
    from cluster_iac.reconcile.infiniband import discovered_guids

    plan, network, topology = _load(spec, discovered, network)
    ports, nodes = discovered_guids(plan, network, topology)
    lost = [adapter for adapter in partition_members(plan, network) if adapter not in ports]
    if lost:
        _fail(f"{discovered}: error[FABRIC-DISCOVERY] {len(lost)} adapter(s) of a partition "
              f"are not cabled where planned, so their GUIDs are unknown: "
              f"{', '.join(lost[:5])}{' ...' if len(lost) > 5 else ''}; nothing written "
              f"(run 'cluster-iac fabric verify {spec} {discovered}')")
    wiring = plan.fabric_wiring[network]
    top = "core" if "core" in wiring.tier.values() else "spine"
    roots = [name for name, tier in wiring.tier.items() if tier == top and name in nodes]
    files = {
        "partitions.conf": partitions_conf(plan, network, ports, placeholders=False),
        "node-name-map": "".join(f'0x{guid:016x} "{name}"\n'
                                 for name, guid in sorted(nodes.items())),
        "root-guids": "".join(f"0x{nodes[name]:016x}\n" for name in roots),
    }
    try:
        for name, text in files.items():
            write_file(out_dir / name, text)
    except OSError as exc:
        _fail(f"{exc.filename or out_dir}: error[IO-WRITE] {exc.strerror or exc}")
    click.echo(f"{out_dir}: {', '.join(files)} for the {network} fabric "
               f"({len(ports)} adapters, {len(nodes) - len(ports)} switches by GUID)")


@fabric.command("export")
@click.argument("tree", type=click.Path(path_type=Path))
@click.option("--format", "form", type=click.Choice(["ibdm"]), required=True,
              help="ibdm: the IBDM topology file and .ibnl system types (ibutils, UFM's "
                   "Cable Validation Tool).")
@click.option("-o", "--output", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path), help="Folder to write into.")
def export_command(tree: Path, form: str, out_dir: Path) -> None:
    """Write the expected InfiniBand fabrics of TREE (a folder `cluster-iac render` wrote) in
    the form a verification tool reads: for ibdm, OUT/<fabric>.topo (IBDM topology file) and
    OUT/ibnl/<TYPE>.ibnl, the system types it names (point IBDM_IBNL_PATH at OUT/ibnl).
    Made from TREE's opensm/<fabric>/topology.ibnetdiscover, each held to the digest the
    tree's manifest records; the spec is not compiled. Exit 1, writing nothing, on an error."""
    from cluster_iac.cli.console import format_diagnostic
    from cluster_iac.cli.fabric_export import ibdm_files
    from cluster_iac.cli.rendered import TreeError

    del form  # one format so far
    try:
        files = ibdm_files(tree)
    except TreeError as exc:
        for diag in exc.diagnostics:
            click.echo(format_diagnostic(diag, None, diag.file or ""), err=True)
        _fail(f"{len(exc.diagnostics)} error(s); nothing written")
    try:
        for name, text in files.items():
            write_file(out_dir / name, text)
        for path in _stale_export(out_dir, files):
            path.unlink()
    except OSError as exc:
        _fail(f"{exc.filename or out_dir}: error[IO-WRITE] {exc.strerror or exc}")
    topologies = [name for name in files if name.endswith(".topo")]
    click.echo(f"{out_dir}: {', '.join(topologies)} and {len(files) - len(topologies)} system "
               f"type(s) in {out_dir / 'ibnl'} (IBDM_IBNL_PATH={out_dir / 'ibnl'})")


def _stale_export(out_dir: Path, files: dict[str, str]) -> list[Path]:
    """The export's files in ``out_dir`` this export did not make: a fabric the tree no
    longer has, a system type no system has now (IBDM reads every .ibnl on its path). Only
    the export's own forms (``*.topo``, ``ibnl/*.ibnl``); anything else is the user's."""
    found = [*out_dir.glob("*.topo"), *out_dir.glob("ibnl/*.ibnl")]
    return sorted(p for p in found if p.relative_to(out_dir).as_posix() not in files)
