"""Cable ids (compile/plan_cabling.py _id_heads): each cable's head is its network's prefix and
its A end's place, and two cables with one id are refused, whatever the places look like:
devices in one place, rack names with dots (the id check's shortcut does not apply), names
with no device."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.compile.plan_cabling import ID_PREFIX, SharedPort, _id_heads
from cluster_iac.plan.physical import Device


@st.composite
def tables(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...],
                                     dict[str, Device]]:
    racks = draw(st.lists(st.sampled_from(["r1", "r.3", "r", "r.U01", ""]), min_size=1,
                          max_size=3))
    devices = {}
    for i in range(draw(st.integers(1, 6))):
        position = draw(st.sampled_from(["U01", "U02", "PDU-A", ""]))
        devices[f"d{i}"] = Device(f"d{i}", "node", "", "", draw(st.sampled_from(racks)), "",
                                  None, 0, position)
    names = [*devices, "ghost"]  # a name with no device
    ports = st.sampled_from(["p1", "p2", ".", "U01.p1"])
    rows = draw(st.lists(st.tuples(st.sampled_from(["compute", "power", "bmc", "odd"]),
                                   st.sampled_from(names), ports), max_size=12))
    rows.sort(key=lambda row: row[0])  # a network's cables together, as the builders add them
    return (tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows),
            devices)


@settings(max_examples=400, deadline=None)
@given(tables())
def test_heads_are_prefix_and_place_and_one_id_is_refused(
        table: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], dict[str, Device]]
) -> None:
    network, a_device, a_port, devices = table

    def head(net: str, name: str) -> str:
        d = devices.get(name)
        place = f"{d.rack}.{d.position or d.name}." if d else "."
        return f"{ID_PREFIX.get(net, 'XX')}-{place}"

    expected = tuple(map(head, network, a_device))
    ids = [h + port for h, port in zip(expected, a_port, strict=True)]
    if len(set(ids)) < len(ids):
        with pytest.raises(SharedPort) as refused:
            _id_heads(network, a_device, a_port, devices)
        twice = refused.value.cable_id
        assert ids.count(twice) > 1 and ids[refused.value.cable] == twice
    else:
        assert _id_heads(network, a_device, a_port, devices) == expected


@pytest.mark.parametrize("racks, a_device, a_port", [
    # 'r.U01.' + 'U01.p1' and 'r.U01.U01.' + 'p1': places with two dots and three
    ({"in-r": "r", "in-r.U01": "r.U01"}, ("in-r", "in-r.U01"), ("U01.p1", "p1")),
    # '.' + 'U01.p1' (a name with no device) and '.U01.' + 'p1' (a device with no rack)
    ({"no-rack": "", "in-r": "r"}, ("ghost", "no-rack"), ("U01.p1", "p1")),
])
def test_one_id_from_two_places_is_refused(racks: dict[str, str], a_device: tuple[str, ...],
                                           a_port: tuple[str, ...]) -> None:
    devices = {name: Device(name, "node", "", "", rack, "", 1, 1, "U01")
               for name, rack in racks.items()}
    with pytest.raises(SharedPort):
        _id_heads(("compute", "compute"), a_device, a_port, devices)
