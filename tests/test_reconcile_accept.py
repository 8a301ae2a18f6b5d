"""`cluster-iac reconcile --accept`: the facts of delivered hardware (MACs and serials from
DMTF's Redfish mockups, GUIDs from an ibnetdiscover file) recorded in the lock, through the
CLI; the next render writes Kea's reservations, NetBox's serials and OpenSM's GUID files from
them and nothing else changes; without --accept nothing is written; a fact contradicting the
lock is a located finding and nothing is written."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.lock.read import read_lock
from tests.conftest import ROOT
from tests.reconcile_fixtures import DATA

SEED = "seed-64gpu-h100"


def _copy(folder: Path) -> Path:
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"{SEED}{suffix}", folder / f"{SEED}{suffix}")
    return folder / f"{SEED}.yaml"


def _cli(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _redfish(folder: Path, host: str = "compute01", address: str = "10.0.1.16") -> list[Path]:
    """DMTF's public-rackmount1 payloads as published, the host NIC's address set to the
    host's planned management address (the one change: how the NIC is known)."""
    nic = json.loads((DATA / "redfish-nic-public-rackmount1.json").read_text())
    nic["IPv4Addresses"][0]["Address"] = address
    files = {f"{host}.nic.json": json.dumps(nic, indent=4),
             f"{host}.system.json": (DATA / "redfish-system-public-rackmount1.json").read_text(),
             f"{host}.tohost.json":
                 (DATA / "redfish-bmc-tohost-public-rackmount1.json").read_text()}
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / name for name in files]


def _render(spec: Path, out: Path) -> dict[str, str]:
    code, stdout, stderr = _cli("render", spec, "-o", out)
    assert code == 0, stdout + stderr
    return {str(p.relative_to(out)): p.read_text() for p in out.rglob("*")
            if p.is_file() and not p.name.startswith(".")}  # not the manifest of hashes


