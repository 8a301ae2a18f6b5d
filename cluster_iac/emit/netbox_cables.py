"""NetBox's cables.csv (in parts, when large): every cable of plan.cables between two device
components.

A family of its own (emit/__init__.py), apart from the other NetBox files: it is the one that
reads the cable table, so it goes to the process that makes the table. CableImportForm's
columns (netbox/dcim/forms/bulk_import.py, NetBox 4.x); side_a_site/side_b_site since v4.3.5
(#19840): device names are unique only per site. The README's NetBox section lists the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields, replace
from operator import itemgetter
from typing import Any

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.emit.netbox import STATUS, by_rack, rack_parts
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.csv import Joined, Keyed, Runs, csv_parts, table_cells, table_stops
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables

COLUMNS = ("side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site",
           "side_b_device", "side_b_type", "side_b_name", "type", "status", "label", "length",
           "length_unit")
# Cable ends (CABLE_TERMINATION_MODELS) by the network a cable belongs to.
A_TYPES = {"power": "dcim.powerport"}
B_TYPES = {"power": "dcim.poweroutlet"}
INTERFACE = "dcim.interface"
_STORED = {f.name for f in fields(Cables) if f.name not in ("devices", "memo")}


def render(plan: Plan) -> dict[str, str]:
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """The file as Chunks (written piece by piece), cut into parts that each import well
    inside NetBox's web server timeout (emit/netbox.py, rows_per_part)."""
    cables = _in_rack_order(plan, plan.cables)
    parts = rack_parts("cables", cables.a_row)
    chunks = csv_parts(COLUMNS, _cable_columns(plan.cluster.site, cables),
                       [(start, stop) for _, start, stop in parts])
    return dict(zip([path for path, _, _ in parts], chunks, strict=True))


def _in_rack_order(plan: Plan, cables: Cables) -> Cables:
    """The cable table with its rows in the rack order of their A ends (emit/netbox.py
    by_rack): each row of racks' cables are its own parts."""
    order = by_rack(plan, cables.a_rack)
    if order == list(range(len(order))):
        return cables
    pick = itemgetter(*order) if len(order) > 1 else lambda column: tuple(column[:1])
    columns: dict[str, Any] = {name: tuple(pick(getattr(cables, name))) for name in _STORED}
    return replace(cables, **columns)


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
