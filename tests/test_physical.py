"""The physical layer's tables: cables, ports and devices agree with each other and the plan;
the column-wise CSV writer writes exactly what csv_cell writes cell by cell."""

from __future__ import annotations

from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.compile.plan_cabling import _id_heads
from cluster_iac.formats.columnar import _text
from cluster_iac.formats.csv import (
    CHUNK,
    Joined,
    Keyed,
    Runs,
    by_value,
    csv_cell,
    csv_columns,
    csv_text,
    run_stops,
)
from cluster_iac.formats.csv import cells as checked_cells
from cluster_iac.plan.physical import Device
from tests.conftest import example_build


def _reference(header: list[str], rows: list[list[object]]) -> str:
    lines = [",".join(csv_cell(v) for v in row) for row in [header, *rows]]
    return "\n".join(lines) + "\n"


CELLS = st.one_of(st.text(alphabet="ab,\"=+-@ 1.", max_size=6), st.integers(-3, 3),
                  st.floats(allow_nan=False, allow_infinity=False, width=16), st.none(),
                  st.booleans())


@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), max_size=30))
def test_column_writer_is_the_cell_writer(rows: list[list[object]]) -> None:
    header = ["a", "b", "c"]
    assert csv_text(header, rows) == _reference(header, rows)
    columns = [tuple(row[i] for row in rows) for i in range(3)]
    assert csv_columns(header, columns) == _reference(header, rows)


def _texts(row: list[object]) -> list[str]:
    return [_text(v) for v in row]


@settings(deadline=None)  # a correctness property; a busy machine must not fail it
@given(st.lists(st.tuples(st.integers(0, 3), CELLS), max_size=30), st.data())
def test_keyed_groups_write_what_the_cell_writer_writes(keys_and_cells: list[tuple[int, object]],
                                                        data: st.DataObject) -> None:
    """A group of columns keyed by one column (a cable end's row, rack and U by its device)
    writes each key's cells as csv_cell writes text_of's text; two groups may share a
    table; by_value writes a column of values as text_of does, zeros and 1/1.0/True apart."""
    table = {k: data.draw(st.lists(CELLS, min_size=2, max_size=2)) for k in range(4)}
    keys = [k for k, _ in keys_and_cells]
    values = [v for _, v in keys_and_cells]
    other = list(reversed(keys))
    rows = [[*_texts(table[k]), v if isinstance(v, str) else _text(v), *_texts(table[o])]
            for k, v, o in zip(keys, values, other, strict=True)]
    header = ["a", "b", "v", "c", "d"]
    columns = [Keyed(keys, table, 2), by_value(values), Keyed(other, table, 2)]
    assert csv_columns(header, columns) == _reference(header, rows)


class _Named(dict[str, tuple[str, str]]):
    """A Keyed group's cells with the cables' ends' fallback (emit/cabling.py _Ends): a key
    it does not list has cells of its own."""

    def __missing__(self, key: str) -> tuple[str, str]:
        return ("", key)


def test_keyed_groups_make_a_missing_key_cells_in_any_slice() -> None:
    """Keys the group's cells do not list, first met in a later slice of lines (CHUNK rows)
    and met again after, are written as the cells' fallback gives them, as the cell writer
    writes them."""
    known = _Named({"d1": ("r1", "d1"), "d2": ("r2", "d2")})
    keys = ["d1"] * CHUNK + ["x=1", "d2", "x=1"] + ["d2", "y"] * CHUNK
    rows = [[*known[k], k] for k in keys]
    header = ["rack", "name", "key"]
    assert csv_columns(header, [Keyed(keys, known, 2), keys]) == _reference(header, rows)


def test_keyed_groups_refuse_a_wrong_width() -> None:
    with pytest.raises(ValueError):
        csv_columns(["a", "b"], [Keyed([1], {1: ("x",)}, 2)])
    with pytest.raises(ValueError):
        csv_columns(["a"], [Keyed([1], {1: ("x\ny",)}, 1)])


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.lists(CELLS, min_size=2, max_size=2)),
                max_size=12), st.data())
