"""The lossless RoCE QoS: one plan record per Ethernet fabric (plan/qos.py) that the switches'
QoS, the AVD inputs, the hosts' script, the playbook and NCCL all read, and the spec's choice
of DSCP carried to every one of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cluster_iac.base.errors import CompileError
from cluster_iac.emit import playbook_files
from cluster_iac.emit.avd_inputs import eos_port
from cluster_iac.emit.qos import SCRIPT_DEST, UNIT_NAME, UNIT_PATH, host_script_path
from cluster_iac.plan.qos import ecn_threshold, traffic_class
from cluster_iac.render import build
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data

EXAMPLE = "spectrum-x-roce"


def test_the_example_plans_the_nvidia_lossless_defaults() -> None:
    plan = example_build(EXAMPLE).plan
    qos = plan.qos["compute"]
    assert (qos.roce_dscp, qos.roce_priority, qos.cnp_dscp, qos.cnp_priority) == (26, 3, 48, 6)
    assert qos.traffic_class == 106 and qos.pfc == "0,0,0,1,0,0,0,0" and qos.gid_index == 3
    # 400G host legs and 800G fabric ports, each with its marking thresholds
    assert [(e.speed_gbps, e.min_bytes, e.max_bytes) for e in qos.ecn] == [
        (400, 150_000, 1_500_000), (800, 150_000, 1_500_000)]
    assert all(c.qos is qos for c in plan.switch_configs.values())
    assert plan.nccl["h200"].env()["NCCL_IB_TC"] == "106"


def test_traffic_class_is_dscp_shifted_past_the_ecn_bits() -> None:
    assert [traffic_class(d) for d in (0, 24, 26, 46, 63)] == [2, 98, 106, 186, 254]
    assert ecn_threshold(100).speed_gbps == 100 and ecn_threshold(10).min_bytes == 150_000


def test_the_host_script_and_the_playbook_agree_with_the_switches() -> None:
    built = example_build(EXAMPLE)
    script = built.files[host_script_path("h200")]
    assert ("ports='mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7'\n"
            "for dev in $ports; do") in script
    # each compute port: PFC on priority 3, ToS 106, CNPs on DSCP 48; its MTU only checked (the
    # port found by RDMA device): the node's netplan rails file sets it (one owner)
    assert 'roce_port "${path##*/}" "$dev" 0,0,0,1,0,0,0,0 106 48' in script
    assert 'mtu_is "${path##*/}" 9000 || failed=1' in script
    assert "ip link set" not in script and script.rstrip().endswith('exit "$failed"')
    installed = playbook_files.installs(built.plan)["type_h200"]
    assert {"src": host_script_path("h200"), "dest": playbook_files.ROCE_QOS_SCRIPT,
            "owner": "root", "group": "root", "mode": "0755", "how": "copy"} in installed
    assert {"src": UNIT_PATH, "dest": playbook_files.ROCE_QOS_UNIT, "owner": "root",
            "group": "root", "mode": "0644", "how": "enable"} in installed
    switch = YAML(typ="safe").load(built.files["qos/compute.yaml"])
    assert switch["trust"] == "dscp" and switch["host"]["traffic_class"] == 106
    assert [(c["dscp"], c["priority"], c["pfc"]) for c in switch["classes"]] == [
        (26, 3, True), (48, 6, False), ("other", 0, False)]


def test_the_boot_unit_runs_the_script_before_slurmd_and_the_playbook_enables_it() -> None:
    """The unit's order and the playbook's tasks (real systemd and ansible-playbook read them
    in tests/real/test_roce_qos_boot_real.py)."""
    built = example_build(EXAMPLE)
    unit = dict(line.split("=", 1) for line in built.files[UNIT_PATH].splitlines()
                if "=" in line and not line.startswith("#"))
    assert unit["ExecStart"] == SCRIPT_DEST and unit["Type"] == "oneshot"
    assert unit["RemainAfterExit"] == "yes" and unit["After"] == "openibd.service"
    assert set(unit["Before"].split()) == {"network-online.target", "slurmd.service"}
    assert set(unit["WantedBy"].split()) == {"multi-user.target", "network-online.target"}
    play = next(p for p in YAML(typ="safe").load(built.files["ansible/site.yml"])
                if p["hosts"] == "type_h200")
    commands = [t["ansible.builtin.command"]["argv"] for t in play["tasks"]
                if "ansible.builtin.command" in t]
    assert any(c.endswith("+ ['daemon-reload'] }}") for c in commands)
    enable = next(t for t in play["tasks"] if t.get("name") == "the units enabled and started")
    assert enable["loop"] == [UNIT_NAME]
    assert enable["ansible.builtin.command"]["argv"].endswith("+ ['enable', '--now', item] }}")
    # an InfiniBand example has no host script and no unit
    assert UNIT_PATH not in example_build("hgx-h200").files


def test_a_chosen_dscp_reaches_nccl_the_hosts_and_avd(tmp_path: Path) -> None:
    spec = (Path(__file__).parents[1] / "examples" / f"{EXAMPLE}.yaml").read_text()
    path = tmp_path / "cluster.yaml"
    path.write_text(spec.replace("underlay: {bgp: unnumbered}",
                                 "underlay: {bgp: unnumbered}\n    qos: {dscp: 24}"))
    built = build(path)
    assert built.plan.nccl["h200"].env()["NCCL_IB_TC"] == "98"
    assert '"$dev" 0,0,0,1,0,0,0,0 98 48' in built.files[host_script_path("h200")]
    fabric = YAML(typ="safe").load(built.files["switches/avd/compute/group_vars/"
                                               "COMPUTE_FABRIC.yml"])
    leaf = fabric["l3leaf"]["nodes"][0]["structured_config"]
    assert leaf["qos"]["map"]["dscp"] == ["24 to traffic-class 3", "48 to traffic-class 6"]


def test_a_fabric_on_infiniband_has_no_qos() -> None:
    plan = example_build("hgx-h200").plan
    assert plan.qos == {} and not any(p.startswith("qos/") for p in example_build("hgx-h200").files)


def test_the_spec_may_set_nccl_traffic_class_with_other_ecn_bits() -> None:
    data = example_data(EXAMPLE)
    data["nccl"] = {"traffic_class": 105, "env": {"NCCL_IB_GID_INDEX": 3}}  # DSCP 26, ECT(1)
    assert compile_data(data).nccl["h200"].env()["NCCL_IB_TC"] == "105"
    data["nccl"] = {"node_types": {"h200": {"NCCL_IB_TC": 98}}}
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    assert [(d.code, d.path) for d in caught.value.diagnostics] == [
        ("QOS-NCCL-TC", ("nccl", "node_types", "h200", "NCCL_IB_TC"))]


def test_avd_ports_are_eos_names() -> None:
    assert [eos_port(p) for p in ("p1", "p57", "p1s2")] == ["Ethernet1", "Ethernet57",
                                                            "Ethernet1/2"]
    assert eos_port("swp47") == "Ethernet47"  # a management switch's port
    for wrong in ("swp1s2", "eth0", "p"):
        with pytest.raises(ValueError):
            eos_port(wrong)


def test_avd_nodes_carry_the_plans_identities() -> None:
    built = example_build(EXAMPLE)
    fabric = YAML(typ="safe").load(built.files["switches/avd/compute/group_vars/"
                                               "COMPUTE_FABRIC.yml"])
    nodes = fabric["spine"]["nodes"] + fabric["l3leaf"]["nodes"]
    configs = built.plan.switch_configs
    assert {n["name"]: (n["bgp_as"], n["loopback_ipv4_address"]) for n in nodes} == {
        name: (str(c.asn), c.loopback) for name, c in configs.items()}
    loopbacks = [n["loopback_ipv4_address"] for n in nodes]
    assert len(set(loopbacks)) == len(loopbacks)  # AVD itself does not refuse a duplicate
