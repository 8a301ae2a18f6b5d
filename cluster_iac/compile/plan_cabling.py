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

from collections.abc import Sequence
from dataclasses import replace
from itertools import repeat
from operator import add, attrgetter, getitem, itemgetter
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.runs import lookup, runs
from cluster_iac.catalog.cables import CableCatalog, cable_catalog
from cluster_iac.compile.cable_lengths import Geometry
from cluster_iac.compile.cable_media import NoMedium, cage_media, candidates, carried
from cluster_iac.compile.cable_media import media as choose_media
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables, Device, position
from cluster_iac.plan.power import pdu_place
from cluster_iac.plan.power_tables import PowerCord
from cluster_iac.spec import ClusterSpec

_new = tuple.__new__
"""A named tuple made of its fields' tuple, ``map(_new, repeat(Kind), rows)``: Kind._make
is a Python call per row (200,000 power rows, 35,000 devices at 100,000 GPUs)."""

# Cable-id prefix per network, so a crew can tell a cable's network from its label.
ID_PREFIX = {"compute": "CF", "storage": "SF", "management": "MG", "bmc": "OB", "power": "PW"}


def plan_cabling(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.devices and plan.cables: every racked device, then every cable with its ends,
    length and medium; a cable no medium carries is a CompileError at the device."""
    placed = replace(plan, devices=device_table(plan))
    try:
        return replace(placed, cables=planned_cables(placed))
    except CompileError as exc:  # with the placed plan, which `plan` prints beside the error
        raise CompileError(exc.diagnostics, plan=placed) from None


def planned_cables(plan: Plan) -> Cables:
    """The cable table of a plan whose devices are placed; a cable no medium carries, or two
    cables with one id, is a CompileError located at the device concerned."""
    devices = {d.name: d for d in plan.devices}
    try:
        return cable_table(plan, devices, cable_catalog())
    except NoMedium as exc:
        raise CompileError([_no_medium(plan, exc)]) from None
    except SharedPort as exc:
        raise CompileError([_shared_port(plan, exc)]) from None


class SharedPort(ValueError):
    """Two cables would have one id: two cables in one port (a builder's mistake)."""

    def __init__(self, cable_id: str, cable: int) -> None:
        super().__init__(f"two cables would both be {cable_id!r}: one port, two cables")
        self.cable_id, self.cable = cable_id, cable


def _no_medium(plan: Plan, exc: NoMedium) -> Diagnostic:
    a, a_port, b, psu_w = _ends(plan, exc.cable or 0)  # None: not found, which cannot be
    if exc.link == "power":
        rated = [m for m in cable_catalog().media if m.link == "power"]
        best = max(rated, key=lambda m: m.max_psu_w or 0, default=None)
        most = f"{best.max_psu_w:g} W ({best.key})" if best else "none"
        return Diagnostic(
            "CABLE-NO-MEDIUM", f"no power cord in the cable catalog is rated for {a}'s "
            f"{psu_w:g} W supply ({a_port}); the highest rated: {most}",
            _path_of(plan, a, ("psus", "rating_w")),
            hint="use power supplies no larger than the catalog's cords carry")
    racks = {d.name: d.rack for d in plan.devices}
    reach = [(longest, medium.key) for medium, longest
             in candidates(cable_catalog(), exc.link, exc.speed_gbps, 0.0)]
    farthest = (f"the farthest any medium reaches at {exc.speed_gbps} Gb/s is "
                f"{max(reach)[0]:g} m ({max(reach)[1]})" if reach else
                f"no medium in the cable catalog carries {exc.speed_gbps} Gb/s {exc.link}")
    return Diagnostic(
        "CABLE-NO-MEDIUM", f"no cable medium carries the {exc.speed_gbps} Gb/s {exc.link} "
        f"cable from {a} {a_port} (rack {racks.get(a, '?')}) to {b} (rack "
        f"{racks.get(b, '?')}), routed {exc.estimated_m:g} m: {farthest}",
        _path_of(plan, a, ("racks",)),
        hint="place the two racks nearer each other (their rows and their order in a row "
             "set the route)")


def _shared_port(plan: Plan, exc: SharedPort) -> Diagnostic:
    a, a_port, b, _psu_w = _ends(plan, exc.cable)
    return Diagnostic("CABLE-DUPLICATE-ID", f"two cables would both be {exc.cable_id!r}: "
                      f"{a} {a_port} has two cables (to {b} among them)",
                      _path_of(plan, a, ()))


def _ends(plan: Plan, cable: int) -> tuple[str, str, str, float]:
    """(A device, A port, B device, PSU rating) of a row of the cable table: the links,
    then the power cords."""
    links = plan.links
    if cable < len(links):
        return links.a_device[cable], links.a_port[cable], links.b_device[cable], 0.0
    cord = plan.power_cords[cable - len(links)]
    return cord.device, f"PSU{cord.psu}", cord.pdu, float(cord.rating_w)


def _path_of(plan: Plan, device: str, below: SpecPath) -> SpecPath:
    """Where the spec makes ``device``: a node's group (``below`` its node type for a
    supply), a switch's network, anything else its rack."""
    node = next((n for n in plan.nodes if n.hostname == device), None)
    if node is not None:
        if below[:1] == ("psus",):
            return (*plan.node_types[node.node_type].spec_path, *below)
        return (*node.spec_path, *below)
    switch = next((sw for sw in plan.switches if sw.name == device), None)
    if switch is not None:
        return (*switch.spec_path, *below)
    rack = next((d.rack for d in plan.devices if d.name == device), "")
    return next((r.spec_path for r in plan.racks if r.name == rack), ())


def device_table(plan: Plan) -> tuple[Device, ...]:
    """Every node, switch, PDU and power shelf, by name: column by column, each position's
    text made once (35,000 devices at 100,000 GPUs, 48 positions)."""
    heights = {name: t.height_u for name, t in plan.node_types.items()}
    # (name, kind, role, model, rack, height, side) of each, before placement
    parts = [(n.hostname, "node", n.role, n.node_type, n.rack, heights[n.node_type], "")
             for n in plan.nodes]
    parts += [(sw.name, "switch", f"{sw.network}-{sw.tier}", sw.model, sw.rack, sw.height_u,
               "") for sw in plan.switches]
    # racked like a PDU; a shelf's role says what it is
    parts += [(part.name, "pdu", part.kind, part.model, part.rack, 0,
               pdu_place(part.rack, part.name) if part.side else "")
              for part in plan.power_devices]
    parts.sort(key=itemgetter(0))
    names, kinds, roles, models, racks, height, sides = (
        list(map(itemgetter(i), parts)) for i in range(7))
    spots = list(map(plan.placements.get, names))
    if None not in spots:  # each device where its placement says
        racks = list(map(attrgetter("rack"), spots))
        units: list[int | None] = list(map(attrgetter("u"), spots))
        height = list(map(attrgetter("height_u"), spots))
    else:  # an unplaced device: its own rack, no U
        racks = [p.rack if p else rack for p, rack in zip(spots, racks, strict=True)]
        units = [p.u if p else None for p in spots]
        height = [p.height_u if p else h for p, h in zip(spots, height, strict=True)]
    rows = {r.name: r.row for r in plan.racks}
    positions = _Positions()
    return tuple(map(_new, repeat(Device), zip(
        names, kinds, roles, models, racks, map(rows.get, racks, repeat("")), units, height,
        map(getitem, map(positions.__getitem__, sides), units), strict=True)))


class _Positions(dict[str, dict[int | None, str]]):
    """Side -> U -> position(u, side), each text made once."""

    def __missing__(self, side: str) -> dict[int | None, str]:
        self[side] = texts = _Position(side)
        return texts


class _Position(dict[int | None, str]):
    def __init__(self, side: str) -> None:
        super().__init__()
        self.side = side

    def __missing__(self, u: int | None) -> str:
        self[u] = text = position(u, self.side)
        return text


def cable_table(plan: Plan, devices: dict[str, Device], catalog: CableCatalog) -> Cables:
    """The links, then the power cords, each located, measured and given a medium."""
    links = plan.links
    cords = plan.power_cords
    n_cords = len(cords)
    network = links.network + ("power",) * n_cords
    # A power cord's A end is the device's inlet: it is fed by the PDU at B.
    a_device = links.a_device + _cord_column(cords, "device")
    a_port = links.a_port + tuple(map(_Names("PSU").__getitem__, _cord_column(cords, "psu")))
    b_device = links.b_device + _cord_column(cords, "pdu")
    link = links.link + ("power",) * n_cords
    speed = links.speed_gbps + (0,) * n_cords
    estimated = Geometry(plan.racks, plan.rows, catalog, plan.lock).lengths(
        a_device, b_device, devices)
    # the builders append a kind of cable together; the cords are a run of their own, with
    # their supplies' ratings as the cords have them (an int keys a table as its float would)
    ratings = _cord_column(cords, "rating_w")
    kinds: list[tuple[int, int, tuple[float, ...] | None]] = [
        (start, stop, None) for start, stop in runs(links.link, links.speed_gbps)]
    if n_cords:
        kinds.append((len(links), len(links) + n_cords, ratings))
    try:
        media, lengths, transceivers = choose_media(catalog, link, speed, estimated, kinds)
    except NoMedium as exc:  # which cable: the first of its kind and length that none carries
        rows = enumerate(zip(link, speed, (0.0,) * len(links) + ratings, estimated,
                             strict=True))
        exc.cable = next(
            (i for i, (kind, rate, psu_w, metres) in rows
             if (kind, rate, metres) == (exc.link, exc.speed_gbps, exc.estimated_m)
             and not carried(catalog, kind, rate, psu_w, metres)), None)
        raise
    split = {name for name, fabric in plan.fabrics.items() if fabric.breakout_legs > 1}
    if split:  # a split port's legs share its cage: one medium and length
        media, lengths, transceivers = cage_media(
            catalog, split, network, links.tier, links.b_device, links.b_port, estimated,
            (media, lengths, transceivers))
    return Cables(
        id_head=_id_heads(network, a_device, a_port, devices), network=network,
        tier=links.tier + ("power",) * n_cords, a_device=a_device, a_port=a_port,
        b_device=b_device,
        b_port=links.b_port + tuple(map(_Names("outlet").__getitem__,
                                        _cord_column(cords, "outlet"))),
        speed_gbps=speed, link=link, medium=media, transceivers=transceivers,
        estimated_m=estimated, length_m=lengths, devices=devices)


def _cord_column(cords: Sequence[PowerCord], name: str) -> tuple[Any, ...]:
    """One field of every cord, by its index (a named tuple's attribute is a slower lookup)."""
    return tuple(map(itemgetter(PowerCord._fields.index(name)), cords))


class _Names(dict[int, str]):
    """Number -> '<prefix><number>' (PSU2, outlet17), each made once."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def __missing__(self, number: int) -> str:
        self[number] = name = f"{self.prefix}{number}"
        return name


def _id_heads(network: tuple[str, ...], a_device: tuple[str, ...], a_port: tuple[str, ...],
              devices: dict[str, Device]) -> tuple[str, ...]:
    """Each cable's id up to its port: ``<network prefix>-<rack>.<position>.`` of its A end,
    made once per place and network; the id, this and the A port, is unique. Each cable's A
    end is looked up once, as the number of its place text (``at``), which picks its head
    from a list per network and keys its id in the check."""
    place = list(map("{}.{}.".format, map(attrgetter("rack"), devices.values()),
                     [d.position or d.name for d in devices.values()]))
    # place text -> its number, devices in one place alike
    texts = {text: number for number, text in enumerate(dict.fromkeys(place))}
    where = dict(zip(devices, map(texts.__getitem__, place), strict=True))
    at: Sequence[int]
    try:
        at, placed = lookup(where, a_device), True
    except KeyError:  # a name with no device: its head is the prefix and '.', numbered last
        at, placed = list(map(where.get, a_device, repeat(len(texts)))), False
    heads: list[str] = []
    named: dict[str, list[str]] = {}  # prefix -> each place's head, by number
    stretches = runs(network)
    for start, stop in stretches:
        prefix = ID_PREFIX.get(network[start], "XX") + "-"
        if prefix not in named:
            named[prefix] = [*map(add, repeat(prefix), texts), prefix + "."]
        heads += lookup(named[prefix], at[start:stop])
    if not (placed and _unique(stretches, network, at, a_port, texts)):
        ids = list(map(add, heads, a_port))
        seen: set[str] = set()
        twice = next((i for i in ids if i in seen or seen.add(i)), None)  # type: ignore[func-returns-value]
        if twice is not None:
            raise SharedPort(twice, ids.index(twice, ids.index(twice) + 1))
    return tuple(heads)


def _unique(stretches: list[tuple[int, int]], network: tuple[str, ...], at: Sequence[int],
            a_port: tuple[str, ...], texts: dict[str, int]) -> bool:
    """Whether the cables' ids are all different. An id is its network's prefix, its A end's
    place text and its port; when every place text holds as many dots (the prefix none), the
    place is the id up to that many dots, so two ids are equal exactly when the three are.
    Then each cable is keyed by one int made of the text's number and the port's, column by
    column, and the ints are counted per prefix, without making the ids: 0.07 s at 100,000
    GPUs, where making the ids and a set of them takes 0.14 s. Otherwise (False) the caller
    makes the ids and compares them."""
    size = len(texts)
    if len(set(map(str.count, texts, repeat(".")))) > 1:
        return False
    # a port's number, in steps above every place's
    ports = {port: number * size for number, port in enumerate(dict.fromkeys(a_port))}
    seen: dict[str, set[int]] = {}
    for start, stop in stretches:  # the runs of one network
        keys = seen.setdefault(ID_PREFIX.get(network[start], "XX"), set())
        before = len(keys)
        keys.update(map(add, at[start:stop], lookup(ports, a_port[start:stop])))
        if len(keys) - before != stop - start:
            return False
    return True
