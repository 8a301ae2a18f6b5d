"""The physical layer, planned once: every racked device, every cable and every cabled port.

Cables are the network builders' links plus one power cord per PSU (plan.power_cords), each
with both ends located (row, rack, U), a routed length estimate, and the first (cheapest)
medium of the cable catalog that carries its line rate that far in a stocked length.

A cable's id names where its A end plugs in: network, rack, position in the rack and port,
e.g. ``CF-su1-r1.U09.ib0`` or ``PW-su1-r1.U09.PSU2``. The A end is the downstream one (the host,
the lower switch, the device a cord feeds), whose port has exactly one cable, so the id is
unique, a crew finds the cable from it, and it stays put when anything else is added.
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import repeat
from operator import add, truediv
from typing import Any

from cluster_iac.catalog.cables import CableCatalog, CableMedium, cable_catalog
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables, Device, Ports, position
from cluster_iac.spec import ClusterSpec

# Cable-id prefix per network, so a crew can tell a cable's network from its label.
ID_PREFIX = {"compute": "CF", "storage": "SF", "management": "MG", "bmc": "OB", "power": "PW"}


def plan_cabling(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.devices, plan.cables and plan.ports from the links, placements and power cords."""
    devices = device_table(plan)
    cables = cable_table(plan, {d.name: d for d in devices}, cable_catalog())
    return replace(plan, devices=devices, cables=cables, ports=port_table(cables))


def device_table(plan: Plan) -> tuple[Device, ...]:
    """Every node, switch, PDU and power shelf, by name."""
    rows = {r.name: r.row for r in plan.racks}
    place = plan.placements
    found = []
    for node in plan.nodes:
        p = place.get(node.hostname)
        found.append(_device(node.hostname, "node", node.role, node.node_type, node.rack, p,
                             plan.node_types[node.node_type].height_u, rows))
    for sw in plan.switches:
        found.append(_device(sw.name, "switch", f"{sw.network}-{sw.tier}", sw.model, sw.rack,
                             place.get(sw.name), sw.height_u, rows))
    for part in plan.power_devices:  # racked like a PDU; a shelf's role says what it is
        found.append(_device(part.name, "pdu", part.kind, part.model, part.rack,
                             place.get(part.name), 0, rows, part.side))
    return tuple(sorted(found, key=lambda d: d.name))


def _device(name: str, kind: str, role: str, model: str, rack: str, place: Any, height: int,
            rows: dict[str, str], side: str = "") -> Device:
    if place is not None:
        rack, height = place.rack, place.height_u
    u = place.u if place is not None else None
    return Device(name, kind, role, model, rack, rows.get(rack, ""), u, height,
                  position(u, side))


def cable_table(plan: Plan, devices: dict[str, Device], catalog: CableCatalog) -> Cables:
    """The links, then the power cords, each located, measured and given a medium."""
    links = plan.links
    cords = plan.power_cords
    n_links = len(links)
    network = links.network + ("power",) * len(cords)
    columns: dict[str, tuple[Any, ...]] = {
        "network": network,
        "tier": links.tier + ("power",) * len(cords),
        # A power cord's A end is the device's inlet: it is fed by the PDU at B.
        "a_device": links.a_device + tuple(c.device for c in cords),
        "a_port": links.a_port + tuple(_PSU[c.psu] if c.psu < len(_PSU) else f"PSU{c.psu}"
                                       for c in cords),
        "b_device": links.b_device + tuple(c.pdu for c in cords),
        "b_port": links.b_port + tuple(f"outlet{c.outlet}" for c in cords),
        "speed_gbps": links.speed_gbps + (0,) * len(cords),
        "link": links.link + ("power",) * len(cords),
    }
    ends = {side: _locate(columns[f"{side}_device"], devices) for side in "ab"}
    ratings = (0.0,) * n_links + tuple(float(c.rating_w) for c in cords)
    geometry = _Geometry(plan.racks, plan.rows, catalog)
    estimated, media, lengths = _measure(catalog, geometry, columns, ends, ratings)
    by_key = {m.key: m for m in catalog.media}
    return Cables(
        cable_id=_ids(network, ends["a"][3], columns["a_port"]),
        network=network, tier=columns["tier"],
        a_row=ends["a"][0], a_rack=ends["a"][1], a_u=ends["a"][2],
        a_device=columns["a_device"], a_port=columns["a_port"],
        b_row=ends["b"][0], b_rack=ends["b"][1], b_u=ends["b"][2],
        b_device=columns["b_device"], b_port=columns["b_port"],
        speed_gbps=columns["speed_gbps"], link=columns["link"], medium=media,
        transceivers=tuple(map({k: m.transceivers for k, m in by_key.items()}.__getitem__,
                               media)),
        estimated_m=estimated, length_m=lengths)


_PSU = tuple(f"PSU{i}" for i in range(17))


def _locate(names: tuple[str, ...],
            devices: dict[str, Device]) -> tuple[tuple[Any, ...], ...]:
    """Columns (row, rack, U, rack.position) of the devices named."""
    where = {name: (d.row, d.rack, d.u, f"{d.rack}.{d.position or d.name}")
             for name, d in devices.items()}
    located = list(map(where.get, names, repeat(("", "", None, ""))))
    return tuple(zip(*located, strict=True)) if located else ((), (), (), ())


def _ids(network: tuple[str, ...], places: tuple[str, ...],
         ports: tuple[str, ...]) -> tuple[str, ...]:
    """``<network prefix>-<rack>.<position>.<port>`` of each cable's A end; unique."""
    prefix = {net: ID_PREFIX.get(net, "XX") for net in set(network)}
    ids = tuple(map("{}-{}.{}".format, map(prefix.__getitem__, network), places, ports))
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        twice = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise ValueError(f"two cables would both be {twice!r}: one port, two cables")
    return ids


