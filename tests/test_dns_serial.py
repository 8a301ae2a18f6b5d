"""The DNS zones' SOA serials, kept by the lock (plan/zones.py): a changed zone's serial rises
by exactly one, an unchanged zone keeps its serial, a lock without zone lines gains them with
the serials earlier versions served, and the change plan still reloads named."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan.zones import SERIAL_MAX, Zone, digest, hash_serial, next_serial
from cluster_iac.render import build
from tests.conftest import ROOT

EXAMPLE = "dgx-h100-superpod-4su"  # 19 zones: a node added changes only some of them


def _copy(tmp_path: Path) -> Path:
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / f"{EXAMPLE}.yaml", spec)
    shutil.copy(ROOT / "examples" / f"{EXAMPLE}.lock", lock_path(spec))
    return spec


def _zones(spec: Path) -> tuple[dict[str, Zone], str]:
    """The plan's zones and the lock text it makes."""
    built = build(spec, emit=False)
    assert built.plan.boot is not None and built.lock is not None
    return built.plan.boot.zones, built.lock.after


def _zone_lines(lock: str) -> dict[str, tuple[int, str]]:
    return {m[1]: (int(m[2]), m[3])
            for m in re.finditer(r"^zone (\S+) (\d+) ([0-9a-f]{64})$", lock, re.MULTILINE)}


def _greater(new: int, old: int) -> bool:
    """RFC 1982 3.2 with SERIAL_BITS 32: whether a secondary holding ``old`` takes ``new``."""
    return 1 <= (new - old) % 2**32 <= 2**31 - 1


def test_adding_a_node_raises_its_zones_serials_by_one_and_keeps_the_others(
        tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    before, lock = _zones(spec)
    assert _zone_lines(lock) == {name: (z.serial, z.digest) for name, z in before.items()}
    spec.write_text(spec.read_text().replace("count: 127", "count: 128", 1))  # dgx-128
    after, new_lock = _zones(spec)
    assert after.keys() == before.keys()
    changed = {name for name in before if after[name].records != before[name].records}
    # the forward zone and the reverse zones of dgx-128's management, BMC and storage addresses
    assert "superpod.internal" in changed and len(changed - {"superpod.internal"}) >= 2
    assert len(changed) < len(before)  # most reverse zones hold none of its addresses
    for name, zone in after.items():
        if name in changed:
            assert zone.serial == before[name].serial + 1, name
            assert _greater(zone.serial, before[name].serial)
        else:
            assert zone.serial == before[name].serial, name
    assert _zone_lines(new_lock) == {name: (z.serial, z.digest) for name, z in after.items()}
    # the lock rewritten: a render again from it keeps every serial
    lock_path(spec).write_text(new_lock)
    again, same_lock = _zones(spec)
    assert {n: z.serial for n, z in again.items()} == {n: z.serial for n, z in after.items()}
    assert same_lock == new_lock


def test_a_re_render_without_change_keeps_every_serial_and_the_bytes(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    runner = CliRunner()
    locks = []
    for out in ("a", "b"):
        result = runner.invoke(main, ["render", str(spec), "-o", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
        locks.append(lock_path(spec).read_text())
    assert locks[0] == locks[1]
    assert _zone_lines(locks[0]) == \
        _zone_lines((ROOT / "examples" / f"{EXAMPLE}.lock").read_text())
    for path in (tmp_path / "a" / "dns").iterdir():
        assert path.read_bytes() == (tmp_path / "b" / "dns" / path.name).read_bytes()


def test_a_lock_without_zone_lines_gains_them_with_the_serials_served_before(
        tmp_path: Path) -> None:
    """An older lock: each zone starts at 31 bits of its records' SHA-256, the serial the
    versions before zone lines served, so an unchanged zone's serial does not move."""
    spec = _copy(tmp_path)
    text = lock_path(spec).read_text()
    held = _zone_lines(text)
    assert held
    older = "".join(line for line in unsealed(text).splitlines(keepends=True)
                    if not line.startswith("zone "))
    lock_path(spec).write_text(sealed(older))
    zones, lock = _zones(spec)
    assert _zone_lines(lock) == held
    assert all(zone.serial == hash_serial(digest(zone.records)) for zone in zones.values())


def test_a_changed_zone_at_the_last_serial_wraps_to_one(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    text = lock_path(spec).read_text()
    name, (_, hexed) = sorted(_zone_lines(text).items())[0]
    old = f"zone {name} "
    lines = [f"zone {name} {SERIAL_MAX} {'0' * 64}" if line.startswith(old) else line
             for line in unsealed(text).splitlines()]
    lock_path(spec).write_text(sealed("\n".join(lines) + "\n"))
    zones, lock = _zones(spec)
    assert zones[name].serial == 1 and zones[name].digest == hexed
    assert _zone_lines(lock)[name] == (1, hexed)
    assert _greater(1, SERIAL_MAX)


def test_next_serial_is_always_greater_in_serial_arithmetic() -> None:
    for serial in (1, 2, 2**31 - 1, 2**31, 2**31 + 1, SERIAL_MAX - 1, SERIAL_MAX):
        after = next_serial(serial)
        assert after != 0 and 1 <= after <= SERIAL_MAX and _greater(after, serial)
    assert next_serial(41) == 42 and next_serial(SERIAL_MAX) == 1


def test_the_change_plan_reloads_named_for_a_changed_zone(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    spec.write_text(spec.read_text().replace("count: 127", "count: 128", 1))
    result = runner.invoke(main, ["changes", str(spec), "-o", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    actions = json.loads(result.stdout)["actions"]["22.05"]
    dns = [a for a in actions if a["kind"] == "reload-dns"]
    assert dns and "NOTIFY" in json.dumps(dns) and "retransfer" not in json.dumps(dns)