def test_runs_write_what_the_cell_writer_writes(runs: list[tuple[int, list[object]]],
                                                data: st.DataObject) -> None:
    """A group of columns constant over runs of rows (a cable's medium and line rate) writes
    each run's cells as csv_cell writes text_of's text, wherever it stands in the line; empty
    runs are allowed."""
    stops = list(accumulate(n for n, _ in runs))
    expanded = [cells for n, cells in runs for _ in range(n)]
    values = data.draw(st.lists(CELLS, min_size=len(expanded), max_size=len(expanded)))
    group = Runs(stops, [cells for _, cells in runs], 2)
    rows = [[*_texts(cells), v]  # a plain column: csv_cell of each value
            for cells, v in zip(expanded, values, strict=True)]
    assert csv_columns(["a", "b", "v"], [group, values]) == _reference(["a", "b", "v"], rows)
    rows = [[row[2], *row[:2]] for row in rows]
    assert csv_columns(["v", "a", "b"], [values, group]) == _reference(["v", "a", "b"], rows)


PIECES = st.text(alphabet="ab,\"=+-@ .", max_size=4)


@settings(deadline=None)
@given(st.lists(st.tuples(PIECES, PIECES, st.sampled_from(["x", "y"])), max_size=20),
       st.booleans())
def test_joined_columns_write_the_joined_cells(rows: list[tuple[str, str, str]],
                                               checked: bool) -> None:
    """A column of two pieces run together (a cable id: its head, then its port) writes what
    csv_cell writes of the joined text, whether or not the pieces print as they are (a
    quote, a comma, a formula start), given as values or as checked Cells; before a Runs
    group and after another column alike."""
    first = [a for a, _, _ in rows]
    second = [b for _, b, _ in rows]
    after = [c for _, _, c in rows]
    stops = [i for i in range(1, len(rows)) if after[i] != after[i - 1]] + (
        [len(rows)] if rows else [])
    group = Runs(stops, [(after[i - 1],) for i in stops], 1)
    joined = (Joined(checked_cells(first), checked_cells(second)) if checked
              else Joined(first, second))
    expected = [[a + b, c] for a, b, c in rows]
    assert csv_columns(["id", "c"], [joined, group]) == _reference(["id", "c"], expected)
    expected = [[c, a + b, c] for a, b, c in rows]
    assert (csv_columns(["c", "id", "d"], [after, joined, after])
            == _reference(["c", "id", "d"], expected))


@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0, 0.0, "x", None])),
                max_size=40))
def test_run_stops_end_every_run_of_equal_rows(rows: list[tuple[int, object]]) -> None:
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    ends = [i for i in range(1, len(rows)) if rows[i] != rows[i - 1]] + ([len(rows)] if rows
                                                                         else [])
    assert run_stops(a, b) == ends


def test_runs_refuse_stops_that_do_not_follow_each_other() -> None:
    for stops, cells in (([2, 1], [("x",), ("y",)]), ([1], [("x",), ("y",)]), ([-1], [("x",)])):
        with pytest.raises(ValueError, match="runs"):
            csv_columns(["a"], [Runs(stops, cells, 1)])
    with pytest.raises(ValueError, match="cells"):
        csv_columns(["a"], [Runs([1], [("x", "y")], 1)])
    with pytest.raises(ValueError, match="line break"):
        csv_columns(["a"], [Runs([1], [("x\ny",)], 1)])


def test_column_writer_refuses_ragged_input() -> None:
    with pytest.raises(ValueError):
        csv_columns(["a", "b"], [("x", "y"), ("z",)])
    with pytest.raises(ValueError):
        csv_text(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="line break"):
        csv_columns(["a"], [("x\ny",)])


def test_ports_are_both_ends_of_every_cable(example: str) -> None:
    plan = example_build(example).plan
    cables, ports = plan.cables, plan.ports
    assert len(ports) == 2 * len(cables)
    rows = list(ports.rows())
    assert {(p.device, p.port) for p in rows} == (
        set(zip(cables.a_device, cables.a_port, strict=True))
        | set(zip(cables.b_device, cables.b_port, strict=True)))
    assert len({(p.device, p.port) for p in rows}) == len(rows)  # one cable per port
    for p in rows:
        power = p.network == "power"
        assert (p.kind == "interface") != power


def test_every_cable_end_is_a_placed_device(example: str) -> None:
    plan = example_build(example).plan
    devices = {d.name: d for d in plan.devices}
    for cable in plan.cables.rows():
        for device, rack, u in ((cable.a_device, cable.a_rack, cable.a_u),
                                (cable.b_device, cable.b_rack, cable.b_u)):
            assert devices[device].rack == rack and devices[device].u == u
        place = devices[cable.a_device]
        assert cable.cable_id.endswith(f"-{place.rack}.{place.position}.{cable.a_port}")


