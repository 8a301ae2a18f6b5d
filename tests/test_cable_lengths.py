"""Cable lengths keyed column by column (compile/cable_lengths.py) are the routed length of
each cable's two ends, to the bit, on any floor: whole-millimetre positions (keyed by how far
apart two racks are), fractional ones or two racks in one place (keyed by rack pair), 0U and
unplaced ends, devices off the floor and names with no device."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.catalog.cables import CableCatalog, Geometry
from cluster_iac.compile.cable_lengths import Geometry as Floor
from cluster_iac.plan.physical import Device

U_HEIGHT_MM = 44.45


def _reference(floor: Floor, a: Device | None, b: Device | None) -> float:
    """A cable's length one cable at a time: two racked ends in two racks are each end's
    rise to the tray plus the racks' distance, summed in that order; anything else is
    length_m (an unknown device is an unplaced one)."""
    g = floor.g
    a = a or Device("", "", "", "", "", "", None, 0, "")
    b = b or Device("", "", "", "", "", "", None, 0, "")
    if a.rack != b.rack and a.u and b.u and a.rack in floor.xy and b.rack in floor.xy:
        (xa, ya), (xb, yb) = floor.xy[a.rack], floor.xy[b.rack]
        rise_a = floor.top[a.rack] - (a.u - 0.5) * g.u_height_mm
        rise_b = floor.top[b.rack] - (b.u - 0.5) * g.u_height_mm
        apart = (abs(xa - xb) + abs(ya - yb)) + 2 * g.tray_rise_mm
        return round(((rise_a + rise_b) + apart) / 1000.0 + g.slack_m, 2)
    return floor.length_m(a.rack, a.u, b.rack, b.u)


@st.composite
def floors(draw: st.DrawFn) -> tuple[Floor, dict[str, Device], list[tuple[str, str]]]:
    geometry = Geometry(
        u_height_mm=U_HEIGHT_MM,
        rack_width_mm=draw(st.sampled_from([600, 600.0, 600.5, 0.1, 750])),
        row_pitch_mm=draw(st.sampled_from([3000, 2999.9, 2400])),
        tray_rise_mm=draw(st.sampled_from([300, 300.5])), slack_m=0.5, in_rack_min_m=0.5)
    rows = [SimpleNamespace(name=f"row{i}") for i in range(draw(st.integers(1, 3)))]
    racks = [SimpleNamespace(name=f"r{i}", row=draw(st.sampled_from(rows)).name,
                             position=draw(st.integers(-3, 40)),
                             height_u=draw(st.sampled_from([42, 48, 52])))
             for i in range(draw(st.integers(1, 12)))]
    floor = Floor(racks, rows, CableCatalog(media=(), geometry=geometry))
    # a rack name not on the floor, and no rack: devices there are off the floor
    rack_names = [r.name for r in racks] + ["elsewhere", ""]
    devices = {}
    for i in range(draw(st.integers(1, 30))):
        rack = draw(st.sampled_from(rack_names))
        u = draw(st.one_of(st.none(), st.integers(0, 48)))
        devices[f"d{i}"] = Device(f"d{i}", "node", "", "", rack, "", u, 1, "")
    names = [*devices, "ghost"]  # a name with no device
    on_floor = {name for name, d in devices.items() if d.rack in floor.xy}
    rack_of = {name: d.rack for name, d in devices.items()}
    cables = []
    for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)),
                              max_size=60)):
        # an end off the floor is measured only within its own rack (length_m has no
        # floor position for it to measure across)
        if (a in on_floor and b in on_floor) or rack_of.get(a, "") == rack_of.get(b, ""):
            cables.append((a, b))
    return floor, devices, cables


@settings(max_examples=300, deadline=None)
@given(floors())
def test_lengths_are_each_cables_route(case: tuple[Floor, dict[str, Device],
                                                   list[tuple[str, str]]]) -> None:
    floor, devices, cables = case
    a_device = tuple(a for a, _ in cables)
    b_device = tuple(b for _, b in cables)
    expected = tuple(_reference(floor, devices.get(a), devices.get(b)) for a, b in cables)
    assert floor.lengths(a_device, b_device, devices) == expected


def test_whole_millimetre_floors_key_by_distance_apart() -> None:
    """Two racks as far apart as two others share a key: the keys are few."""
    geometry = Geometry(U_HEIGHT_MM, 600, 3000, 300, 0.5, 0.5)
    rows = [SimpleNamespace(name="a"), SimpleNamespace(name="b")]
    racks = [SimpleNamespace(name=f"{row.name}{i}", row=row.name, position=i, height_u=48)
             for row in rows for i in range(1, 41)]
    floor = Floor(racks, rows, CableCatalog(media=(), geometry=geometry))
    devices = {f"{r.name}-h": Device(f"{r.name}-h", "node", "", "", r.name, "", 10, 1, "")
               for r in racks}
    a_device = tuple(f"a{i}-h" for i in range(1, 41) for _ in range(1, 41))
    b_device = tuple(f"b{j}-h" for _ in range(1, 41) for j in range(1, 41))
    from cluster_iac.compile.cable_lengths import _RouteKeys

    keys = _RouteKeys(floor, devices)
    distinct = set(map(int.__add__, map(keys.a.__getitem__, a_device),
                       map(keys.b.__getitem__, b_device)))
    assert len(distinct) == 79  # -39..39 racks apart, one row apart: 1,600 cables
    assert floor.lengths(a_device, b_device, devices) == tuple(
        _reference(floor, devices[a], devices[b]) for a, b in zip(a_device, b_device, strict=True))