def test_accept_writes_the_mac_and_serial_and_render_uses_only_them(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    lock = spec.with_suffix(".lock")
    before_lock = lock.read_text()
    before = _render(spec, tmp_path / "before")
    files = _redfish(tmp_path)
    code, out, err = _cli("reconcile", spec, *files)
    assert "1 mac, 1 serial the lock does not hold yet: --accept records them" in err
    assert lock.read_text() == before_lock  # without --accept nothing is written
    code, out, err = _cli("reconcile", spec, *files, "--accept")
    assert "1 mac, 1 serial accepted" in err, err
    added = set(lock.read_text().splitlines()) - set(before_lock.splitlines())
    assert {line for line in added if not line.startswith("# end")} == {
        "mac management compute01 12:44:6a:3b:04:11", "serial compute01 437XR1138R2"}
    read_lock(lock)  # sealed: its trailer holds
    after = _render(spec, tmp_path / "after")
    changed = sorted(name for name in after if after[name] != before.get(name))
    parts = sorted(name for name in after if name.startswith("netbox/devices/"))
    # every NetBox device part gains the serial column (its header names it)
    assert changed == ["dhcp/hosts-without-mac.txt", "dhcp/kea-dhcp4.conf", *parts], changed
    kea = json.loads(after["dhcp/kea-dhcp4.conf"])
    reservations = [r for s in kea["Dhcp4"]["subnet4"] for r in s["reservations"]]
    assert {"hw-address": "12:44:6a:3b:04:11", "ip-address": "10.0.1.16",
            "hostname": "compute01.ml-training-cluster.internal"} in reservations
    rows = [row for part in parts for row in after[part].splitlines()]
    assert all(after[part].startswith(rows[0]) for part in parts)
    assert rows[0].endswith(",serial")
    assert next(r for r in rows if r.startswith("compute01,")).endswith(",437XR1138R2")
    assert next(r for r in rows if r.startswith("compute02,")).endswith(",")
    # accepting again is a no-op: the lock holds them
    code, out, err = _cli("reconcile", spec, *files, "--accept")
    assert "accepted" not in err and "does not hold" not in err


def test_the_mockups_bmc_mac_is_a_group_address_and_is_refused(tmp_path: Path) -> None:
    """DMTF's BMC eth0 reports 23:11:8A:33:CF:EA, whose first octet is odd: a group
    (multicast) address, which no NIC has."""
    spec = _copy(tmp_path)
    bmc = tmp_path / "compute01.bmc.json"
    bmc.write_text((DATA / "redfish-bmc-nic-public-rackmount1.json").read_text())
    before = spec.with_suffix(".lock").read_text()
    code, out, err = _cli("reconcile", spec, bmc, "--accept")
    assert code == 1
    assert re.search(r"compute01\.bmc\.json: error\[RECONCILE-FACT-INVALID\] compute01 "
                     r"\(rack r01 U01\): the BMC NIC 'eth0' reports MAC '23:11:8A:33:CF:EA'", out)
    assert spec.with_suffix(".lock").read_text() == before
    # the same NIC with a unicast MAC is the BMC network's
    data = json.loads(bmc.read_text())
    data["PermanentMACAddress"] = "22:11:8A:33:CF:EA"
    bmc.write_text(json.dumps(data))
    code, out, err = _cli("reconcile", spec, bmc, "--accept")
    assert code == 0, out + err
    assert "mac bmc compute01 22:11:8a:33:cf:ea" in spec.with_suffix(".lock").read_text()


def test_a_fact_contradicting_the_lock_is_located_and_nothing_is_written(
        tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    lock = spec.with_suffix(".lock")
    _cli("reconcile", spec, *_redfish(tmp_path), "--accept")
    accepted = lock.read_text()
    number = accepted.splitlines().index("serial compute01 437XR1138R2") + 1
    system = json.loads((tmp_path / "compute01.system.json").read_text())
    system["SerialNumber"] = "437XR1138R3"  # a replaced chassis board
    (tmp_path / "compute01.system.json").write_text(json.dumps(system))
    nic = tmp_path / "compute02.nic.json"
    nic.write_text((tmp_path / "compute01.nic.json").read_text().replace("10.0.1.16",
                                                                        "10.0.1.17"))
    code, out, err = _cli("reconcile", spec, tmp_path / "compute01.system.json", nic,
                          "--accept")
    assert code == 1
    assert (f"error[RECONCILE-FACT-CONFLICT] compute01 (rack r01 U01) ({lock}:{number}): "
            "the ComputerSystem's SerialNumber reports 437XR1138R3 where the lock holds "
            "437XR1138R2") in out, out
    assert "error[RECONCILE-FACT-DUPLICATE] compute02" in out
    assert "12:44:6a:3b:04:11, which the lock holds for compute01" in out
    assert "no new fact accepted: the lock is unchanged while a fact contradicts it" in err
    assert lock.read_text() == accepted


def test_guids_from_ibnetdiscover_make_opensm_files(tmp_path: Path) -> None:
    """The fabric as rendered (what ibsim loads and its ibnetdiscover prints back), its
    placeholder GUIDs (0x02 first octet) replaced by vendor-like ones: accepted, they are
    partitions.conf's members and root-guids' roots."""
    spec = _copy(tmp_path)
    before = _render(spec, tmp_path / "before")
    text = before["opensm/compute/topology.ibnetdiscover"]
    found = tmp_path / "compute.ibnetdiscover"
    found.write_text(text)  # the plan's placeholders are no delivered hardware's GUIDs
    code, out, err = _cli("reconcile", spec, found, "--accept")
    # (a warning may quote the spec's "guide's": no fact offered is the test)
    assert code == 0 and "accepted" not in err and "does not hold" not in err, out + err
    # 0x201519521553e8a, (201519521553e8b), "H-0201519521553e8a": first octet 0x02 -> 0xb8
    text = re.sub(r"(0x|\(|[SH]-)0?2([0-9a-f]{14})\b", r"\1b8\2", text)
    found.write_text(text)
    code, out, err = _cli("reconcile", spec, found, "--accept")
    assert code == 0, out + err
    lines = [line for line in spec.with_suffix(".lock").read_text().splitlines()
             if line.startswith("guid ")]
    assert "guid ib-leaf-1 node 0x" in "\n".join(lines)
    assert all(line.split()[3].startswith("0xb8") for line in lines), lines
    after = _render(spec, tmp_path / "after")
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert changed == ["opensm/compute/opensm-standby.conf", "opensm/compute/opensm.conf",
                       "opensm/compute/partitions.conf", "opensm/compute/root-guids",
                       "opensm/compute/topology.ibnetdiscover"], changed
    # the exported topology carries the accepted GUIDs: no placeholder is left, and read
    # back as a discovery it matches the plan and offers the lock nothing new
    exported = after["opensm/compute/topology.ibnetdiscover"]
    assert "GUIDs are the delivered ones" in exported and "PLACEHOLDERS" not in exported
    assert not re.search(r"(guid=0x|\(|[SH]-)0?2[0-9a-f]{14}\b", exported)
    found.write_text(exported)
    code, out, err = _cli("reconcile", spec, found, "--accept")
    assert code == 0 and "accepted" not in err, out + err
    assert exported.count("\ncaguid=0x") == len(lines) - exported.count("\nswitchguid=")
    partitions = after["opensm/compute/partitions.conf"]
    assert "PLACEHOLDERS" not in partitions and "0xb8" in partitions
    assert "0x020" not in partitions.split("Default=")[1]
    leaf = next(line for line in lines if line.startswith("guid ib-leaf-1 node"))
    assert after["opensm/compute/root-guids"] == leaf.split()[3] + "\n"
    assert "root_guid_file /etc/opensm/root-guids" in after["opensm/compute/opensm.conf"]


def test_one_delivered_guid_among_placeholders_is_offered(tmp_path: Path) -> None:
    """A discovery holding the plan's placeholders but for one switch's node GUID (a switch
    swapped in ibsim's file) offers that one GUID: facts skips only a discovery that holds
    no delivered GUID at all."""
    spec = _copy(tmp_path)
    text = _render(spec, tmp_path / "out")["opensm/compute/topology.ibnetdiscover"]
    found = tmp_path / "compute.ibnetdiscover"
    found.write_text(re.sub(r"switchguid=0x2([0-9a-f]{14})\(", r"switchguid=0xb8\1(", text,
                            count=1))
    code, out, err = _cli("reconcile", spec, found)
    assert code == 0, out + err
    assert "1 guid the lock does not hold yet: --accept records them" in err, err
