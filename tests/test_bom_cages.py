"""Optics bought per cage: a QM9700's 64 NDR ports sit two a twin-port OSFP cage, a DGX H100's
8 compute ports two a cage, so one twin-port transceiver serves two optical links at each, and
a PCIe ConnectX-7 (single-port OSFP) takes one module a link. One MPO fiber a link either way.
Counted by hand on small tables, and on the 4-SU SuperPOD against NVIDIA's cable counts (DGX
SuperPOD H100 reference architecture, compute fabric table: 4 SU, 127 DGX H100, 32 leaves,
1,016 node-leaf cables)."""

from __future__ import annotations

import csv
import io
from collections import Counter

from cluster_iac.emit import cabling
from cluster_iac.plan.physical import Cables, Device
from tests.conftest import example_build

CAGES = {("", "qm9700"): 2, ("compute", "dgx-h100"): 2}


def _device(name: str, kind: str, model: str) -> Device:
    return Device(name, kind, "compute-leaf" if kind == "switch" else "compute", model,
                  "r1", "row1", 1, 1, "U01")


def _table(links: list[tuple[str, str, str]], devices: list[Device],
           medium: str = "mmf-om4") -> Cables:
    """Cables of the compute network: (tier, A device, B device) each, 400G, 20 m."""
    n = len(links)
    return Cables(
        id_head=("CF-",) * n, network=("compute",) * n, tier=tuple(t for t, _a, _b in links),
        a_device=tuple(a for _t, a, _b in links), a_port=tuple(f"p{i}" for i in range(n)),
        b_device=tuple(b for _t, _a, b in links), b_port=tuple(f"p{i}" for i in range(n)),
        speed_gbps=(400,) * n, link=("infiniband",) * n, medium=(medium,) * n,
        transceivers=(2,) * n, estimated_m=(18.0,) * n, length_m=(20.0,) * n,
        devices={d.name: d for d in devices})


def _optics(table: Cables, cages: dict[tuple[str, str], int]) -> dict[str, int]:
    return {item: int(n) for item, _key, _speed, _length, n in cabling.bom_rows(
        table, cages=cages) if item.startswith("transceiver")}


def test_two_dgx_h100_on_one_qm9700_take_a_twin_port_module_a_cage_at_both_ends() -> None:
    """2 DGX H100 x 8 compute links = 16 fibers; each DGX 8 / 2 = 4 flat-top twin-port
    modules; the QM9700 16 / 2 = 8 twin-port modules: 16 modules where a module per link end
    would be 32."""
    devices = [_device("dgx-1", "node", "dgx-h100"), _device("dgx-2", "node", "dgx-h100"),
               _device("leaf", "switch", "qm9700")]
    links = [("node-leaf", f"dgx-{n}", "leaf") for n in (1, 2) for _rail in range(8)]
    table = _table(links, devices)
    rows = cabling.bom_rows(table, cages=CAGES)
    assert [r for r in rows if r[0] == "cable"] == [["cable", "mmf-om4", "400", "20", "16"]]
    assert _optics(table, CAGES) == {"transceiver, twin-port, flat top": 8 // 2 * 2,
                                     "transceiver, twin-port": 16 // 2}
    # without cages in the catalog: a module at each end of each link, as before
    assert _optics(table, {}) == {"transceiver": 32}


def test_pcie_hcas_take_a_single_port_module_a_link_and_odd_links_round_up() -> None:
    """3 HGX servers with single-port ConnectX-7 cards, one link each to a QM9700: 3
    single-port modules at the hosts, ceil(3 / 2) = 2 twin-port at the switch (a cage with
    one fiber still takes its module)."""
    devices = [*(_device(f"hgx-{n}", "node", "hgx-h100-8gpu") for n in (1, 2, 3)),
               _device("leaf", "switch", "qm9700")]
    table = _table([("node-leaf", f"hgx-{n}", "leaf") for n in (1, 2, 3)], devices)
    assert _optics(table, CAGES) == {"transceiver": 3, "transceiver, twin-port": 2}


def test_switch_to_switch_links_take_twin_port_modules_at_both_ends() -> None:
    """4 leaf-spine links between two QM9700 (2 to each of 2 spines): each leaf cage holds
    two uplinks, each spine cage two downlinks: 2 + 2 modules for 4 fibers."""
    devices = [_device("leaf", "switch", "qm9700"), _device("spine-1", "switch", "qm9700"),
               _device("spine-2", "switch", "qm9700")]
    table = _table([("leaf-spine", "leaf", f"spine-{n}") for n in (1, 1, 2, 2)], devices)
    assert _optics(table, CAGES) == {"transceiver, twin-port": 4 // 2 + 2 * (2 // 2)}


def test_copper_takes_no_modules() -> None:
    devices = [_device("dgx-1", "node", "dgx-h100"), _device("leaf", "switch", "qm9700")]
    table = _table([("node-leaf", "dgx-1", "leaf")] * 2, devices, medium="dac-active")
    assert _optics(table, CAGES) == {}


def test_superpod_compute_optics_follow_nvidias_cable_counts() -> None:
    """The 4-SU SuperPOD's compute fabric: NVIDIA's table gives 1,016 node-leaf cables for
    127 DGX H100 on 32 leaves; the example cables them all on multimode fiber. At the DGX:
    127 x 8 / 2 = 508 flat-top twin-port modules; at the leaves: each holds 31 or 32 of them,
    ceil(n / 2) = 16 twin-port modules a leaf, 32 x 16 = 512; 1,016 fibers."""
    plan = example_build("dgx-h100-superpod-4su").plan
    fabric = plan.fabrics["compute"]
    assert fabric.link_counts["node-leaf"] == 1016 and fabric.switch_counts["leaf"] == 32
    files = cabling.render(plan)
    cables = list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))
    fibers = [c for c in cables if c["network"] == "compute" and c["medium"] == "mmf-om4"]
    assert len(fibers) == 1016 and all(c["a_device"].startswith("dgx") for c in fibers)
    bom = list(csv.DictReader(io.StringIO(files["cabling/bom.csv"])))
    flat = sum(int(r["quantity"]) for r in bom
               if r["item"] == "transceiver, twin-port, flat top")
    assert flat == 127 * 8 // 2
    per_leaf = Counter(c["b_device"] for c in fibers)
    assert len(per_leaf) == 32 and set(per_leaf.values()) <= {31, 32}
    # the switch ends: the compute leaves' 512 twin-port modules; the Ethernet storage
    # fabric's few fibers (the Lustre servers' 400GbE) end in single-port modules at both
    # ends, its SN4700 holding one port a QSFP-DD cage
    storage = Counter(c["b_device"] for c in cables
                      if c["network"] == "storage" and c["medium"] == "mmf-om4")
    assert storage and all(name.startswith("seth-leaf") for name in storage)
    twin = sum(int(r["quantity"]) for r in bom if r["item"] == "transceiver, twin-port")
    assert twin == 32 * 16
    single = sum(int(r["quantity"]) for r in bom if r["item"] == "transceiver")
    assert single == 2 * sum(storage.values())
    md = files["cabling/bom.md"]
    assert "MMA4Z00-NS twin-port 2 x 400G OSFP" in md and "MFP7E10" in md
