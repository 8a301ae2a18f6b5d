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
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from itertools import compress, count, repeat
from operator import add, attrgetter, eq, floordiv, getitem, itemgetter, mod, sub
from typing import Any

from cluster_iac.catalog.cables import CableCatalog, CableMedium, cable_catalog
from cluster_iac.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import Plan
from cluster_iac.plan.model import OnFirstUse
from cluster_iac.plan.physical import Cables, Device, position, runs
from cluster_iac.spec import ClusterSpec

# Cable-id prefix per network, so a crew can tell a cable's network from its label.
ID_PREFIX = {"compute": "CF", "storage": "SF", "management": "MG", "bmc": "OB", "power": "PW"}


def plan_cabling(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.devices now; plan.cables and plan.ports on first use (plan.cabling). Only the
    cabling and NetBox emitters read the cables, so the table is made where they run: with
    two processes, in the worker that renders them, beside the checks (emit/parallel.py).
    ``cluster-iac validate`` asks for it (render.py), so a design it cannot cable is rejected
    there too."""
    placed = replace(plan, devices=device_table(plan))
    return replace(placed, cabling=OnFirstUse(partial(planned_cables, placed)),
                   cable_planner=planned_cables)


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


class NoMedium(ValueError):
    """No medium of the cable catalog carries a cable: longer than every medium's reach at
    its line rate, or a power cord for a supply no cord is rated for. ``cable`` is its row in
    the cable table, once cable_table has found it."""

    def __init__(self, link: str, speed_gbps: int, estimated_m: float) -> None:
        super().__init__(f"no cable medium carries {speed_gbps} Gb/s {link} over {estimated_m} m")
        self.link, self.speed_gbps, self.estimated_m = link, speed_gbps, estimated_m
        self.cable: int | None = None


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
             in _candidates(cable_catalog(), exc.link, exc.speed_gbps, 0.0)]
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
    """Every node, switch, PDU and power shelf, by name."""
    heights = {name: t.height_u for name, t in plan.node_types.items()}
    # (name, kind, role, model, rack, height, side) of each, before placement
    parts = [(n.hostname, "node", n.role, n.node_type, n.rack, heights[n.node_type], "")
             for n in plan.nodes]
    parts += [(sw.name, "switch", f"{sw.network}-{sw.tier}", sw.model, sw.rack, sw.height_u,
               "") for sw in plan.switches]
    # racked like a PDU; a shelf's role says what it is
    parts += [(part.name, "pdu", part.kind, part.model, part.rack, 0, part.side)
              for part in plan.power_devices]
    parts.sort(key=itemgetter(0))
    rows = {r.name: r.row for r in plan.racks}
    place = plan.placements
    found = []
    for name, kind, role, model, rack, height, side in parts:
        p = place.get(name)
        u = None
        if p is not None:
            rack, u, height = p.rack, p.u, p.height_u
        found.append((name, kind, role, model, rack, rows.get(rack, ""), u, height,
                      position(u, side)))
    return tuple(map(Device._make, found))


def cable_table(plan: Plan, devices: dict[str, Device], catalog: CableCatalog) -> Cables:
    """The links, then the power cords, each located, measured and given a medium."""
    links = plan.links
    cords = plan.power_cords
    n_cords = len(cords)
    network = links.network + ("power",) * n_cords
    # A power cord's A end is the device's inlet: it is fed by the PDU at B.
    a_device = links.a_device + tuple(map(attrgetter("device"), cords))
    a_port = links.a_port + tuple(map(_Names("PSU").__getitem__, map(attrgetter("psu"), cords)))
    b_device = links.b_device + tuple(map(attrgetter("pdu"), cords))
    link = links.link + ("power",) * n_cords
    speed = links.speed_gbps + (0,) * n_cords
    ratings = (0.0,) * len(links) + tuple(map(float, map(attrgetter("rating_w"), cords)))
    geometry = _Geometry(plan.racks, plan.rows, catalog)
    estimated = (geometry.lengths(links.a_device, links.b_device, devices)
                 + geometry.in_rack_lengths(a_device[len(links):], b_device[len(links):],
                                            devices))
    try:
        media, lengths = _media(catalog, link, speed, ratings, estimated)
    except NoMedium as exc:  # which cable: the first of its kind and length that none carries
        rows = enumerate(zip(link, speed, ratings, estimated, strict=True))
        exc.cable = next(
            (i for i, (kind, rate, psu_w, metres) in rows
             if (kind, rate, metres) == (exc.link, exc.speed_gbps, exc.estimated_m)
             and not _carried(catalog, kind, rate, psu_w, metres)), None)
        raise
    transceivers = {m.key: m.transceivers for m in catalog.media}
    return Cables(
        id_head=_id_heads(network, a_device, a_port, devices), network=network,
        tier=links.tier + ("power",) * n_cords, a_device=a_device, a_port=a_port,
        b_device=b_device,
        b_port=links.b_port + tuple(map(_Names("outlet").__getitem__,
                                        map(attrgetter("outlet"), cords))),
        speed_gbps=speed, link=link, medium=media,
        transceivers=tuple(map(transceivers.__getitem__, media)), estimated_m=estimated,
        length_m=lengths, devices=devices)


class _Names(dict[int, str]):
    """Number -> '<prefix><number>' (PSU2, outlet17), each made once."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def __missing__(self, number: int) -> str:
        self[number] = name = f"{self.prefix}{number}"
        return name


_OTHER = -math.inf


class _Default(dict[str, Any]):
    """A dict that answers ``default`` for a key it lacks (a hit stays a C-speed lookup)."""

    def __init__(self, default: Any) -> None:
        super().__init__()
        self.default = default

    def __missing__(self, key: str) -> Any:
        return self.default


def _id_heads(network: tuple[str, ...], a_device: tuple[str, ...], a_port: tuple[str, ...],
              devices: dict[str, Device]) -> tuple[str, ...]:
    """Each cable's id up to its port: ``<network prefix>-<rack>.<position>.`` of its A end,
    made once per device and network; the id, this and the A port, is unique."""
    place = {name: f"{d.rack}.{d.position or d.name}." for name, d in devices.items()}
    heads: list[str] = []
    stretches = runs(network)
    for start, stop in stretches:
        prefix = ID_PREFIX.get(network[start], "XX") + "-"
        # every device's head: a concatenation per device beats a set of the run's rows
        head = _Default(prefix + ".")
        head.update(zip(place, map(add, repeat(prefix), place.values()), strict=True))
        heads += map(head.__getitem__, a_device[start:stop])
    if not _unique(heads, stretches, network, a_device, a_port, place):
        ids = list(map(add, heads, a_port))
        seen: set[str] = set()
        twice = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise SharedPort(twice, ids.index(twice, ids.index(twice) + 1))
    return tuple(heads)


def _unique(heads: list[str], stretches: list[tuple[int, int]], network: tuple[str, ...],
            a_device: tuple[str, ...], a_port: tuple[str, ...], place: dict[str, str]) -> bool:
    """Whether the cables' ids are all different. An id is its network's prefix, its A end's
    place text and its port; when every place text holds as many dots (the prefix none), the
    place is the id up to that many dots, so two ids are equal exactly when the three are.
    Then each cable is keyed by one int made of their indices, column by column, and the ints
    are counted per prefix, without making the ids: 0.10 s at 100,000 GPUs, where making the
    ids and a set of them takes 0.14 s. Otherwise, or for a device with no place, the ids
    themselves are made and compared."""
    texts: dict[str, int] = {}
    where = dict(zip(place, map(texts.setdefault, place.values(), count()), strict=True))
    if len(set(map(str.count, texts, repeat(".")))) > 1:
        return _distinct(map(add, heads, a_port))
    ports = {port: i for i, port in enumerate(dict.fromkeys(a_port))}
    size = len(ports)
    scaled = dict(zip(where, map(size.__mul__, where.values()), strict=True))
    seen: dict[str, set[int]] = {}
    try:
        for start, stop in stretches:  # the runs of one network
            keys = seen.setdefault(ID_PREFIX.get(network[start], "XX"), set())
            before = len(keys)
            keys.update(map(add, map(scaled.__getitem__, a_device[start:stop]),
                            map(ports.__getitem__, a_port[start:stop])))
            if len(keys) - before != stop - start:
                return False
    except KeyError:  # a device with no place: its id's head is the prefix and '.'
        return _distinct(map(add, heads, a_port))
    return True


def _distinct(ids: Iterable[str]) -> bool:
    ids = list(ids)
    return len(set(ids)) == len(ids)


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

    def lengths(self, a_device: tuple[str, ...], b_device: tuple[str, ...],
                devices: dict[str, Device]) -> tuple[float, ...]:
        """length_m of every cable. Between racked devices of two racks it is each end's rise
        to the tray plus the racks' distance: each device's rise and each rack pair's distance
        computed once, summed column by column at C speed, each distinct sum rounded once.
        Any other route (one rack, a 0U or unplaced end) goes through length_m, once per
        route."""
        g, top = self.g, self.top
        racks = sorted(self.xy)
        # a rack pair as one int, a * n + b: the A end's rack index times n, plus the B end's
        n = len(racks) + 1
        index = {rack: i + 1 for i, rack in enumerate(racks)}
        # an unknown device: no rise, rack index 0
        rise, a_key, b_key = _Default(_OTHER), _Default(0), _Default(0)
        for name, d in devices.items():
            # -inf marks an end (0U, unplaced) or a pair (one rack) the sum does not cover:
            # whatever is added to it, the sum stays -inf
            rise[name] = top[d.rack] - (d.u - 0.5) * g.u_height_mm if d.u and d.rack in top \
                else _OTHER
            a_key[name] = index.get(d.rack, 0) * n
            b_key[name] = index.get(d.rack, 0)
        pairs = list(map(add, map(a_key.__getitem__, a_device), map(b_key.__getitem__, b_device)))
        apart = self._apart(racks, pairs)
        total = list(map(add, map(add, map(rise.__getitem__, a_device),
                                  map(rise.__getitem__, b_device)),
                         map(apart.__getitem__, pairs)))
        del pairs
        rounded = {t: round(t / 1000.0 + g.slack_m, 2) for t in set(total)}
        metres = list(map(rounded.__getitem__, total))
        del total
        self._other_routes(metres, a_device, b_device, devices)
        return tuple(metres)

    def in_rack_lengths(self, a_device: tuple[str, ...], b_device: tuple[str, ...],
                        devices: dict[str, Device]) -> tuple[float, ...]:
        """lengths of cables that stay in their rack (power cords: a PSU to its rack's PDU or
        power shelf). Within one rack a length depends only on the two ends' U (0 and
        unplaced alike: level with the other end, or both at mid-height), so when every cable
        is within one rack each distinct pair of U is measured once, keyed by one int per
        cable made column by column; otherwise all go through lengths()."""
        rack_of = {name: d.rack for name, d in devices.items()}
        if not all(map(eq, map(rack_of.get, a_device), map(rack_of.get, b_device))):
            return self.lengths(a_device, b_device, devices)
        # the key: a_u * scale + b_u, scale above every U
        scale = max((d.u or 0 for d in devices.values()), default=0) + 1
        a_key, b_key = _Default(0), _Default(0)
        for name, d in devices.items():
            a_key[name], b_key[name] = (d.u or 0) * scale, d.u or 0
        keys = list(map(add, map(a_key.__getitem__, a_device), map(b_key.__getitem__, b_device)))
        routes = {key: self.length_m("", key // scale, "", key % scale)
                  for key in dict.fromkeys(keys)}
        return tuple(map(routes.__getitem__, keys))

    def _apart(self, racks: list[str], pairs: list[int]) -> dict[int, float]:
        """Each rack pair's distance along the tray, up and down included (-inf for a rack
        and itself, or an unknown rack: index 0), column by column over the distinct pairs."""
        n = len(racks) + 1
        keys = list(dict.fromkeys(pairs))
        a = list(map(floordiv, keys, repeat(n)))
        b = list(map(mod, keys, repeat(n)))
        x = [0.0, *(self.xy[r][0] for r in racks)]
        y = [0.0, *(self.xy[r][1] for r in racks)]
        across = map(add, map(abs, map(sub, map(x.__getitem__, a), map(x.__getitem__, b))),
                     map(abs, map(sub, map(y.__getitem__, a), map(y.__getitem__, b))))
        apart = dict(zip(keys, map(add, across, repeat(2 * self.g.tray_rise_mm)), strict=True))
        for i in range(n):
            for key in (i * n + i, i, i * n):
                if key in apart:
                    apart[key] = _OTHER
        return apart

    def _other_routes(self, metres: list[float], a_device: tuple[str, ...],
                      b_device: tuple[str, ...], devices: dict[str, Device]) -> None:
        """The cables the sum left -inf, through length_m. Within one rack the length depends
        only on the two ends' U (a 0U or unplaced end is level with the other, or both at
        mid-height), so those routes are keyed by U alone."""
        unplaced = Device("", "", "", "", "", "", None, 0, "")
        routes: dict[tuple[Any, ...], float] = {}
        get = devices.get
        other = list(map(_OTHER.__eq__, metres))
        for i, a, b in zip(compress(count(), other),
                           map(get, compress(a_device, other), repeat(unplaced)),
                           map(get, compress(b_device, other), repeat(unplaced)), strict=True):
            route = (a.u, b.u) if a.rack == b.rack else (a.rack, a.u, b.rack, b.u)
            found = routes.get(route)
            if found is None:
                found = routes[route] = self.length_m(a.rack, a.u, b.rack, b.u)
            metres[i] = found


def _media(catalog: CableCatalog, link: tuple[str, ...], speed: tuple[int, ...],
           ratings: tuple[float, ...], estimated: tuple[float, ...]
           ) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Medium and stocked length of every cable: within each run of one link and speed (the
    builders append cables of a kind together) each cable looks its estimated length up in
    the table of its PSU rating, where each distinct length is chosen once."""
    chosen: list[tuple[str, float]] = []
    tables: dict[tuple[str, int, float], _Choices] = {}
    for start, stop in runs(link, speed):
        kind = (link[start], speed[start])
        by_rating = {}
        for rating in set(ratings[start:stop]):
            key = (*kind, rating)
            if key not in tables:
                tables[key] = _Choices(catalog, *kind, rating)
            by_rating[rating] = tables[key]
        if len(by_rating) == 1:  # one table (data cables: no rating): straight to it
            chosen += map(by_rating.popitem()[1].__getitem__, estimated[start:stop])
        else:
            chosen += map(getitem, map(by_rating.__getitem__, ratings[start:stop]),
                          estimated[start:stop])
    # two columns of the (medium, length) pairs: itemgetter maps, 5x zip(*chosen)'s speed
    return tuple(map(itemgetter(0), chosen)), tuple(map(itemgetter(1), chosen))


class _Choices(dict[float, tuple[str, float]]):
    """Estimated length -> (medium key, stocked length) for one kind of cable (link, line
    rate, PSU rating), each chosen on first use."""

    def __init__(self, catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float) -> None:
        super().__init__()
        self.kind = (link, speed_gbps)
        self.candidates = _candidates(catalog, link, speed_gbps, psu_w)

    def __missing__(self, estimated_m: float) -> tuple[str, float]:
        medium, length = _first(self.candidates, *self.kind, estimated_m)
        self[estimated_m] = found = (medium.key, length)
        return found


def choose_medium(catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float,
                  estimated_m: float) -> tuple[CableMedium, float]:
    """The first (cheapest) medium that carries the link's rate this far, in a stocked length."""
    return _first(_candidates(catalog, link, speed_gbps, psu_w), link, speed_gbps, estimated_m)


def _candidates(catalog: CableCatalog, link: str, speed_gbps: int,
                psu_w: float) -> list[tuple[CableMedium, float]]:
    """The media that may carry this kind of cable, in preference order, each with the
    longest stocked length within its reach: a length no longer than that (less the
    stocked-length tolerance) is carried, a longer one is not."""
    found = []
    for medium in catalog.media:
        if link == "power":
            if medium.link != "power" or (medium.max_psu_w or 0) < psu_w:
                continue
            reach: float | None = math.inf
        elif medium.link in ("any", link):
            reach = medium.reach_at(speed_gbps)
        else:
            continue
        within = [length for length in medium.stocked_m if reach is not None and length <= reach]
        if within:
            found.append((medium, max(within)))
    return found


def _first(candidates: list[tuple[CableMedium, float]], link: str, speed_gbps: int,
           estimated_m: float) -> tuple[CableMedium, float]:
    # stocked_length takes the first stocked length >= estimated_m - 1e-9: within reach
    # exactly when the longest one within reach is
    least = estimated_m - 1e-9
    for medium, longest in candidates:
        stocked = medium.stocked_length(estimated_m) if longest >= least else None
        if stocked is not None:
            return medium, stocked
    raise NoMedium(link, speed_gbps, estimated_m)


def _carried(catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float,
             estimated_m: float) -> bool:
    try:
        choose_medium(catalog, link, speed_gbps, psu_w, estimated_m)
    except NoMedium:
        return False
    return True


def allowed(medium: CableMedium, speed_gbps: int, length_m: float) -> bool:
    """Whether ``medium`` may carry ``speed_gbps`` over ``length_m`` (power cords: by stock)."""
    if medium.link == "power":
        return length_m <= max(medium.stocked_m)
    reach = medium.reach_at(speed_gbps)
    return reach is not None and length_m <= reach
