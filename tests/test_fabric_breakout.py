"""The cheapest fabric, continued: a 41-endpoint storage fabric on 64-port switches is one
switch, or a finding says why not; 400G NICs on 800G cages use breakout (two hosts a cage on a
splitter cable, counted so in the fabric, the cable table and the bill of materials); hosts
slower than their switch's ports get a finding naming the cheaper switch. NVIDIA's SuperPOD
tables are unchanged (tests/test_fabric.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from cluster_iac.base.errors import Severity
from cluster_iac.checks import run_checks
from cluster_iac.emit import cabling
from cluster_iac.lock.path import lock_path
from cluster_iac.plan import Plan
from cluster_iac.render import build
from tests.facility_fixtures import compile_data, example_data
from tests.superpod_fixtures import infiniband_storage


def _superpod_with_27_dgx(storage_ports: int | None) -> dict[str, Any]:
    """The SuperPOD example cut to 27 DGX, its storage fabric on InfiniBand (as NVIDIA builds
    it: tests/superpod_fixtures.py): the storage fabric has 41 hosts (27 DGX, 10
    Lustre servers, 2 head and 2 login nodes); ``storage_ports``: each DGX's and Lustre
    server's storage ports on it (None: the platforms' two)."""
    data = infiniband_storage(example_data("dgx-h100-superpod-4su"))
    data["node_groups"][0]["count"] = 27
    if storage_ports is not None:
        others = [{"role": "inband", "model": "eth-1g"}, {"role": "bmc", "model": "eth-1g"}]
        storage = {"role": "storage", "model": "cx7-ndr", "count": storage_ports}
        data["node_types"]["dgx-h100"]["nics"] = [
            {"role": "compute", "model": "cx7-ndr", "count": 8}, storage, *others]
        data["node_types"]["lustre"]["nics"] = [storage, *others]
    return data


def _findings(plan: Plan, code: str) -> list[Any]:
    return [d for d in run_checks(plan) if d.code == code]


def test_a_41_endpoint_storage_fabric_on_64_port_switches_is_one_switch() -> None:
    plan = compile_data(_superpod_with_27_dgx(storage_ports=1))
    fabric = plan.fabrics["storage"]
    assert (fabric.design, fabric.switch_counts) == ("single-switch", {"leaf": 1})
    assert fabric.link_counts == {"node-leaf": 41}
    assert fabric.spare_ports == 64 - 41
    assert not _findings(plan, "FABRIC-HOST-PORTS")
    assert not _findings(plan, "FABRIC-OVERBUILT")


def test_when_their_ports_do_not_fit_the_finding_says_why_not() -> None:
    """The platforms' two storage ports a DGX and a Lustre server: 27 x 2 + 10 x 2 + 4 x 1 =
    78 ports on 64-port switches, so leaves and spines; the finding counts them."""
    plan = compile_data(_superpod_with_27_dgx(storage_ports=None))
    fabric = plan.fabrics["storage"]
    assert fabric.tiers == 2 and fabric.link_counts["node-leaf"] == 78
    (finding,) = _findings(plan, "FABRIC-HOST-PORTS")
    assert finding.severity is Severity.INFO and finding.path == ("fabric", "storage")
    assert ("its 41 hosts fit one qm9700 (64 ports) with one port each, but they have 78 "
            "ports (27 dgx-h100 with 2, 10 lustre with 2, 4 head with 1)") in finding.message
    assert (f"built as {fabric.switch_counts['leaf']} leaves and "
            f"{fabric.switch_counts['spine']} upper-tier switches") in finding.message


def _roce(nodes: int, nic: str = "cx7-400gbe", leaf: str = "sn5600") -> dict[str, Any]:
    """The seed cluster's compute nodes, ``nodes`` of them with eight ``nic`` each, on a
    rail-optimized RoCE fabric of ``leaf`` switches (without Lustre and its servers), in
    air-cooled racks of a facility large enough."""
    data = example_data("seed-64gpu-h100")
    data["node_types"]["h100-hdr"]["nics"][0] = {"role": "compute", "model": nic, "count": 8}
    for server in ("mds", "oss"):
        del data["node_types"][server]
    data["node_groups"] = [g for g in data["node_groups"] if g["node_type"] in data["node_types"]]
    data.pop("storage")
    data.pop("workload")
    data["power"]["facility_capacity_kw"] = 2000
    rack = {k: v for k, v in data["rows"][0]["racks"][0].items()
            if k not in ("names", "cooling", "liquid_capacity_kw")}
    data["rows"][0]["racks"] += [dict(rack, names="g[01-16]"), dict(rack, names="n[1-8]")]
    data["node_groups"][0].update(count=nodes, racks="g[01-16]", per_rack=4)
    data["fabric"]["compute"] = {"technology": "roce", "design": "rail-optimized",
                                 "leaf_switch": leaf, "racks": "n[1-8]"}
    data["networks"]["management"]["cidr"] = "10.0.0.0/22"
    data["networks"]["bmc"]["cidr"] = "10.0.4.0/22"
    return data


def test_400g_nics_on_800g_cages_use_breakout() -> None:
    """16 nodes x 8 x 400GbE = 128 NIC ports: an SN5600's 64 cages split in two hold them
    all (before: 8 leaves and 4 spines with 256 uplinks for 128 node links, 0.25:1)."""
    plan = compile_data(_roce(16))
    fabric = plan.fabrics["compute"]
    assert fabric.breakout_legs == 2
    assert (fabric.design, fabric.switch_counts) == ("single-switch", {"leaf": 1})
    assert fabric.link_counts == {"node-leaf": 128} and fabric.spare_ports == 0
    assert not [d for d in run_checks(plan) if d.code.startswith("FABRIC-")]


def _cables(plan: Plan) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(cabling.render(plan)["cabling/cables.csv"])))


def test_a_split_fabric_is_cabled_and_bought_cage_by_cage() -> None:
    """64 nodes: rail leaves of 32 split cages down (64 NICs) and 32 cages up at 1:1, so 8
    leaves and 4 spines; each cage's two legs go to two hosts, and the bill of materials buys
    one splitter cable, or one twin-port transceiver, per cage."""
    plan = compile_data(_roce(64))
    fabric = plan.fabrics["compute"]
    assert fabric.switch_counts == {"leaf": 8, "spine": 4}
    assert fabric.link_counts == {"node-leaf": 512, "leaf-spine": 256}
    assert fabric.tier_bandwidth_gbps["leaf"] == (64 * 400, 32 * 800)
    rows = [r for r in _cables(plan) if r["network"] == "compute"]
    legs = [r for r in rows if r["a_device"].startswith("compute")]
    assert len(legs) == 512 and {r["speed_gbps"] for r in legs} == {"400"}
    cages: dict[tuple[str, str], list[str]] = {}
    for row in legs:
        cage, leg = row["b_port"].split("s")
        assert leg in ("1", "2"), row["b_port"]
        cages.setdefault((row["b_device"], cage), []).append(row["a_device"])
    assert len(cages) == 256 and all(len(set(hosts)) == 2 for hosts in cages.values())
    assert cages[("eth-leaf-su1-r1", "p1")] == ["compute01", "compute02"]
    uplinks = [r for r in rows if r["a_device"].startswith("eth-leaf")]
    assert len(uplinks) == 256 and {r["speed_gbps"] for r in uplinks} == {"800"}
    bom = list(csv.DictReader(io.StringIO(cabling.render(plan)["cabling/bom.csv"])))
    splitters = sum(int(r["quantity"]) for r in bom if r["item"] == "splitter cable")
    twin = sum(int(r["quantity"]) for r in bom
               if r["item"] == "transceiver" and r["speed_gbps"] == "800")
    # every cage bought once: a copper splitter, or optics (a twin-port transceiver in the
    # cage, beside the optical uplinks' two transceivers each)
    twin -= sum(int(r["transceivers"]) for r in uplinks)
    assert splitters + twin == 256 and splitters > 0 and twin > 0
    assert not [r for r in bom if r["item"] == "cable" and r["speed_gbps"] == "400"
                and not r["type"].startswith("mmf") and not r["type"].startswith("smf")]
    md = cabling.render(plan)["cabling/bom.md"]
    assert "twin-port 800G OSFP to 2 x 400G" in md


def test_hosts_slower_than_their_switch_get_a_finding_naming_the_cheaper_one() -> None:
    """200GbE NICs on SN4700 (400G ports, no split listed): each NIC a whole port, 32 leaves
    and 16 spines; the SN5600 split four ways builds the same fabric with 12 switches."""
    plan = compile_data(_roce(64, nic="cx7-200gbe", leaf="sn4700"))
    fabric = plan.fabrics["compute"]
    assert fabric.breakout_legs == 1
    assert fabric.switch_counts == {"leaf": 32, "spine": 16}
    (finding,) = _findings(plan, "FABRIC-OVERBUILT")
    assert finding.severity is Severity.INFO
    assert finding.path == ("fabric", "compute", "leaf_switch")
    assert ("its 512 host ports run at 200 Gb/s, each on a whole 400 Gb/s port of a sn4700"
            in finding.message)
    assert ("built as 48 switches with 512 switch-to-switch cables, where sn5600 (its ports "
            "split 4 ways) builds it as 12 switches with 256") in finding.message
    # and so it does
    cheaper = compile_data(_roce(64, nic="cx7-200gbe", leaf="sn5600")).fabrics["compute"]
    assert cheaper.breakout_legs == 4
    assert sum(cheaper.switch_counts.values()) == 12
    assert cheaper.link_counts["leaf-spine"] == 256
    assert not _findings(compile_data(_roce(64, nic="cx7-200gbe", leaf="sn5600")),
                         "FABRIC-OVERBUILT")


def test_split_ports_resolve_in_netbox() -> None:
    """Every cable end of the split fabric, 'p1s1' included, is an interface NetBox creates
    with its device (read as tests/test_netbox.py reads the files)."""
    from tests.test_netbox import _components, _netbox, _read

    plan = compile_data(_roce(64))
    nb = _read(_netbox(plan))
    components = _components(nb)
    ends = [(cable[f"side_{side}_type"], cable[f"side_{side}_name"],
             (cable[f"side_{side}_site"], cable[f"side_{side}_device"]))
            for cable in nb["tables"]["cables"] for side in "ab"]
    assert any(name == "p1s2" for _, name, _ in ends)
    assert [end for end in ends if end[:2] not in components[end[2]]] == []


def test_hosts_added_to_a_split_fabric_move_nothing(tmp_path: Path) -> None:
    """The lock keeps each host's fabric position and first split port: 8 more nodes take
    the next legs, and no existing identity moves (tests/test_lock.py's battery)."""
    from tests.test_lock import moved

    data = _roce(48)
    spec = tmp_path / "cluster.yaml"
    spec.write_text(_yaml(data))
    before = build(spec)
    assert before.lock is not None
    lock_path(spec).write_text(before.lock.after)
    data["node_groups"][0]["count"] = 56
    spec.write_text(_yaml(data))
    after = build(spec)
    assert after.plan.fabrics["compute"].breakout_legs == 2
    assert moved(before, after) == []
    ports = {(r.a_device, r.a_port): r.b_port for r in after.plan.links.rows()
             if r.network == "compute" and r.tier == "node-leaf"}
    assert ports[("compute49", "rdma0")] == "p25s1"


def _yaml(data: dict[str, Any]) -> str:
    """The spec as YAML (JSON is YAML; the fixture's values are the loader's types)."""
    return json.dumps(data, indent=1)
