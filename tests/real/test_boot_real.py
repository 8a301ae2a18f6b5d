"""The boot path's files read by the programs that serve them (tests/real/netns.py): BIND's
named-checkzone on every zone of every example and named answering dig in a namespace; Kea's
-t on every example's config and Kea handing a client with an imported MAC (a veth with that
MAC, busybox udhcpc sending option 93) its planned address and boot file; the seeds as the
boot server serves them (the rendered script run on the rendered tables): cloud-init's schema
on every user-data and cloud-init's network reader on every network-config. Our files are
used as rendered; the harness changes only sandbox paths."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from tests.conftest import EXAMPLE_IDS, example_build
from tests.real import netns
from tests.real.netns import Lab

pytestmark = pytest.mark.real
ROOT = Path(__file__).resolve().parents[2]
SEED = "seed-64gpu-h100"


def _zones(files: dict[str, str]) -> dict[str, str]:
    return {path[4:-5]: text for path, text in files.items()
            if path.startswith("dns/") and path.endswith(".zone")}


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_named_checkzone_accepts_every_zone(name: str) -> None:
    netns.require("named-checkzone")
    built = example_build(name)
    zones = _zones(built.files)
    assert zones or "networks" not in (ROOT / "examples" / f"{name}.yaml").read_text()
    for zone, text in zones.items():
        ok, out = netns.check_zone(zone, text)
        assert ok, f"{zone}: {out}"


def test_an_example_without_networks_has_no_dhcp_config() -> None:
    assert not any(path.startswith("dhcp/") for path in example_build("minimal").files)


@pytest.mark.parametrize("name", [n for n in EXAMPLE_IDS if n != "minimal"])  # no networks
def test_kea_accepts_every_config(name: str) -> None:
    netns.require("kea-dhcp4")
    built = example_build(name)
    text = built.files["dhcp/kea-dhcp4.conf"]
    interface = json.loads(text)["Dhcp4"]["interfaces-config"]["interfaces"][0]
    # kea-dhcp4 -t opens the listening interface: it checks in a namespace that has one of
    # that name (a veth), the file unchanged
    with Lab(["boot", "peer"]) as lab:
        lab.link(("boot", interface), ("peer", "eth0"))
        path = lab.rundir("boot", "kea-t") / "kea-dhcp4.conf"
        path.write_text(text)
        done = lab.run("boot", netns.tool("kea-dhcp4"), "-t", str(path), check=False,
                       env={"KEA_PIDFILE_DIR": str(path.parent),
                            "KEA_LOCKFILE_DIR": str(path.parent)})
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", [n for n in EXAMPLE_IDS if n != "minimal"])  # no networks
def test_cloud_init_reads_every_seed_the_boot_server_serves(name: str, tmp_path: Path) -> None:
    """The rendered seed script run as the playbook runs it (the tables in, the web root out);
    every served user-data passes `cloud-init schema`, every network-config is parsed by
    cloud-init's own network reader, every meta-data names its host."""
    netns.require("cloud-init")
    built = example_build(name)
    for path, text in built.files.items():
        if path.startswith("cloud-init/"):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text)
    root = tmp_path / "www"
    done = subprocess.run(["python3", str(tmp_path / "cloud-init/cluster-iac-seeds.py"),
                           str(tmp_path / "cloud-init/seeds"), str(root)],
                          capture_output=True, text=True, timeout=60, check=True)
    management = built.plan.addresses["management"]
    booted = {management[h.hostname]: h.hostname for h in built.plan.boot.hosts
              if h.hostname in management}
    assert sorted(p.name for p in root.iterdir()) == sorted(booted), done.stdout
    user_data = {(seed / "user-data").read_text() for seed in root.iterdir()}
    for text in user_data:  # one per node type: the same text in each host's seed
        ok, message = netns.cloud_init_schema(text)
        assert ok, message
    seeds = sorted(root.iterdir())
    read = netns.cloud_init_network_configs([(s / "network-config").read_text() for s in seeds])
    for seed, (ok, message) in zip(seeds, read, strict=True):  # each config read on its own
        assert ok and f"- {seed.name}/" in message, f"{seed.name}: {message}"
        meta = json.loads((seed / "meta-data").read_text())
        assert meta["local-hostname"].split(".")[0] == booted[seed.name]


