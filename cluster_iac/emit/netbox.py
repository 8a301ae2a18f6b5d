"""NetBox bulk-import files: vocabulary, racks, devices and the power chain above the PDUs.

The device types (emit/netbox_types.py) and the cables (emit/netbox_cables.py) are families of
their own: they read the cable table, which these files do not, so the two-process render can
make these in the parent and those in the worker that makes the table (emit/__init__.py).

Column names are those of NetBox 4.x's bulk-import forms (netbox/dcim/forms/bulk_import.py)
and choice values NetBox's slugs (netbox/dcim/choices.py); the README's NetBox section lists
each file, its import order and the release that introduced each column. Vocabulary (sites,
locations, manufacturers, device roles, device types) comes one row per file: NetBox's import
only creates rows (or updates rows named by their numeric 'id', which a generator cannot know)
and rejects a whole file when one row already exists, so a file it rejects for that reason is
skipped and the others load.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cluster_iac.emit import netbox_power, netbox_types
from cluster_iac.emit.formats import Keyed, csv_columns, csv_text
from cluster_iac.emit.netbox_types import slug as slug
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
                   str(r.height_u)] for r in plan.racks],
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
        else:
            files[f"netbox/{name}.csv"] = csv_text(COLUMNS[name], table)
    files["netbox/devices.csv"] = csv_columns(COLUMNS["devices"], _device_columns(plan, devs))
    return dict(sorted(files.items()))


def _role(d: Device) -> str:
    return _role_of(d.kind, d.role)


def _role_of(kind: str, role: str) -> str:
    return role if kind != "switch" else f"{role}-switch"


def _vocabulary(plan: Plan, devs: tuple[Device, ...]) -> dict[str, list[list[str]]]:
    kinds = {(d.kind, d.model): d for d in devs}.values()  # one device of each kind and model
    makers = sorted({netbox_types.manufacturer(plan, d) for d in kinds})
    roles = sorted({_role(d) for d in devs})
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