def test_two_cables_on_one_port_are_refused() -> None:
    with pytest.raises(ValueError, match="two cables would both be 'CF-r1.U01.ib0'"):
        host = Device("g1", "node", "compute", "dgx", "r1", "a", 1, 8, "U01")
        _id_heads(("compute", "compute"), ("g1", "g1"), ("ib0", "ib0"), {"g1": host})


def test_devices_table_is_every_racked_part() -> None:
    plan = example_build("gb200-nvl72").plan
    names = [d.name for d in plan.devices]
    assert names == sorted(names)
    assert set(names) == ({n.hostname for n in plan.nodes} | {s.name for s in plan.switches}
                          | {p.name for p in plan.power_devices})
    shelf = next(d for d in plan.devices if d.role == "power-shelf")
    assert shelf.kind == "pdu" and shelf.position.startswith("U")
    pdu = next(d for d in plan.devices if d.role == "pdu")
    assert pdu.u == 0 and pdu.position == "PDU-A"
    assert pdu.row == "a"


def test_devices_table_places_each_part_as_its_placement_says(example: str) -> None:
    """Row by row: a placed part where its placement says, an unplaced one (here, every
    tenth) in its own rack with no U."""
    from dataclasses import replace

    from cluster_iac.compile.plan_cabling import device_table
    from cluster_iac.plan.physical import position

    plan = example_build(example).plan
    names = sorted(plan.placements)
    placements = {name: plan.placements[name] for name in names[1::10]}
    for placed in (plan.placements, placements):
        partial = replace(plan, placements=placed)
        rows = {r.name: r.row for r in partial.racks}
        heights = {name: t.height_u for name, t in partial.node_types.items()}
        parts = ([(n.hostname, "node", n.role, n.node_type, n.rack, heights[n.node_type], "")
                  for n in partial.nodes]
                 + [(sw.name, "switch", f"{sw.network}-{sw.tier}", sw.model, sw.rack,
                     sw.height_u, "") for sw in partial.switches]
                 + [(p.name, "pdu", p.kind, p.model, p.rack, 0, p.side)
                    for p in partial.power_devices])
        expected = []
        for name, kind, role, model, rack, height, side in sorted(parts):
            spot = placed.get(name)
            rack, u, height = (spot.rack, spot.u, spot.height_u) if spot else (rack, None,
                                                                               height)
            expected.append(Device(name, kind, role, model, rack, rows.get(rack, ""), u,
                                   height, position(u, side)))
        assert device_table(partial) == tuple(expected)


@given(st.lists(st.one_of(st.floats(allow_nan=False, width=32), st.none(), st.integers(-2, 2))))
def test_text_of_formats_each_value_as_alone(values: list[object]) -> None:
    from cluster_iac.formats.csv import text_of

    assert text_of(values) == [_text(v) for v in values]
    floats = [v for v in values if isinstance(v, float)]
    assert text_of(floats) == [_text(v) for v in floats]


def test_lengths_column_by_column_are_length_m_cable_by_cable(example: str) -> None:
    """The planner's column-wise lengths (sums over rack pairs, routes keyed by U within a
    rack) are length_m of each cable's two ends, to the bit."""
    from cluster_iac.catalog.cables import cable_catalog
    from cluster_iac.compile.cable_lengths import Geometry as _Geometry

    plan = example_build(example).plan
    cables = plan.cables
    geometry = _Geometry(plan.racks, plan.rows, cable_catalog())
    expected = tuple(geometry.length_m(*ends) for ends in zip(
        cables.a_rack, cables.a_u, cables.b_rack, cables.b_u, strict=True))
    assert cables.estimated_m == expected
    assert geometry.lengths(cables.a_device, cables.b_device, dict(cables.devices)) == expected


def test_the_cords_follow_the_links_in_the_table(example: str) -> None:
    """The table holds the links and then one row per power cord, in cord order (NetBox's
    device types read a PSU's medium from its cord's row)."""
    plan = example_build(example).plan
    table, cords = plan.cables, plan.power_cords
    first = len(table) - len(cords)
    assert first == len(plan.links) and table.network[first:] == ("power",) * len(cords)
    assert table.a_device[first:] == tuple(cord.device for cord in cords)