def test_named_serves_every_zone_of_the_example() -> None:
    """named authoritative for the seed example's zones in a namespace; dig from another across
    a veth gets each sampled name's planned address, and each address's PTR its name."""
    netns.require("named", "named-checkconf", "dig")
    built = example_build(SEED)
    boot = built.plan.boot
    server = boot.server_address
    with Lab(["dns", "client"]) as lab:
        lab.link(("dns", "eth0"), ("client", "eth0"))
        lab.address("dns", "eth0", f"{server}/24")
        lab.address("client", "eth0", "10.0.1.250/24")
        netns.start_named(lab, "dns", _zones(built.files), address=server, port=5353)
        records = boot.records
        sample = [records[0], records[len(records) // 2], records[-1],
                  *(r for r in records if r.network == "bmc")][:6]
        for record in sample:
            name = f"{record.name}.{boot.domain}"
            answer = netns.dig(lab, "client", server, name, port=5353)
            assert (answer.status, answer.data()) == ("NOERROR", [record.address]), name
            reverse = netns.dig(lab, "client", server, record.address, "PTR", port=5353)
            assert (reverse.status, reverse.data()) == ("NOERROR", [f"{name}."]), record
        missing = netns.dig(lab, "client", server, f"nosuchhost.{boot.domain}", port=5353)
        assert missing.status == "NXDOMAIN"


def test_kea_leases_the_imported_mac_its_planned_address(tmp_path: Path) -> None:
    """compute01's MAC imported from a manifest (cluster-iac macs import), the example
    rendered; Kea on the boot server's namespace hands a client with that MAC, asking as x64
    UEFI (option 93 = 7), exactly compute01's planned address, the boot server as next-server
    and GRUB's x64 network image; a client with an unknown MAC gets nothing."""
    netns.require("kea-dhcp4", "busybox")
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"{SEED}{suffix}", tmp_path / f"c{suffix}")
    mac = "7c:fe:90:12:34:56"
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(f"serial,host,mac,port\nSN1,compute01,{mac},mgmt-r01-1:swp1\n")
    runner = CliRunner()
    result = runner.invoke(main, ["macs", "import", str(tmp_path / "c.yaml"), str(manifest)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    assert runner.invoke(main, ["render", str(tmp_path / "c.yaml"), "-o", str(out)]).exit_code == 0
    config = json.loads((out / "dhcp" / "kea-dhcp4.conf").read_text())
    planned = example_build(SEED).plan
    address = planned.addresses["management"]["compute01"]
    server = planned.boot.server_address
    interface = config["Dhcp4"]["interfaces-config"]["interfaces"][0]
    with Lab(["boot", "compute01", "stranger"]) as lab:
        lab.link(("boot", interface), ("compute01", "eth0"))
        lab.mac("compute01", "eth0", mac)
        lab.address("boot", interface, f"{server}/24")
        netns.start_kea(lab, "boot", config)
        lease = netns.dhcp_client(lab, "compute01", "eth0", options=["0x5d:0007"])
        assert lease["ip"] == address, lease
        assert (lease["siaddr"], lease["boot_file"]) == (server, "grubnetx64.efi"), lease
        assert lease["router"] == "10.0.1.1" and lease["dns"] == server, lease
    with Lab(["boot", "stranger"]) as lab:
        lab.link(("boot", interface), ("stranger", "eth0"))
        lab.mac("stranger", "eth0", "02:00:00:00:00:99")
        lab.address("boot", interface, f"{server}/24")
        netns.start_kea(lab, "boot", config)
        with pytest.raises(netns.LabError, match="got no lease"):
            netns.dhcp_client(lab, "stranger", "eth0", timeout=6)
