"""NetBox bulk-import files: vocabulary, racks, devices and the power chain above the PDUs.

The device types (emit/netbox_types.py) and the cables (emit/netbox_cables.py) are families of
their own: they read the cable table, which these files do not, so the two-process render can
make these in the parent and those in the worker that makes the table (emit/__init__.py).

Column names are those of NetBox 4.x's bulk-import forms (netbox/dcim/forms/bulk_import.py)
and choice values NetBox's slugs (netbox/dcim/choices.py); the README's NetBox section lists
each file, its import order and the release that introduced each column. A large table is
cut into parts that each import well inside NetBox's web server timeout (IMPORT_SECONDS).
Vocabulary (sites,
locations, manufacturers, device roles, device types) comes one row per file: NetBox's import
only creates rows (or updates rows named by their numeric 'id', which a generator cannot know)
and rejects a whole file when one row already exists, so a file it rejects for that reason is
skipped and the others load.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cluster_iac.emit import netbox_power, netbox_types
from cluster_iac.emit.netbox_types import slug as slug
from cluster_iac.formats.chunks import Chunks
from cluster_iac.formats.csv import Keyed, csv_parts, csv_text
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Device

STATUS = "planned"  # DeviceStatusChoices / RackStatusChoices / LinkStatusChoices / Location...

COLUMNS = {
    "sites": ("name", "slug", "status"),
    "locations": ("site", "name", "slug", "status"),
    "manufacturers": ("name", "slug"),
    "device_roles": ("name", "slug", "color"),
    "racks": ("site", "location", "name", "status", "width", "u_height"),
    "devices": ("name", "role", "manufacturer", "device_type", "status", "site", "location",
                "rack", "position", "face"),
    "power_panels": netbox_power.PANEL_COLUMNS,
    "power_feeds": netbox_power.FEED_COLUMNS,
    "power_feed_cables": netbox_power.FEED_CABLE_COLUMNS,
}
# One row per file, under a folder of the table's name (see the module docstring).
VOCABULARY = {"locations": "locations", "manufacturers": "manufacturers",
              "device_roles": "device-roles"}
IMPORT_SECONDS = 60
"""Each file must import well inside NetBox's web server timeout: the gunicorn configuration
NetBox ships (contrib/gunicorn.py, ``timeout = 120``) kills a request after 120 s, and an
import is one request and one database transaction, so a killed one loads nothing. Half of it,
for a slower machine or a busier NetBox."""
ROWS_PER_SECOND = {"cables": 5, "power_feed_cables": 5, "devices": 2, "racks": 2,
                   "power_panels": 2, "power_feeds": 2}
"""Rows NetBox 4.6.8 imported per second through its import pages on a 2-core machine: about 5
cables (the DGX SuperPOD example's 4,287 in 813 s) and 2 devices (its devices in 198 s) (issue
29's measurement). Racks, power panels and feeds were not timed: taken at the devices' rate,
the slower of the two."""


def rows_per_part(table: str) -> int:
    """The most rows of ``table`` one file holds: what imports in IMPORT_SECONDS."""
    return ROWS_PER_SECOND[table] * IMPORT_SECONDS


COMPONENTS_PER_SECOND = 37
"""Device components NetBox 4.6.8 created a second while importing devices (each device gets
its type's interfaces, power ports and outlets): 37-88 for the DGX SuperPOD example's device
parts (issue 29's measurement, a 2-core machine at load average 7-52; its part of 120 devices
with 4,449 components took 119.5 s). A device part is cut at the slowest rate's
IMPORT_SECONDS of components as well as at rows_per_part('devices')."""


def device_parts(plan: Plan, devs: Sequence[Device]) -> list[tuple[str, int, int]]:
    """The parts of devices.csv for ``devs`` in rack order (by_rack): each part's path and
    its (start, stop) rows, keyed by the row of racks its devices stand in (rack_parts), at
    most rows_per_part('devices') devices and COMPONENTS_PER_SECOND x IMPORT_SECONDS
    components (a device with more is a part of its own)."""
    types = netbox_types.device_types(plan)
    components = {model: len(t.interfaces) + len(t.power_ports) + len(t.power_outlets)
                  for model, t in types.items()}
    return rack_parts("devices", [d.row for d in devs], [components[d.model] for d in devs],
                      rows_per_part("devices"), COMPONENTS_PER_SECOND * IMPORT_SECONDS)


def rack_order(plan: Plan) -> dict[str, tuple[int, int]]:
    """Rack name -> (its row's place, its place in the row) in the plan's order of racks."""
    rows: dict[str, int] = {}
    order: dict[str, tuple[int, int]] = {}
    for place, rack in enumerate(plan.racks):
        order[rack.name] = (rows.setdefault(rack.row, len(rows)), place)
    return order


def by_rack(plan: Plan, racks: Sequence[str]) -> list[int]:
    """The indices of a table's rows (each in the rack ``racks`` names) in rack order, rows of
    one rack in the table's order: a rack added at the end of a row of racks adds rows at the
    end of that row's rows, so only that row's last parts change (rack_parts)."""
    order = rack_order(plan)
    unracked = (len(order), len(order))
    buckets: dict[tuple[int, int], list[int]] = {}
    for index, rack in enumerate(racks):
        buckets.setdefault(order.get(rack, unracked), []).append(index)
    return [index for key in sorted(buckets) for index in buckets[key]]


def rack_parts(table: str, rows: Sequence[str], weights: Sequence[int] | None = None,
               most_rows: int = 0, most_weight: int = 0) -> list[tuple[str, int, int]]:
    """The parts of a table whose rows are in rack order (by_rack), ``rows`` the row of racks
    of each: each part's path ('netbox/<table>/<row>/001.csv', '002.csv', ... in the row's
    order) and its (start, stop) rows. A part holds rows of one row of racks only, at most
    ``most_rows`` of them (rows_per_part) and ``most_weight`` of ``weights``: growth of one
    row of racks changes its own parts, never another's, and a new row is parts of its own."""
    most_rows = most_rows or rows_per_part(table)
    parts: list[tuple[str, int, int]] = []
    start = weight = 0
    count = 1
    for index, row in enumerate(rows):
        each = weights[index] if weights is not None else 0
        if index > start:
            if row != rows[start]:
                parts.append((_part_path(table, rows[start], count), start, index))
                start, weight, count = index, 0, 1
            elif index - start >= most_rows or (weights is not None and weight + each >
                                                most_weight):
                parts.append((_part_path(table, row, count), start, index))
                start, weight, count = index, 0, count + 1
        weight += each
    if rows:
        parts.append((_part_path(table, rows[start], count), start, len(rows)))
    return parts


ROW_CELL = {"racks": 1, "power_panels": 1, "power_feeds": 2, "power_feed_cables": 10}
"""Where each of the other tables cut into parts names the row of racks of its row: the
location of a rack, a panel or a feed; a feed's cable, its label, is its feed's name."""


def by_row(plan: Plan, name: str, table: list[list[str]]) -> tuple[list[list[str]], list[str]]:
    """The table's rows grouped by row of racks, in the plan's order of rows (a row's rows in
    the table's order), and the row of racks of each: racks, power panels, feeds and their
    cables are cut into parts per row of racks (rack_parts), so a rack added changes only
    its row's parts, and a new row is parts of its own. Before, they were cut by count: a
    rack added shifted the racks after it across every later part."""
    names = {netbox_power.location_name(row.name): row.name for row in plan.rows}
    order = {row.name: i for i, row in enumerate(plan.rows)}
    cell = ROW_CELL[name]
    if name == "power_feed_cables":  # a feed's cable: its feed's row
        feeds = {f.name: f.row for f in plan.power_feeds}
        rows = [feeds.get(row[cell], "") for row in table]
    else:
        rows = [names.get(row[cell], "") for row in table]
    rank = [order.get(row, len(order)) for row in rows]
    ranked = sorted(range(len(table)), key=rank.__getitem__)
    return [table[i] for i in ranked], [rows[i] for i in ranked]


def _part_path(table: str, row: str, count: int) -> str:
    return f"netbox/{table}/{row or 'unracked'}/{count:03d}.csv"


ROLE_COLORS = {"compute": "76b900", "controller": "2196f3", "login": "03a9f4",
               "lustre_mds": "9c27b0", "lustre_oss": "673ab7", "service": "607d8b",
               "pdu": "ff9800"}


def render(plan: Plan) -> dict[str, str]:
    site = plan.cluster.site
    devs = plan.devices
    rows = {
        "sites": [[site, slug(site), "active"]],
        "locations": [[site, name, slug(name), STATUS]
                      for name in sorted({netbox_power.location_name(r.name)
                                          for r in plan.rows} |
                                         {netbox_power.location_name(r.row)
                                          for r in plan.racks})],
        "racks": [[site, netbox_power.location_name(r.row), r.name, STATUS, "19",
                   str(r.height_u)] for r in plan.racks],  # rack order: by row
        **_vocabulary(plan, devs),
        "power_panels": netbox_power.panels(plan),
        "power_feeds": netbox_power.feeds(plan),
        "power_feed_cables": netbox_power.feed_cables(plan),
    }
    files: dict[str, str] = {}
    for name, table in rows.items():
        if name in VOCABULARY:
            for row in table:
                key = slug(row[0] if name != "locations" else row[1])
                files[f"netbox/{VOCABULARY[name]}/{key}.csv"] = csv_text(COLUMNS[name], [row])
        elif name not in ROWS_PER_SECOND:
            files[f"netbox/{name}.csv"] = csv_text(COLUMNS[name], table)
        else:  # parts per row of racks, as the devices' (by_row)
            table, of_row = by_row(plan, name, table)
            for path, start, stop in rack_parts(name, of_row):
                files[path] = csv_text(COLUMNS[name], table[start:stop])
            if not table:
                files[f"netbox/{name}.csv"] = csv_text(COLUMNS[name], [])
    devs = tuple(devs[i] for i in by_rack(plan, [d.rack for d in devs]))
    parts = device_parts(plan, devs)
    serials = plan.facts.serials if plan.facts is not None else {}
    columns = _device_columns(plan, devs)
    if serials:  # the facts the lock holds (reconcile --accept): a column only then
        columns.append(tuple(serials.get(d.name, "") for d in devs))
    devices = csv_parts((*COLUMNS["devices"], *(("serial",) if serials else ())), columns,
                        [(start, stop) for _, start, stop in parts])
    files.update(zip([path for path, _, _ in parts], map(Chunks.text, devices), strict=True))
    return dict(sorted(files.items()))


def _role_of(kind: str, role: str) -> str:
    return role if kind != "switch" else f"{role}-switch"


def _vocabulary(plan: Plan, devs: tuple[Device, ...]) -> dict[str, list[list[str]]]:
    kinds = {(d.kind, d.model): d for d in devs}.values()  # one device of each kind and model
    makers = sorted({netbox_types.manufacturer(plan, d) for d in kinds})
    roles = sorted({_role_of(kind, role)  # each distinct kind and role once, not each device
                    for kind, role in set(map(attrgetter("kind", "role"), devs))})
    return {
        "manufacturers": [[m, slug(m)] for m in makers],
        "device_roles": [[r, slug(r), ROLE_COLORS.get(r, "9e9e9e")] for r in roles],
    }


def _device_columns(plan: Plan, devs: tuple[Device, ...]) -> list[Sequence[object] | Keyed]:
    """One row per device, column by column: its role, manufacturer, type and site once per
    kind, role and model; its location once per row of racks; its position and face once per
    U and height."""
    site = plan.cluster.site
    one_of = dict(zip(map(attrgetter("kind", "model"), devs), devs, strict=True))
    kinds = list(map(attrgetter("kind", "role", "model"), devs))
    makers = {key: netbox_types.manufacturer(plan, d) for key, d in one_of.items()}
    typed = {(kind, role, model): (_role_of(kind, role), makers[(kind, model)], model, STATUS,
                                   site)
             for kind, role, model in set(kinds)}
    rows = tuple(map(attrgetter("row"), devs))
    places = list(map(attrgetter("u", "height_u"), devs))
    return [tuple(map(attrgetter("name"), devs)), Keyed(kinds, typed, 5),
            Keyed(rows, {row: (netbox_power.location_name(row),) for row in set(rows)}, 1),
            tuple(map(attrgetter("rack"), devs)),
            Keyed(places, {place: _position(*place) for place in set(places)}, 2)]


def _position(u: int | None, height_u: int) -> tuple[str, str]:
    """A racked device's position and face; none for a 0U or unplaced one."""
    racked = u is not None and u > 0 and height_u > 0
    return (str(u), "front") if racked else ("", "")
