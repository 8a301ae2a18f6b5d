"""The hosts' RoCE QoS script run by the real shell (dash, Debian's /bin/sh) on a host's sysfs as
the mlx5 driver lays it out, in a mount namespace of the test's own (``unshare --mount``, a tree
of the test's bound over /sys/class there only; the machine's own sysfs is never written).

MLNX_OFED's ``mlnx_qos`` and ``cma_roce_tos`` need a ConnectX NIC: two stand-ins on PATH log
their arguments instead. ``ip`` is the real one, in a network namespace of the test's own
(``unshare --net``) holding links of the ports' names (each a veth pair's end: this
sandbox's kernel has no dummy links). What is under test is the
generated script: which ports it finds on each fabric (a storage port by its interface, a
compute port by its RDMA device), the values it gives each (the fabric's own), that it sets the
MTU of the ports it finds by RDMA device (the compute fabric's) and leaves the others'
as the OS network configuration set it, and that such a port at another MTU fails the run, named.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cluster_iac.render import build
from tests.conftest import example_build
from tests.facility_fixtures import example_data
from tests.real.netns import tool

pytestmark = pytest.mark.real

STAND_IN = '#!/bin/sh\necho "${0##*/} $*" >>"$QOS_LOG"\n'


def _sysfs(root: Path, ports: dict[str, tuple[str, int]]) -> Path:
    """/sys/class of a host: each netdev (its MTU, DCQCN's ecn files, its PCI function's RDMA
    device) and each RDMA device (its netdev, its traffic class file)."""
    sys_class = root / "class"
    for netdev, (device, mtu) in ports.items():
        net = sys_class / "net" / netdev
        for part in ("roce_rp/enable", "roce_np/enable"):
            (net / "ecn" / part).mkdir(parents=True)
        (net / "mtu").write_text(f"{mtu}\n")
        (net / "device" / "infiniband" / device).mkdir(parents=True)
        rdma = sys_class / "infiniband" / device
        (rdma / "device" / "net" / netdev).mkdir(parents=True)
        (rdma / "tc" / "1").mkdir(parents=True)
        (rdma / "tc" / "1" / "traffic_class").write_text("0\n")
    return sys_class


def _run(tmp_path: Path, script: str, sys_class: Path, links: tuple[str, ...] = ()
         ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run ``script`` with dash in new mount and network namespaces: ``links`` made there at
    MTU 1500 first (each a veth pair with a ``peer<n>`` end), ``sys_class`` bound over
    /sys/class, and the namespace's links written to ``links.json`` (``ip -j link``) after."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mlnx_qos", "cma_roce_tos"):
        (bin_dir / name).write_text(STAND_IN)
        (bin_dir / name).chmod(0o755)
    path = tmp_path / "roce-qos.sh"
    # one second, not thirty, to wait for an MTU that never comes
    path.write_text(script.replace("\nMTU_WAIT_S=30\n", "\nMTU_WAIT_S=1\n"))
    log = tmp_path / "qos.log"
    log.touch()
    inner = ('n=0; for link in $4; do n=$((n + 1)); '
             '"$5" link add "$link" mtu 1500 type veth peer name "peer$n"; done; '
             'mount --bind "$1" /sys/class && "$2" "$3"; code=$?; '
             '"$5" -j link >"$6"; exit $code')
    done = subprocess.run(
        [tool("unshare"), "--mount", "--net", "sh", "-c", inner, "_", str(sys_class),
         tool("dash"), str(path), " ".join(links), tool("ip"), str(tmp_path / "links.json")],
        capture_output=True, text=True, timeout=60,
        env={"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "QOS_LOG": str(log)})
    return done, log.read_text().splitlines()


def _mtus(tmp_path: Path) -> dict[str, int]:
    return {link["ifname"]: link["mtu"]
            for link in json.loads((tmp_path / "links.json").read_text())}


def test_a_storage_port_gets_its_fabrics_qos_and_its_mtu_is_only_checked(tmp_path: Path) -> None:
    """A SuperPOD Lustre server: its one RoCE port is on the storage fabric (DSCP 24 here, so
    the value is the storage fabric's own, not a default)."""
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["storage"]["qos"] = {"dscp": 24, "cnp_dscp": 46}
    spec = tmp_path / "cluster.yaml"
    with spec.open("w") as stream:
        YAML().dump(data, stream)
    script = build(spec).files["qos/lustre.roce-host.sh"]
    sys_class = _sysfs(tmp_path / "sys", {"enp41s0f0": ("mlx5_7", 9000)})
    done, log = _run(tmp_path, script, sys_class)
    assert done.returncode == 0, done.stderr
    assert log == ["mlnx_qos -i enp41s0f0 --trust dscp --pfc 0,0,0,1,0,0,0,0",
                   "cma_roce_tos -d mlx5_7 -t 98"]
    net = sys_class / "net" / "enp41s0f0"
    assert (net / "ecn/roce_rp/enable/3").read_text() == "1\n"
    assert (net / "ecn/roce_np/enable/3").read_text() == "1\n"
    assert (net / "ecn/roce_np/cnp_dscp").read_text() == "46\n"
    assert (net / "ecn/roce_np/cnp_802p_prio").read_text() == "6\n"
    assert (sys_class / "infiniband/mlx5_7/tc/1/traffic_class").read_text() == "98\n"
    assert (net / "mtu").read_text() == "9000\n"  # as the OS network configuration left it


def test_a_compute_ports_mtu_is_checked_not_set(tmp_path: Path) -> None:
    """A RoCE compute node of a routed fabric: the script finds its ports by RDMA device and
    sets each one's QoS; their MTU is the node's netplan rails file's (the playbook's), so the
    script only checks it: one port the OS left at 1500 fails the run, named, and no port's
    MTU is written (real ip: the links stay at 1500)."""
    script = example_build("spectrum-x-roce").files["qos/h200.roce-host.sh"]
    ports = {f"enp{n}s0": (f"mlx5_{n}", 1500 if n == 3 else 9000) for n in range(8)}
    sys_class = _sysfs(tmp_path / "sys", ports)
    done, log = _run(tmp_path, script, sys_class, tuple(ports))
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == ("enp3s0: MTU 1500, not the fabric's 9000: set it in the "
                                   "OS network configuration (the switch ports carry at most "
                                   "9216)")
    assert sorted(line for line in log if line.startswith("mlnx_qos")) == sorted(
        f"mlnx_qos -i enp{n}s0 --trust dscp --pfc 0,0,0,1,0,0,0,0" for n in range(8))
    assert sum(line.startswith("cma_roce_tos") and line.endswith("-t 106") for line in log) == 8
    assert {name: mtu for name, mtu in _mtus(tmp_path).items() if name in ports} == {
        name: 1500 for name in ports}  # as made: the script set none


def test_a_storage_port_at_another_mtu_fails_the_run_and_is_named(tmp_path: Path) -> None:
    """A SuperPOD Lustre server whose storage port the OS left at 1500: its QoS is still set,
    the MTU is not touched (the OS configuration owns it), and the run fails naming the port."""
    script = example_build("dgx-h100-superpod-4su").files["qos/lustre.roce-host.sh"]
    sys_class = _sysfs(tmp_path / "sys", {"enp41s0f0": ("mlx5_7", 1500)})
    done, log = _run(tmp_path, script, sys_class, ("enp41s0f0",))
    assert done.returncode == 1
    assert done.stderr.strip() == ("enp41s0f0: MTU 1500, not the fabric's 9000: set it in the "
                                   "OS network configuration (the switch ports carry at most "
                                   "9216)")
    assert log[0] == "mlnx_qos -i enp41s0f0 --trust dscp --pfc 0,0,0,1,0,0,0,0"
    assert (sys_class / "net/enp41s0f0/mtu").read_text() == "1500\n"
    assert _mtus(tmp_path)["enp41s0f0"] == 1500
