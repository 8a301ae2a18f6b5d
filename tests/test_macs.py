"""`cluster-iac macs import`: MACs from a shipping manifest into the lock, checked against the
plan; a swapped pair, a duplicate MAC and an unknown serial are located errors that change
nothing; render then writes Kea's reservations from the lock."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.reconcile.macs import parse_mac

ROOT = Path(__file__).resolve().parent.parent
HEADER = "serial,host,mac,port\n"
# the seed example's planned management access ports (cabling/cables.csv)
GOOD = ("SN100,compute01,7C:FE:90:00:00:01,mgmt-r01-1:swp1\n"
        "SN101,compute02,7c-fe-90-00-00-02,mgmt-r01-1:swp2\n")


@pytest.fixture()
def seed(tmp_path: Path) -> Path:
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"seed-64gpu-h100{suffix}", tmp_path / f"c{suffix}")
    return tmp_path / "c.yaml"


def _import(spec: Path, text: str) -> tuple[int, str]:
    manifest = spec.parent / "manifest.csv"
    manifest.write_text(text)
    result = CliRunner().invoke(main, ["macs", "import", str(spec), str(manifest)])
    return result.exit_code, result.output


def test_a_good_manifest_is_kept_in_the_lock_and_reserved_by_kea(seed: Path) -> None:
    code, out = _import(seed, HEADER + GOOD)
    assert code == 0, out
    lock = seed.with_suffix(".lock").read_text()
    assert "mac management compute01 7c:fe:90:00:00:01\n" in lock
    assert "mac management compute02 7c:fe:90:00:00:02\n" in lock
    out_dir = seed.parent / "out"
    assert CliRunner().invoke(main, ["render", str(seed), "-o", str(out_dir)]).exit_code == 0
    kea = json.loads((out_dir / "dhcp" / "kea-dhcp4.conf").read_text())
    reservations = kea["Dhcp4"]["subnet4"][0]["reservations"]
    assert {r["hw-address"]: r["ip-address"] for r in reservations} == {
        "7c:fe:90:00:00:01": "10.0.1.16", "7c:fe:90:00:00:02": "10.0.1.17"}
    missing = (out_dir / "dhcp" / "hosts-without-mac.txt").read_text().splitlines()
    assert "management compute01" not in missing and "management compute03" in missing
    # the lock as render writes it keeps the MACs, and reads back the same
    assert lock == seed.with_suffix(".lock").read_text()


@pytest.mark.parametrize(("rows", "code", "where"), [
    # a swapped pair: each MAC on the other's port, the port and the host planned there named
    ("SN100,compute01,7c:fe:90:00:00:01,mgmt-r01-1:swp2\n"
     "SN101,compute02,7c:fe:90:00:00:02,mgmt-r01-1:swp1\n", "MAC-WRONG-PORT", ":2:"),
    ("SN100,compute01,7c:fe:90:00:00:01,mgmt-r01-1:swp1\n"
     "SN101,compute02,7c:fe:90:00:00:01,mgmt-r01-1:swp2\n", "MAC-DUPLICATE", ":3:"),
    ("SN999,,7c:fe:90:00:00:09,mgmt-r01-1:swp1\n", "MAC-UNKNOWN-SERIAL", ":2:"),
    ("SN100,compute01,01:00:5e:00:00:01,mgmt-r01-1:swp1\n", "MAC-SYNTAX", ":2:"),
    ("SN100,compute01,7c:fe:90:00:00:01\\nmac bmc x 02:00:00:00:00:01,mgmt-r01-1:swp1\n",
     "MAC-SYNTAX", ":2:"),
])
def test_a_bad_manifest_is_a_located_error_and_changes_nothing(
        seed: Path, rows: str, code: str, where: str) -> None:
    before = seed.with_suffix(".lock").read_text()
    status, out = _import(seed, HEADER + rows)
    assert status == 1
    assert f"error[{code}]" in out and f"manifest.csv{where}" in out, out
    assert seed.with_suffix(".lock").read_text() == before


def test_a_swapped_pair_names_the_port_and_the_host_planned_there(seed: Path) -> None:
    _, out = _import(seed, HEADER + "SN100,compute01,7c:fe:90:00:00:01,mgmt-r01-1:swp2\n")
    assert "seen on mgmt-r01-1:swp2, where the plan cables compute02" in out
    assert "compute01 belongs on mgmt-r01-1:swp1" in out


@pytest.mark.parametrize(("text", "mac"), [
    ("7C:FE:90:00:00:01", "7c:fe:90:00:00:01"), ("7c-fe-90-00-00-01", "7c:fe:90:00:00:01"),
    ("7c:fe-90:00:00:01", None), ("7c:fe:90:00:00", None), ("ff:ff:ff:ff:ff:ff", None),
    ("00:00:00:00:00:00", None), ("7c:fe:90:00:00:01\n", None), (" 7c:fe:90:00:00:01", None),
])
def test_macs_are_parsed_strictly(text: str, mac: str | None) -> None:
    assert parse_mac(text) == mac
