"""`cluster-iac macs import` from discovery (reconcile/mac_discovery.py): a node's real
`ip -j link` output (tests/data/iplink, captured in a network namespace) and the access
switches' real LLDP tables (tests/data/lldp) of the RoCE sample (tests/lldp_fixtures.py), into
the lock, each MAC checked against the plan. A neighbour on another host's port, a MAC
twice, an unknown host or serial: located errors that change nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.lock.trailer import sealed, unsealed
from tests.lldp_fixtures import DATA, sample_spec

IPLINK = Path(__file__).parent / "data" / "iplink"
# what the saved captures hold: gpu-01's and gpu-02's eth0 (ip -j link), and the management
# access switches' neighbours' port MACs (lldpcli -f json)
GPU01, GPU02 = "ce:80:80:44:d2:ba", "9e:c9:5a:1d:e7:f2"
GPU03, GPU04, HEAD1 = "9e:3f:35:38:12:c1", "4e:12:b6:2e:87:b4", "2e:91:4d:d8:96:f2"


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    """The RoCE sample with its lock (rendered once)."""
    path = sample_spec(tmp_path)
    result = CliRunner().invoke(main, ["render", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    return path


def _files(folder: Path, *names: str) -> list[str]:
    """Copies of saved captures (tests/data/iplink, tests/data/lldp) in folder."""
    out = []
    for name in names:
        source = IPLINK / name if name.endswith(".ip-link.json") else DATA / name
        shutil.copy(source, folder / name)
        out.append(str(folder / name))
    return out


def _import(spec: Path, *files: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["macs", "import", str(spec), *files])
    return result.exit_code, result.output


def _macs(spec: Path) -> dict[str, str]:
    return {line.split()[2]: line.split()[3]
            for line in spec.with_suffix(".lock").read_text().splitlines()
            if line.startswith("mac ")}


def test_ip_link_and_lldp_tables_are_kept_and_reserved(spec: Path, tmp_path: Path) -> None:
    files = _files(tmp_path, "gpu-01.ip-link.json", "gpu-02.ip-link.json",
                   "mgmt-r01-1.lldp.json", "mgmt-r02-1.lldp.json", "mgmt-net1-1.lldp.json",
                   "mgmt-agg1-1.lldp.json")
    code, out = _import(spec, *files)
    assert code == 0, out
    # gpu-01 and gpu-02 seen by both their own ip link and the switch's LLDP: one MAC each;
    # the switches' mgmt0 send their port by name (no MAC), the pair's neighbours are switches
    assert _macs(spec) == {"gpu-01": GPU01, "gpu-02": GPU02, "gpu-03": GPU03,
                           "gpu-04": GPU04, "head1": HEAD1}
    out_dir = tmp_path / "again"
    assert CliRunner().invoke(main, ["render", str(spec), "-o", str(out_dir)]).exit_code == 0
    kea = json.loads((out_dir / "dhcp" / "kea-dhcp4.conf").read_text())
    reserved = {r["hw-address"]: r["hostname"] for s in kea["Dhcp4"]["subnet4"]
                for r in s.get("reservations", [])}
    assert reserved[GPU01].split(".")[0] == "gpu-01" and reserved[HEAD1].split(".")[0] == "head1"


def test_a_node_is_found_by_its_serial(spec: Path, tmp_path: Path) -> None:
    lock = spec.with_suffix(".lock")
    lines = unsealed(lock.read_text()) + "serial gpu-02 SN-7F3K2\n"
    lock.write_text(sealed(lines))
    (copy,) = _files(tmp_path, "gpu-02.ip-link.json")
    renamed = tmp_path / "SN-7F3K2.ip-link.json"
    Path(copy).rename(renamed)
    code, out = _import(spec, str(renamed))
    assert code == 0, out
    assert _macs(spec) == {"gpu-02": GPU02}


def _swap_systems(path: str, one: str, two: str) -> None:
    text = Path(path).read_text()
    Path(path).write_text(text.replace(f'"{one}"', '"@@"').replace(f'"{two}"', f'"{one}"')
                          .replace('"@@"', f'"{two}"'))


@pytest.mark.parametrize("case", ["swapped", "duplicate", "duplicate-across", "unknown-host",
                                  "unknown-neighbour", "no-nic", "not-json"])
def test_a_bad_discovery_is_located_and_changes_nothing(spec: Path, tmp_path: Path,
                                                        case: str) -> None:
    lock = spec.with_suffix(".lock")
    before = lock.read_text()
    if case == "swapped":  # gpu-01 and gpu-02 cabled the other way round
        (table,) = _files(tmp_path, "mgmt-r01-1.lldp.json")
        _swap_systems(table, "gpu-01", "gpu-02")
        code, out = _import(spec, table)
        assert out.count("error[MAC-WRONG-PORT]") == 2, out
        assert "gpu-02 is seen on mgmt-r01-1:swp4, where the plan cables gpu-01; gpu-02 " \
            "belongs on mgmt-r01-1:swp5" in out
        text = Path(table).read_text().splitlines()
        line = next(n for n, row in enumerate(text, 1) if '"swp4"' in row) + 1  # its "via"
        assert f"mgmt-r01-1.lldp.json:{line}:" in out, out
    elif case == "duplicate":  # one table, one MAC on two ports
        (table,) = _files(tmp_path, "mgmt-r01-1.lldp.json")
        Path(table).write_text(Path(table).read_text().replace(GPU02, GPU01))
        code, out = _import(spec, table)
        assert "error[MAC-DUPLICATE]" in out and f"MAC {GPU01} is seen twice" in out
    elif case == "duplicate-across":  # gpu-02's own view reports gpu-01's MAC
        one, two = _files(tmp_path, "gpu-01.ip-link.json", "gpu-02.ip-link.json")
        Path(two).write_text(Path(two).read_text().replace(GPU02, GPU01))
        code, out = _import(spec, one, two)
        assert "gpu-02.ip-link.json:1:1: error[MAC-DUPLICATE]" in out
        assert f"MAC {GPU01} of gpu-02 is already gpu-01's" in out
    elif case == "unknown-host":
        (copy,) = _files(tmp_path, "gpu-01.ip-link.json")
        Path(copy).rename(tmp_path / "SN-NOPE.ip-link.json")
        code, out = _import(spec, str(tmp_path / "SN-NOPE.ip-link.json"))
        assert "SN-NOPE.ip-link.json:1:1: error[MAC-UNKNOWN-HOST]" in out
    elif case == "unknown-neighbour":
        (table,) = _files(tmp_path, "mgmt-r02-1.lldp.json")
        Path(table).write_text(Path(table).read_text().replace('"gpu-04"', '"gpu-99"'))
        code, out = _import(spec, table)
        assert "error[MAC-UNKNOWN-HOST]" in out and "names itself 'gpu-99'" in out
        assert "mgmt-r02-1.lldp.json:" in out
    elif case == "no-nic":
        (copy,) = _files(tmp_path, "gpu-01.ip-link.json")
        Path(copy).write_text(Path(copy).read_text().replace('"eth0"', '"ens1f0"'))
        code, out = _import(spec, copy)
        assert "gpu-01.ip-link.json:1:1: error[MAC-NO-NIC]" in out
        assert "gpu-01 has no interface 'eth0'" in out
    else:
        (copy,) = _files(tmp_path, "gpu-01.ip-link.json")
        Path(copy).write_text(Path(copy).read_text()[:-40])
        code, out = _import(spec, copy)
        assert "error[MAC-SYNTAX]" in out and "not JSON" in out
    assert code == 1 and "the lock is unchanged" in out, out
    assert lock.read_text() == before
