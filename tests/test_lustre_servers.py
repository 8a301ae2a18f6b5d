"""Lustre servers and clients: every generated file parsed by the Lustre manual's syntax
(tests/lustre_syntax.py), the scripts by sh -n and shellcheck, bandwidth and capacity derived
from the hardware, and each new check tripped at its spec line."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.plan.lustre_bandwidth import group_rates_gbs, max_flow_gbs
from tests.check_fixtures import findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data
from tests.lustre_syntax import (
    commands,
    nid,
    parse_fstab,
    parse_lnet,
    parse_mdadm,
    parse_mgsspec,
    parse_mkfs,
    parse_mount,
    parse_set_param,
)

LUSTRE_EXAMPLES = ["dgx-h100-superpod-4su", "seed-64gpu-h100"]
# The network whose addresses make each example's NIDs (LNet over its storage fabric, and
# over the compute fabric for the seed, which has one HDR switch for everything).
NID_NETWORK = {"dgx-h100-superpod-4su": "storage", "seed-64gpu-h100": "ipoib"}


def _files(example: str) -> dict[str, str]:
    return {p: t for p, t in example_build(example).files.items() if p.startswith("lustre/")}


@pytest.mark.parametrize("example", LUSTRE_EXAMPLES)
def test_server_scripts_follow_the_manuals_syntax(example: str) -> None:
    build = example_build(example)
    plan, files = build.plan, _files(example)
    subnet = ipaddress.IPv4Network(plan.settings.networks.model_dump()[NID_NETWORK[example]]
                                   ["cidr"])
    mgs_host = plan.lustre.hardware.servers[0].hostname
    mgs_ip = plan.addresses[NID_NETWORK[example]][mgs_host]
    indices: dict[str, list[int]] = {"mdt": [], "ost": []}
    mgs_count = 0
    servers = [p for p in files if p.startswith("lustre/servers/")]
    assert sorted(servers) == sorted(f"lustre/servers/{s.hostname}.sh"
                                     for s in plan.lustre.hardware.servers)
    for path in servers:
        arrays: dict[str, Any] = {}
        formatted, made, mounted = [], set(), []
        for words in commands(files[path]):
            if words[0] == "mdadm":
                md = parse_mdadm(words)
                arrays[md.device] = md
            elif words[0] == "mkfs.lustre":
                mkfs = parse_mkfs(words)
                assert mkfs.device in arrays  # formats the RAID built just before
                formatted.append(mkfs.device)
                mgs_count += "mgs" in mkfs.types
                for kind in ("mdt", "ost"):
                    if kind in mkfs.types:
                        indices[kind].append(int(mkfs.options["--index"][0]))
                for value in mkfs.options.get("--mgsnode", []):
                    ip, net = nid(value)
                    assert ip == mgs_ip and ipaddress.IPv4Address(ip) in subnet
                    assert net == plan.lustre.hardware.lnet.net
            elif words[:2] == ["mkdir", "-p"]:
                made.add(words[2])
            elif words[0] == "mount":
                device, directory, _ = parse_mount(words)
                assert device in formatted and directory in made
                mounted.append(device)
            else:
                persistent, name, value = parse_set_param(words)
                assert persistent and name.startswith(f"obdfilter.{plan.lustre.fsname}-OST")
        assert mounted == formatted and formatted
        members = [m for md in arrays.values() for m in md.members]
        assert len(members) == len(set(members))  # no drive in two RAID groups
    assert mgs_count == 1
    assert sorted(indices["ost"]) == list(range(plan.lustre.ost_count))
    assert len(set(indices["mdt"])) == len(indices["mdt"])


@pytest.mark.parametrize("example", LUSTRE_EXAMPLES)
def test_client_files_and_lnet_follow_the_manuals_syntax(example: str) -> None:
    plan, files = example_build(example).plan, _files(example)
    hardware = plan.lustre.hardware
    [row] = parse_fstab(files["lustre/clients/fstab"])
    assert row[1] == plan.lustre.mount and "flock" in row[3].split(",")
    nodes, fsname = parse_mgsspec(row[0])
    assert fsname == plan.lustre.fsname and nodes == [list(hardware.lnet.mgs_nids)]
    mount = [w for w in commands(files["lustre/clients/mount.sh"]) if w[0] == "mount"]
    assert parse_mount(mount[0])[:2] == (row[0], row[1])
    tuning = [parse_set_param(w) for w in commands(files["lustre/clients/tune.sh"])]
    assert tuning and not any(persistent for persistent, _, _ in tuning)
    assert all(name.split(".")[1].startswith(plan.lustre.fsname + "-") for _, name, _ in tuning)
    for node_type, interfaces in hardware.lnet.interfaces.items():
        [net] = parse_lnet(files[f"lustre/lnet/{node_type}.yaml"])
        assert net["net type"] == hardware.lnet.net
        assert [ni["interfaces"][0] for ni in net["local NI(s)"]] == list(interfaces)


def test_every_tuning_line_says_why() -> None:
    script = _files("seed-64gpu-h100")["lustre/clients/tune.sh"]
    lines = script.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("lctl "):
            assert lines[i - 1].startswith("# ") and len(lines[i - 1]) > 40
    # 16 OSTs x a 4 MiB RPC = 64 MiB per file; 8 GPUs per node read one file each
    assert "llite.training-*.max_read_ahead_per_file_mb=64" in script
    assert "llite.training-*.max_read_ahead_mb=512" in script
    assert "osc.training-OST*.max_pages_per_rpc=1024" in script


@pytest.mark.parametrize("example", LUSTRE_EXAMPLES)
def test_scripts_pass_sh_n_and_shellcheck(example: str, tmp_path: Path) -> None:
    scripts = {p: t for p, t in _files(example).items() if p.endswith(".sh")}
    assert len(scripts) >= 4
    for path, text in scripts.items():
        target = tmp_path / path.replace("/", "_")
        target.write_text(text)
        subprocess.run(["sh", "-n", str(target)], check=True)
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shellcheck is not installed (Debian package shellcheck)")
        pytest.skip("shellcheck is not installed")
    result = subprocess.run(["shellcheck", "-s", "sh", *map(str, tmp_path.iterdir())],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_superpod_bandwidth_and_capacity_from_the_hardware() -> None:
    hw = example_build("dgx-h100-superpod-4su").plan.lustre.hardware
    # 8 OSS x 4 OSTs x RAID-6 4+2 of CM6-R: read 4 x 6.9 GB/s, write 4 x 4.2 GB/s per OST
    assert hw.read.drives == pytest.approx(8 * 4 * 4 * 6.9)  # 883.2
    assert hw.write.drives == pytest.approx(8 * 4 * 4 * 4.2)  # 537.6
    # LNet is given one interface (networks.storage.interface): one of each host's two ports
    assert hw.read.server_nics == 8 * 1 * 400 / 8  # 400 GB/s: one NDR port per OSS
    assert hw.read.client_nics == 127 * 1 * 200 / 8  # 3175: one NDR200 storage port per DGX
    assert (hw.read.bound, hw.read.limit) == (400, "server NICs")
    assert (hw.write.bound, hw.write.limit) == (400, "server NICs")
    assert hw.read.fabric == 800  # the cables could carry both ports
    assert hw.read.effective == 400 and hw.write.effective == 250  # the measured figures
    assert hw.capacity_tb == pytest.approx(32 * 4 * 30.72)  # 3932.16 TB usable
    assert hw.raw_tb == pytest.approx(32 * 6 * 30.72)


def test_superpod_bandwidth_with_both_ports_given_to_lnet() -> None:
    """Multi-rail: both storage ports of the servers and the DGX in lnet.interfaces."""
    data = example_data("dgx-h100-superpod-4su")
    both = ["enp41s0f0", "enp41s0f1"]
    data["storage"]["lustre"]["lnet"] = {"interfaces": {"lustre": both, "dgx-h100": both}}
    hw = compile_data(data).lustre.hardware
    assert hw.read.server_nics == 8 * 2 * 400 / 8  # 800 GB/s: two NDR ports per OSS
    assert hw.read.client_nics == 127 * 2 * 200 / 8  # 6350: two NDR200 storage ports per DGX
    assert (hw.read.bound, hw.read.limit) == (800, "server NICs")
    assert hw.write.bound == pytest.approx(537.6) and hw.write.limit == "drives"


def test_lustre_bound_counts_the_interfaces_lnet_is_given_not_every_nic() -> None:
    """Issue 29: each seed OSS has two HDR HCAs; given LNet one of them, a server moves 25 GB/s,
    and the four servers' 100 GB/s (not 200) bound the aggregate below the drives' 126."""
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["lnet"]["interfaces"]["oss"] = ["ib0"]
    hw = compile_data(data).lustre.hardware
    assert hw.read.server_nics == 4 * 25
    assert (hw.read.bound, hw.read.limit) == (100, "server NICs")
    data["storage"]["lustre"]["read_gbs"] = 120  # a claim the two-HCA design would allow
    [found] = findings_of(data, "STORAGE-BANDWIDTH-CLAIM")
    assert "server NICs 100.0" in found.message and found.is_error


def test_more_interfaces_than_ports_count_the_ports() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["lnet"]["interfaces"]["h100-hdr"] = ["ib0", "ib1", "ib2"]
    hw = compile_data(data).lustre.hardware
    assert hw.read.client_nics == 8 * 25  # each compute node has one HDR port


def test_seed_bandwidth_is_the_hbas_not_the_guides_250() -> None:
    hw = example_build("seed-64gpu-h100").plan.lustre.hardware
    # per OSS: 4 x RAID-6 8+2 of PM1653 = 4 x 8 x 4.3 = 137.6 GB/s, but two PCIe 4.0 x8 HBAs
    # carry 31.5 GB/s; the OSS's two HDR HCAs 50 GB/s; 8 clients x one HDR = 200 GB/s
    assert hw.read.drives == pytest.approx(4 * 31.5)
    assert hw.read.server_nics == 4 * 50 and hw.read.client_nics == 8 * 25
    assert (hw.read.bound, hw.read.limit) == (126, "drives")
    assert (hw.write.bound, hw.write.limit) == (126, "drives")
    assert hw.capacity_tb == pytest.approx(16 * 8 * 15.36)  # 1966.08 TB usable
    assert hw.raw_tb == pytest.approx(16 * 12 * 15.36)  # 48 drives per OSS, spares included


def test_raid_rates() -> None:
    assert group_rates_gbs("raid6", 10, 4300, 3800) == (34.4, 30.4)
    assert group_rates_gbs("raid10", 4, 6900, 4000) == (27.6, 8.0)
    assert group_rates_gbs("raid1", 2, 6900, 4000) == (13.8, 4.0)
    assert group_rates_gbs("raid5", 5, 1000, 1000) == (4.0, 4.0)


def test_an_oversubscribed_fabric_is_the_limit() -> None:
    """Servers on one leaf, clients on another, one 400 Gb/s cable between the leaves."""
    graph = nx.Graph()
    graph.add_edge("oss1", "leaf1", links=2, speed_gbps=400)
    graph.add_edge("oss2", "leaf1", links=2, speed_gbps=400)
    graph.add_edge("leaf1", "spine", links=1, speed_gbps=400)
    graph.add_edge("leaf2", "spine", links=4, speed_gbps=400)
    for i in range(4):
        graph.add_edge(f"c{i}", "leaf2", links=1, speed_gbps=400)
    assert max_flow_gbs(graph, {"oss1": None, "oss2": None}, [f"c{i}" for i in range(4)]) == 50
    assert max_flow_gbs(graph, {"oss1": 10.0, "oss2": 20.0}, ["c0"]) == 30
    assert max_flow_gbs(graph, {"oss1": None}, []) == 0
    # clients capped at what LNet gives them
    assert max_flow_gbs(graph, {"oss1": None, "oss2": None}, {"c0": 5.0, "c1": 7.5}) == 12.5


def test_read_gbs_10000_with_four_servers_is_rejected_at_its_line() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["read_gbs"] = 10000
    found = findings_of(data, "STORAGE-BANDWIDTH-CLAIM")
    assert [f.message for f in found] == [
        "read_gbs 10000 GB/s is more than the hardware can move, 126.0 GB/s (limited by the "
        "drives: drives 126.0, RAID engine (software, 4 core(s) per server) not a limit, "
        "server NICs 200.0, client NICs 200.0, fabric 200.0 GB/s)"]
    assert found[0].path == ("storage", "lustre", "read_gbs") and found[0].is_error
    data["storage"]["lustre"]["read_gbs"] = 120  # a measured figure below the bound narrows it
    plan = compile_data(data)
    assert findings_of(plan, "STORAGE-BANDWIDTH-CLAIM") == []
    assert plan.lustre.hardware.read.effective == 120


def test_capacity_claim_above_the_drives() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["storage"]["lustre"]["capacity_tb"] = 5000
    assert messages(data, "STORAGE-CAPACITY-CLAIM") == [
        "capacity_tb 5000 TB is more than the OSTs' data drives hold: 3932.2 TB usable "
        "(5898.2 TB raw)"]


def _compile_error(data: dict[str, Any]) -> list[tuple[str, tuple[object, ...], str]]:
    with pytest.raises(CompileError) as info:
        compile_data(data)
    return [(d.code, d.path, d.message) for d in info.value.diagnostics]


def test_a_file_system_without_servers_is_rejected() -> None:
    data = example_data("dgx-h100-superpod-4su")
    del data["storage"]["lustre"]["oss_group"]
    assert _compile_error(data) == [(
        "LUSTRE-NO-SERVERS", ("storage", "lustre"), "Lustre file system lustre1 has no object "
        "storage servers (OSS): name their node group in oss_group")]


def test_too_many_drives_for_the_bays() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["storage"]["lustre"]["ost"]["drives"] = 8  # 4 OSTs x 8 = 32 drives in 24 bays
    [(code, path, message), *_] = _compile_error(data)
    assert (code, path) == ("LUSTRE-DRIVE-BAYS", ("storage", "lustre", "ost", "drives"))
    assert message == ("oss-01 (lustre, platform lustre-server-2u) needs 32 drives for its "
                       "targets but has 24 drive bays")


@pytest.mark.parametrize(("change", "expected"), [
    ({"ost": {"drive": "kioxia-cm6-r-30tb", "drives": 3, "raid": "raid6"}},
     ("LUSTRE-RAID", ("storage", "lustre", "ost", "drives"),
      "ost: raid6 needs at least 4 drives, not 3")),
    ({"ost": {"drive": "kioxia-cm7", "drives": 6}},
     ("SPEC-UNKNOWN-REF", ("storage", "lustre", "ost", "drive"),
      "unknown drive model 'kioxia-cm7'")),
    ({"ost_indices": [0, 1]},
     ("LUSTRE-OST-INDEX", ("storage", "lustre", "ost_indices"),
      "ost_indices lists 2 indices for 8 OSS x 4 = 32 OSTs")),
    ({"lnet": {"net": "o2ib", "network": "management"}},
     ("LUSTRE-LNET-NET", ("storage", "lustre", "lnet", "net"),
      "LNet net o2ib needs RDMA (InfiniBand or RoCE), which the management network does not "
      "carry: use tcp, or run LNet on a fabric")),
])
def test_target_and_lnet_mistakes(change: dict[str, Any], expected: tuple[Any, ...]) -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["storage"]["lustre"].update(change)
    assert expected in _compile_error(data)


def test_lnet_on_a_missing_fabric() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["lnet"]["network"] = "storage"
    assert _compile_error(data) == [(
        "LUSTRE-LNET-NETWORK", ("storage", "lustre", "lnet", "network"),
        "LNet is to run on the storage network, but the spec declares no fabric.storage")]


def test_fsname_longer_than_8_characters() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["fsname"] = "training1"
    found = findings_of(data, "LUSTRE-FSNAME")
    assert [f.message for f in found] == [
        "fsname 'training1' has 9 characters; Lustre allows at most 8 (mkfs.lustre --fsname)"]
    assert found[0].path == ("storage", "lustre", "fsname") and found[0].hint == \
        "for example 'training'"


def test_duplicate_ost_indices() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["ost_indices"] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                 14, 3]
    found = findings_of(data, "LUSTRE-OST-INDEX")
    assert [f.message for f in found] == [
        "OST index 3 is given to 2 OSTs (on oss1, oss4); each OST needs its own"]
    assert found[0].path == ("storage", "lustre", "ost_indices")


def test_clients_without_a_storage_nic_cannot_reach_the_servers() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["node_types"]["login"] = {"platform": "mgmt-1u", "nics": [
        {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]}
    data["node_groups"][2]["node_type"] = "login"
    found = findings_of(data, "LUSTRE-UNREACHABLE")
    assert [f.message for f in found] == [
        "node group login: 2 host(s) (login-01 ...) has no storage NIC on the storage fabric, "
        "so they cannot reach every Lustre server over LNet o2ib"]
    assert found[0].path == ("storage", "lustre", "lnet", "network")


def test_hosts_without_an_address_have_no_nid() -> None:
    data = example_data("dgx-h100-superpod-4su")
    del data["networks"]["storage"]
    found = findings_of(data, "LUSTRE-NID")  # 10 servers, 127 DGX and 2 login nodes
    assert [f.message for f in found] == [
        "139 Lustre host(s) have no address on networks.storage, so no NID on LNet o2ib over "
        "the storage network: mds-01, mds-02, oss-01, oss-02, oss-03 ..."]


def test_raid_stripe_that_is_not_1_mib_warns() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["ost"].update({"drives": 12, "spares": 0})  # 10 data drives
    found = findings_of(data, "LUSTRE-RAID-STRIPE")
    assert [f.message for f in found] == [
        "ost training-OST0000: raid6 of 12 drives has 10 data drives x 64 KiB chunks = a 640 "
        "KiB full stripe, not Lustre's 1 MiB RPC: writes that do not fill a stripe read its "
        "parity first (read-modify-write)"]
    assert not found[0].is_error


def test_metadata_without_redundancy_warns() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["mdt"]["raid"] = "raid0"
    found = findings_of(data, "LUSTRE-TARGET-REDUNDANCY")
    assert [f.message for f in found] == [
        "the MDT is RAID 0: one failed drive loses every file's metadata"]
    assert found[0].path == ("storage", "lustre", "mdt", "raid")


@pytest.mark.parametrize(("key", "value", "code"), [
    ("drive_path", "/dev/sd{n}; reboot", "SPEC-FORMAT"),
    ("drive_path", "/dev/../etc/x{n}", "SPEC-PATH"),
    ("mount", "/mnt/lustre $(reboot)", "SPEC-PATH"),
    ("mount", "/etc/lustre", "SPEC-PATH"),
    ("fsname", "a;b", "SPEC-FORMAT"),
])
def test_no_spec_string_reaches_a_script_unchecked(key: str, value: str, code: str) -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"][key] = value
    assert _spec_codes(data) == [(code, ("storage", "lustre", key))]


def test_lnet_interface_names_are_checked() -> None:
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["lnet"]["interfaces"]["oss"] = ["ib0", "ib1 ib2"]
    assert _spec_codes(data) == [
        ("SPEC-FORMAT", ("storage", "lustre", "lnet", "interfaces", "oss", 1))]


def _spec_codes(data: dict[str, Any]) -> list[tuple[str, tuple[object, ...]]]:
    from cluster_iac.spec.parse import parse_spec

    with pytest.raises(CompileError) as info:
        parse_spec(data)
    return [(d.code, d.path) for d in info.value.diagnostics]


def test_directory_paths_are_quoted_in_every_script() -> None:
    """A directory path with shell syntax stays one word of lfs setstripe."""
    data = example_data("seed-64gpu-h100")
    data["storage"]["lustre"]["directories"].append(
        {"path": "/mnt/lustre/x'; reboot; '", "pattern": "home"})
    from cluster_iac.emit import lustre as lustre_emitter

    text = lustre_emitter.render(compile_data(data))["lustre/setstripe.sh"]
    setstripe = [w for w in commands(text) if w[0] == "lfs"]
    assert setstripe[-1][-1] == "/mnt/lustre/x'; reboot; '"


@pytest.mark.parametrize(("parse", "bad"), [
    (lambda: parse_mkfs(["mkfs.lustre", "--fsname=trainingx", "--ost", "--index=0",
                         "--mgsnode=10.0.0.1@o2ib", "/dev/md/x"]), "fsname of 9 characters"),
    (lambda: parse_mkfs(["mkfs.lustre", "--fsname=t", "--ost", "--index=0", "/dev/md/x"]),
     "an OST without --mgsnode"),
    (lambda: parse_mkfs(["mkfs.lustre", "--fsname=t", "--ost", "--mgs", "--index=0",
                         "/dev/md/x"]), "an OST with the MGS"),
    (lambda: parse_mkfs(["mkfs.lustre", "--fsname=t", "--mdt", "--index=0",
                         "--mgsnode=10.0.0.1@o2ib",
                         "--mkfsoptions=-E stride=32,stripe_width=100", "/dev/md/x"]),
     "stripe_width not a multiple of stride"),
    (lambda: nid("10.0.0.1@o2ib0"), "network number 0 written out"),
    (lambda: parse_mgsspec("10.0.0.1@o2ib/training"), "no ':/' before the fsname"),
    (lambda: parse_mount(["mount", "-t", "lustre", "10.0.0.1@o2ib:/t"]), "no mount point"),
    (lambda: parse_mdadm(["mdadm", "--create", "/dev/md/x", "--level=6", "--raid-devices=4",
                          "/dev/a", "/dev/b", "/dev/c"]), "fewer members than raid-devices"),
    (lambda: parse_set_param(["lctl", "set_param", "llite.*.max_read_ahead_mb"]), "no value"),
    (lambda: parse_lnet("net:\n- net type: o2ib\n  local NI(s):\n  - interfaces: [ib0]\n"),
     "interfaces as a list, not {0: name}"),
    (lambda: parse_fstab("10.0.0.1@o2ib:/t /lustre lustre defaults 0\n"), "five fields"),
])
def test_the_syntax_parsers_reject_what_the_tools_would(parse: Any, bad: str) -> None:
    """The parsers above are only as good as what they refuse: each rejects one mistake."""
    with pytest.raises((SyntaxError, ValueError)):
        parse()
