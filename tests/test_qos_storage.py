"""Host QoS on a RoCE storage fabric, and who owns the hosts' MTU.

The SuperPOD example's storage fabric is Ethernet (SN4700, LNet o2ib over RoCE): every host
with a storage address gets the host script for its storage ports, in the storage fabric's own
classes (plan/qos.py FabricQos.host_ports). The MTU is set once, by the OS network
configuration (cloud-init network-config, plan/boot.py Subnet.mtu = the fabric's host MTU), and
the script only checks it; a spec MTU for the storage network that differs is QOS-HOST-MTU.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.base.errors import CompileError
from cluster_iac.emit import playbook_files
from cluster_iac.emit.qos import UNIT_PATH, host_script, host_script_path
from cluster_iac.plan.qos import FabricQos
from cluster_iac.render import Build, build
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data

EXAMPLE = "dgx-h100-superpod-4su"


def _build(tmp_path: Path, data: dict[str, Any]) -> Build:
    path = tmp_path / "cluster.yaml"
    with path.open("w") as stream:
        YAML().dump(data, stream)
    return build(path)


def _network_mtus(built: Build, node_type: str, interface: str) -> set[int]:
    """The MTU each host of the type gets on ``interface`` from its cloud-init seed."""
    rows = [json.loads(line) for line in
            built.files[f"cloud-init/seeds/{node_type}.jsonl"].splitlines()]
    return {row["network-config"]["network"]["ethernets"][interface]["mtu"] for row in rows}


def test_every_host_on_the_storage_fabric_gets_its_storage_ports_qos() -> None:
    built = example_build(EXAMPLE)
    qos = built.plan.qos["storage"]
    assert "compute" not in built.plan.qos  # the compute fabric is InfiniBand
    assert qos.port_kind == "interface"
    assert qos.host_ports == {"dgx-h100": ("enp41s0f0",), "head": ("enp41s0f0",),
                              "lustre": ("enp41s0f0",)}
    for node_type in qos.host_ports:
        script = built.files[host_script_path(node_type)]
        assert "# fabric storage: RoCE DSCP 26 (ToS 106)" in script
        assert "ports=enp41s0f0\nfor netdev in $ports; do" in script
        assert 'roce_port "$netdev" "${path##*/}" 0,0,0,1,0,0,0,0 106 48' in script
        assert 'mtu_is "$netdev" 9000 || failed=1' in script
        assert "fabric compute" not in script and "ip link set" not in script
        installed = playbook_files.installs(built.plan)[f"type_{node_type.replace('-', '_')}"]
        assert any(i["src"] == host_script_path(node_type) for i in installed)
        assert any(i["src"] == UNIT_PATH and i["how"] == "enable" for i in installed)


def test_the_os_network_configuration_sets_the_storage_fabrics_mtu() -> None:
    """One owner: the seeds give the storage interface the fabric's host MTU (not 1500), the
    MTU the leaf ports facing the hosts carry; the script checks that same value."""
    built = example_build(EXAMPLE)
    assert _network_mtus(built, "dgx-h100", "enp41s0f0") == {9000}
    assert _network_mtus(built, "lustre", "enp41s0f0") == {9000}
    assert _network_mtus(built, "dgx-h100", "enp170s0f0") == {1500}  # management: no fabric
    leaves = [c for c in built.plan.switch_configs.values()
              if c.fabric == "storage" and c.host_ports]
    assert leaves and {p.mtu for c in leaves for p in c.host_ports} == {9000}


def test_the_storage_fabric_keeps_its_own_dscp_and_mtu(tmp_path: Path) -> None:
    data = example_data(EXAMPLE)
    storage = data["fabric"]["storage"]
    storage["qos"] = {"dscp": 24}
    storage["underlay"] = {"bgp": "unnumbered", "host_mtu": 9100}
    data["storage"]["lustre"]["lnet"] = {"interfaces": {"lustre": ["enp41s0f0", "enp41s0f1"]}}
    built = _build(tmp_path, data)
    qos = built.plan.qos["storage"]
    assert (qos.roce_dscp, qos.traffic_class, qos.host_mtu) == (24, 98, 9100)
    # LNet multi-rail: both ports of the servers on the fabric get the QoS
    assert qos.host_ports["lustre"] == ("enp41s0f0", "enp41s0f1")
    script = built.files[host_script_path("lustre")]
    assert "ports='enp41s0f0 enp41s0f1'\nfor netdev in $ports; do" in script
    assert '"${path##*/}" 0,0,0,1,0,0,0,0 98 48' in script and 'mtu_is "$netdev" 9100' in script
    switch = YAML(typ="safe").load(built.files["qos/storage.yaml"])
    assert switch["classes"][0]["dscp"] == 24 and switch["host"]["mtu"] == 9100
    assert _network_mtus(built, "dgx-h100", "enp41s0f0") == {9100}


def test_a_storage_network_mtu_other_than_the_fabrics_is_refused() -> None:
    data = example_data(EXAMPLE)
    data["networks"]["storage"]["mtu"] = 9000  # the fabric's: accepted
    assert compile_data(data).qos["storage"].host_mtu == 9000
    data["networks"]["storage"]["mtu"] = 1500
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    [found] = caught.value.diagnostics
    assert (found.code, found.path) == ("QOS-HOST-MTU", ("networks", "storage", "mtu"))
    assert "remove it" in (found.hint or "")


def test_nccl_is_left_to_the_compute_fabric() -> None:
    """NCCL_IB_TC concerns the compute fabric: an InfiniBand compute fabric beside a RoCE
    storage fabric gets none, whatever the storage DSCP."""
    env = example_build(EXAMPLE).plan.nccl["dgx-h100"].env()
    assert "NCCL_IB_TC" not in env and "NCCL_IB_GID_INDEX" not in env


def test_a_host_on_two_roce_fabrics_gets_each_fabrics_own_classes() -> None:
    """A node type with compute HCAs on a RoCE compute fabric and a storage port on an Ethernet
    storage fabric of another DSCP: one script, each fabric's ports in its own classes."""
    compute = FabricQos(network="compute", roce_dscp=26, cnp_dscp=48, host_mtu=9000, ecn=(),
                        spec_path=("fabric", "compute", "qos"),
                        host_ports={"gpu": ("mlx5_0", "mlx5_1")}, port_kind="device")
    storage = FabricQos(network="storage", roce_dscp=24, cnp_dscp=46, host_mtu=9100, ecn=(),
                        spec_path=("fabric", "storage", "qos"),
                        host_ports={"gpu": ("enp41s0f0",)}, port_kind="interface")
    script = host_script("gpu", [compute, storage])
    head, _, tail = script.partition("# fabric storage:")
    assert "ports='mlx5_0 mlx5_1'\nfor dev in $ports; do" in head
    assert '"$dev" 0,0,0,1,0,0,0,0 106 48' in head
    assert 'ip link set dev "${path##*/}" mtu 9000' in head and "enp41s0f0" not in head
    assert "ports=enp41s0f0\nfor netdev in $ports; do" in tail
    assert '"${path##*/}" 0,0,0,1,0,0,0,0 98 46' in tail
    assert 'mtu_is "$netdev" 9100' in tail and "ip link set" not in tail and "mlx5_0" not in tail
    # a compute fabric whose NICs the node's netplan rails file configures: checked, not set
    railed = host_script("gpu", [compute, storage], {"compute"}).partition("# fabric storage:")[0]
    assert 'mtu_is "${path##*/}" 9000 || failed=1' in railed and "ip link set" not in railed
