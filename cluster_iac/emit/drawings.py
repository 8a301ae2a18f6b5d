"""drawings/: rack elevations, power one-lines and fabric diagrams (SVG), and their pages.

A row's racks are drawn in sheets of at most SHEET_RACKS racks, in the row's order, so no
drawing or page grows with the cluster: at 100,000 GPUs a row of 3,125 racks is 131 sheets.
Each sheet is drawings/<row>/elevation-<n>.svg (emit/elevations.py), power-<n>.svg
(emit/oneline.py) and sheet-<n>.html, the page that shows both with its racks' table
(each feed's figures are on the one-line and in report.md's PDU table). The fabrics
(emit/fabric_drawings.py) are drawn once each: one scalable unit's tiers, the whole fabric
as scalable units and their uplinks, and the rack-scale NVLink domains.
report.html (emit/report.py) embeds the fabric drawings and indexes the sheets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cluster_iac.emit import elevations, fabric_drawings, oneline
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats import html, svg
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Rack
from cluster_iac.plan.physical import Device
from cluster_iac.plan.power import rack_loads_w

SHEET_RACKS = 24
"""Racks on one sheet (a physical row is often 20 to 30 racks): at 100,000 GPUs at most 2,016
drawn objects on a sheet's page (front and rear faces, and the one-line), and 158 sheets:
474 files, not 942 with 12 (creating a file costs this machine 0.6-0.9 ms of CPU, as much as
drawing it)."""


class Sheet(NamedTuple):
    """A run of one row's racks drawn together."""

    row: str
    number: int  # from 1, within the row
    of: int  # the row's sheets
    racks: tuple[Rack, ...]

    @property
    def folder(self) -> str:
        return f"drawings/{self.row}"

    @property
    def elevation(self) -> str:
        return f"elevation-{self.number}.svg"

    @property
    def power(self) -> str:
        return f"power-{self.number}.svg"

    @property
    def page(self) -> str:
        return f"{self.folder}/sheet-{self.number}.html"

    @property
    def title(self) -> str:
        first, last = self.racks[0].name, self.racks[-1].name
        span = first if first == last else f"{first} to {last}"
        part = f", sheet {self.number} of {self.of}" if self.of > 1 else ""
        return f"Row {self.row}{part}: {span}"


def sheets(plan: Plan) -> list[Sheet]:
    """Every row's sheets, rows in the plan's order."""
    racks = {rack.name: rack for rack in plan.racks}
    out = []
    for row in plan.rows:
        members = [racks[name] for name in row.racks if name in racks]
        count = -(-len(members) // SHEET_RACKS)
        for number in range(1, count + 1):
            chunk = tuple(members[(number - 1) * SHEET_RACKS:number * SHEET_RACKS])
            out.append(Sheet(row.name, number, count, chunk))
    return out


def render(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    devices = elevations.rack_devices(plan)
    feeds = oneline.feeds_by_rack(plan)
    loads = rack_loads_w(plan)
    loops = elevations.rack_loops(plan)
    stamps: svg.Stamps = {}  # each distinct rack face's lines, made once for every sheet
    for sheet in sheets(plan):
        elevation = elevations.elevation(plan, sheet.racks, f"{sheet.title}: front and rear",
                                         devices, loops, stamps=stamps)
        files[f"{sheet.folder}/{sheet.elevation}"] = elevation.svg_text()
        power = oneline.one_line(plan, sheet.racks, f"{sheet.title}: power", feeds, stamps)
        files[f"{sheet.folder}/{sheet.power}"] = power.svg_text()
        files[sheet.page] = _sheet_page(plan, sheet, devices, loads)
    for path, drawing in fabric_drawings.drawings(plan).items():
        files[path] = drawing.svg_text()
    return files


def _sheet_page(plan: Plan, sheet: Sheet, devices: dict[str, list[Device]],
                loads: dict[str, float]) -> str:
    out = html.page(f"{plan.cluster.name}: {sheet.title}", GENERATED_BY)
    out.open("nav")
    out.leaf("a", "Report", {"href": "../../report.html"})
    out.close()
    # no "next sheet" link: a rack more would rewrite the last sheet's page (report.html
    # indexes the sheets)
    out.leaf("h1", sheet.title)
    html.figure(out, "Rack elevations (front above, rear below)", sheet.elevation,
                f"Rack elevations of {sheet.title}")
    html.figure(out, "Power one-line", sheet.power, f"Power one-line of {sheet.title}")
    out.leaf("h2", "Racks")
    html.table(out, ["Rack", "Devices", "Load (kW)", "Limit (kW)", "Cooling"],
               _rack_rows(sheet.racks, devices, loads), [False, True, True, True, False])
    return html.page_text(out)


def _rack_rows(racks: Sequence[Rack], devices: dict[str, list[Device]],
               loads: dict[str, float]) -> list[list[str]]:
    return [[r.name, str(len(devices.get(r.name, ()))), f"{loads.get(r.name, 0.0) / 1000:.2f}",
             f"{r.max_power_kw:g}" if r.max_power_kw else "-", r.cooling] for r in racks]
