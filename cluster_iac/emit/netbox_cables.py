"""NetBox's cables.csv (in parts, when large): every cable of plan.cables between two device
components.

A family of its own (emit/__init__.py), apart from the other NetBox files: it is the one that
reads the cable table, so it goes to the process that makes the table. CableImportForm's
columns (netbox/dcim/forms/bulk_import.py, NetBox 4.x); side_a_site/side_b_site since v4.3.5
(#19840): device names are unique only per site. The README's NetBox section lists the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cluster_iac.base.runs import runs
from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.emit.netbox import STATUS, rows_per_part
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.csv import Joined, Keyed, Runs, csv_pieces, table_cells, table_stops
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables

COLUMNS = ("side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site",
           "side_b_device", "side_b_type", "side_b_name", "type", "status", "label", "length",
           "length_unit")
# Cable ends (CABLE_TERMINATION_MODELS) by the network a cable belongs to.
A_TYPES = {"power": "dcim.powerport"}
B_TYPES = {"power": "dcim.poweroutlet"}
INTERFACE = "dcim.interface"


def render(plan: Plan) -> dict[str, str]:
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """The file as Chunks (written piece by piece), cut into parts that each import well
    inside NetBox's web server timeout (emit/netbox.py, rows_per_part), keyed by what does not
    move: the row of racks of each cable's A end and the cable's network (cable_parts)."""
    cables = plan.cables
    parts = cable_parts(cables.a_row, cables.network, rows_per_part("cables"))
    chunks = csv_pieces(COLUMNS, _cable_columns(plan.cluster.site, cables), list(parts.values()))
    return dict(zip(parts, chunks, strict=True))


def cable_parts(rows: Sequence[str], networks: Sequence[str],
                most: int) -> dict[str, list[tuple[int, int]]]:
    """The parts of the cable table: 'netbox/cables/<row>/<network>-001.csv', '-002.csv', ...
    each holding the cables of one network whose A ends stand in one row of racks, at most
    ``most`` of them, in the table's order, as its (start, stop) row ranges. A rack added to
    a row adds cables to that row's parts only, wherever its cables fall in the table; no
    cable is moved to put the table in rack order (a copy of a 100,000-GPU table's 470,000
    rows, and of the cells the cabling files made of it, cost 0.7 s of CPU)."""
    parts: dict[str, list[tuple[int, int]]] = {}
    filling: dict[tuple[str, str], tuple[int, int]] = {}  # key -> (its parts, rows in the last)
    for start, stop in runs(rows, networks):
        key = (rows[start], networks[start])
        while start < stop:
            count, held = filling.get(key, (0, most))
            if held == most:
                count, held = count + 1, 0
            take = min(most - held, stop - start)
            path = f"netbox/cables/{key[0] or 'unracked'}/{key[1]}-{count:03d}.csv"
            parts.setdefault(path, []).append((start, start + take))
            filling[key] = (count, held + take)
            start += take
    return parts or {"netbox/cables/unracked/none-001.csv": [(0, 0)]}


def _cable_columns(site: str, c: Cables) -> list[Sequence[object] | Keyed | Runs | Joined]:
    """Each cable's two ends, site-qualified (names are unique only per site in NetBox): a
    device's cells written once per device; a network's end types, a medium's type and a
    length once per run of them."""
    media = {m.key: (m.netbox_type, STATUS) for m in cable_catalog().media}
    at_site = _AtSite(site, c.devices)
    stops = table_stops(c)  # the ports, ids and runs as the cabling files found them
    return [Keyed(c.a_device, at_site, 2),
            stops.runs("network", cells=lambda net: (A_TYPES.get(net, INTERFACE),)),
            table_cells(c, "a_port"), Keyed(c.b_device, at_site, 2),
            stops.runs("network", cells=lambda net: (B_TYPES.get(net, INTERFACE),)),
            table_cells(c, "b_port"), stops.runs("medium", cells=media.__getitem__, width=2),
            Joined(table_cells(c, "id_head"), table_cells(c, "a_port")),  # the cable id
            stops.runs("length_m", cells=lambda length: (length, "m"), width=2)]


class _AtSite(dict[str, tuple[str, str]]):
    """Device name -> (site, name): a cable end's first two cells."""

    def __init__(self, site: str, devices: Iterable[str]) -> None:
        super().__init__((name, (site, name)) for name in devices)
        self.site = site

    def __missing__(self, name: str) -> tuple[str, str]:
        return (self.site, name)
