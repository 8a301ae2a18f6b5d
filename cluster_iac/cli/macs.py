"""`cluster-iac macs import`: MAC addresses from vendor shipping manifests and from discovery
(a node's `ip -j link`, an access switch's LLDP table) into the lock, each checked against
the plan first (reconcile/macs.py, reconcile/mac_discovery.py); any problem changes nothing.

The manifest reader is imported inside the command, so that the other commands start without
it (tests/test_startup.py)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cluster_iac.base.errors import Diagnostic
from cluster_iac.cli.common import build_or_exit, print_diagnostics, say
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.text import lock_text
from cluster_iac.write.files import write_file

if TYPE_CHECKING:
    from cluster_iac.reconcile.macs import Row


@click.group("macs")
def macs() -> None:
    """MAC addresses, facts from the vendor's manifests: checked, then kept in the lock."""


@macs.command("import")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("manifests", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_command(spec: Path, manifests: tuple[Path, ...]) -> None:
    """Check each MANIFEST against SPEC's plan and record its MACs in SPEC's lock ('mac
    <network> <device> <MAC>' lines), from which render writes Kea's reservations. A MANIFEST
    is a vendor's CSV (serial,host,mac,port), a node's `ip -j link` output saved as
    <hostname or serial>.ip-link.json, or an access switch's `lldpcli show neighbors -f json`
    saved as <switch>.lldp.json (docs/boot.md). An unknown serial or host, a MAC on another
    device's port, a MAC twice: located errors, exit 1, the lock untouched."""
    from cluster_iac.reconcile.mac_discovery import import_any

    built = build_or_exit(spec, strict=False, emit=False)
    plan = built.plan
    problems: list[Diagnostic] = []
    rows: list[tuple[Path, Row]] = []
    for manifest in manifests:
        found, wrong = import_any(plan, manifest.read_text(errors="replace"), str(manifest))
        rows += [(manifest, row) for row in found]
        problems += wrong
    macs_now = dict(plan.boot.macs)
    owners = {mac: key for key, mac in macs_now.items()}
    for manifest, row in rows:  # across manifests: one MAC, one device
        other = owners.get(row.mac)
        if other is not None and other != (row.network, row.device):
            problems.append(_across(row, other, manifest))
        owners[row.mac] = (row.network, row.device)
        macs_now[(row.network, row.device)] = row.mac
    if problems:
        print_diagnostics(problems, None, str(manifests[0]))
        click.echo(f"{len(problems)} error(s); the lock is unchanged", err=True)
        sys.exit(1)
    new = replace(plan, boot=replace(plan.boot, macs=macs_now))
    lock = lock_path(spec)
    text = lock_text(new, plan.lock, spec.name)
    if text != (plan.lock.text if plan.lock.exists else None):
        write_file(lock, text)
    say(f"{lock}: {len(rows)} MAC(s) checked and kept; render writes their reservations")


def _across(row: Row, other: tuple[str, str], manifest: Path) -> Diagnostic:
    """A MAC another file (or the lock) gives another device, at this file's row."""
    return Diagnostic("MAC-DUPLICATE", f"MAC {row.mac} of {row.device} is already "
                      f"{other[1]}'s on the {other[0]} network", line=row.line, column=1,
                      file=str(manifest), hint="each NIC has its own MAC: check the files' rows")