class _Geometry:
    """Rack positions on the floor and the Manhattan cable route between two ports."""

    def __init__(self, racks: Any, rows: Any, catalog: CableCatalog) -> None:
        g = catalog.geometry
        self.g = g
        row_index = {row.name: i for i, row in enumerate(rows)}
        self.xy = {r.name: (r.position * g.rack_width_mm, row_index[r.row] * g.row_pitch_mm)
                   for r in racks}
        self.top = {r.name: r.height_u * g.u_height_mm for r in racks}

    def length_m(self, a_rack: str, a_u: int | None, b_rack: str, b_u: int | None) -> float:
        """Down or up the racks, along the overhead tray, across rows; 0U devices (vertical
        PDUs) span the rack, so a cord leaves one level with the device it feeds."""
        g = self.g
        za = (a_u - 0.5) * g.u_height_mm if a_u else None
        zb = (b_u - 0.5) * g.u_height_mm if b_u else None
        if za is None:
            za = zb if zb is not None else self.top.get(a_rack, 0) / 2
        if zb is None:
            zb = za if a_u else self.top.get(b_rack, 0) / 2
        if a_rack == b_rack:
            return round(max(abs(za - zb) / 1000, g.in_rack_min_m) + g.slack_m, 2)
        (xa, ya), (xb, yb) = self.xy[a_rack], self.xy[b_rack]
        up = (self.top[a_rack] - za) + (self.top[b_rack] - zb) + 2 * g.tray_rise_mm
        return round((up + abs(xa - xb) + abs(ya - yb)) / 1000 + g.slack_m, 2)

    def lengths(self, a_rack: tuple[str, ...], a_u: tuple[int | None, ...],
                b_rack: tuple[str, ...], b_u: tuple[int | None, ...]) -> tuple[float, ...]:
        """length_m of every cable, column by column: between racked devices of two racks,
        each end's rise to the tray plus the racks' distance, each computed once and summed
        at C speed; any other route (one rack, a 0U end) through length_m once per route."""
        g = self.g
        rise: dict[tuple[str, int | None], float] = {
            (rack, u): self.top[rack] - (u - 0.5) * g.u_height_mm
            for rack, u in set(zip(a_rack, a_u, strict=True)) | set(zip(b_rack, b_u, strict=True))
            if u and rack in self.top}
        apart: dict[tuple[str, str], float] = {}
        for pair in set(zip(a_rack, b_rack, strict=True)):
            if pair[0] != pair[1] and pair[0] in self.xy and pair[1] in self.xy:
                (xa, ya), (xb, yb) = self.xy[pair[0]], self.xy[pair[1]]
                apart[pair] = abs(xa - xb) + abs(ya - yb) + 2 * g.tray_rise_mm
        # NaN marks a cable the sum does not cover (a missing rise or distance)
        nan = float("nan")
        total = map(add, map(add, map(rise.get, zip(a_rack, a_u, strict=True), repeat(nan)),
                             map(rise.get, zip(b_rack, b_u, strict=True), repeat(nan))),
                    map(apart.get, zip(a_rack, b_rack, strict=True), repeat(nan)))
        metres = list(map(round, map(add, map(truediv, total, repeat(1000.0)),
                                     repeat(g.slack_m)), repeat(2)))
        other = {i for i, m in enumerate(metres) if m != m}
        routes: dict[tuple[Any, ...], float] = {}
        for i in other:
            route = (a_rack[i], a_u[i], b_rack[i], b_u[i])
            if route not in routes:
                routes[route] = self.length_m(*route)
            metres[i] = routes[route]
        return tuple(metres)


def _measure(catalog: CableCatalog, geometry: _Geometry, columns: dict[str, tuple[Any, ...]],
             ends: dict[str, tuple[tuple[Any, ...], ...]], ratings: tuple[float, ...]
             ) -> tuple[tuple[float, ...], tuple[str, ...], tuple[float, ...]]:
    """Estimated length, medium and stocked length of every cable; each distinct (link,
    speed, rating, length) chosen once."""
    estimated = geometry.lengths(ends["a"][1], ends["a"][2], ends["b"][1], ends["b"][2])
    needs = list(zip(columns["link"], columns["speed_gbps"], ratings, estimated, strict=True))
    choices = {key: (medium.key, length)
               for key in set(needs) for medium, length in (choose_medium(catalog, *key),)}
    media, stocked = zip(*map(choices.__getitem__, needs), strict=True) if needs else ((), ())
    return estimated, media, stocked


def choose_medium(catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float,
                  estimated_m: float) -> tuple[CableMedium, float]:
    """The first (cheapest) medium that carries the link's rate this far, in a stocked length."""
    for medium in catalog.media:
        if link == "power":
            if medium.link != "power" or (medium.max_psu_w or 0) < psu_w:
                continue
            reach: float | None = math.inf
        elif medium.link in ("any", link):
            reach = medium.reach_at(speed_gbps)
        else:
            continue
        stocked = medium.stocked_length(estimated_m)
        if reach is not None and stocked is not None and stocked <= reach:
            return medium, stocked
    raise ValueError(f"no cable medium carries {speed_gbps} Gb/s {link} over {estimated_m} m")


def allowed(medium: CableMedium, speed_gbps: int, length_m: float) -> bool:
    """Whether ``medium`` may carry ``speed_gbps`` over ``length_m`` (power cords: by stock)."""
    if medium.link == "power":
        return length_m <= max(medium.stocked_m)
    reach = medium.reach_at(speed_gbps)
    return reach is not None and length_m <= reach


def port_table(cables: Cables) -> Ports:
    """Both ends of every cable: the A ends in cable order, then the B ends."""
    return Ports(cables)
