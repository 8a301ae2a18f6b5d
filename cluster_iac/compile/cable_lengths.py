"""Routed cable lengths: rack positions on the floor and the Manhattan route between two ports."""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import compress, count, repeat
from operator import add, attrgetter, floordiv, mod, mul, truediv
from typing import Any

from cluster_iac.base.runs import lookup
from cluster_iac.catalog.cables import CableCatalog
from cluster_iac.plan.physical import Device

_OTHER = -math.inf  # a sum with it stays -inf: marks a route the column sum does not cover


def row_positions(rows: Any, lock: Any = None) -> dict[str, int]:
    """Each row's place on the floor (0 first): the lock's (``row`` lines, active or
    retired), else the next free place after every one the lock holds, rows in the spec's
    order. Without a lock the spec's order. A row listed before existing ones when the
    cluster grows (a new scalable unit beside its siblings) is laid at the end of the floor,
    so no cable between rows in service changes length (issue 39)."""
    held = {entry.key[2]: entry.value[0] for entry in lock.of_kind("row", "")} \
        if lock is not None and lock.exists else {}
    taken = set(held.values())
    positions: dict[str, int] = {}
    free = 0
    for row in rows:
        if row.name in held:
            positions[row.name] = held[row.name]
            continue
        while free in taken:
            free += 1
        positions[row.name] = free
        taken.add(free)
    return positions


class Geometry:
    """Rack positions on the floor and the Manhattan cable route between two ports."""

    def __init__(self, racks: Any, rows: Any, catalog: CableCatalog, lock: Any = None) -> None:
        g = catalog.geometry
        self.g = g
        row_index = row_positions(rows, lock)
        self.xy = {r.name: (r.position * g.rack_width_mm, row_index[r.row] * g.row_pitch_mm)
                   for r in racks}
        self.top = {r.name: r.height_u * g.u_height_mm for r in racks}

    def length_m(self, a_rack: str, a_u: int | None, b_rack: str, b_u: int | None) -> float:
        """Down or up the racks, along the overhead tray, across rows; 0U devices (vertical
        PDUs) span the rack, so a cord leaves one level with the device it feeds."""
        dx: float = 0
        dy: float = 0
        if a_rack != b_rack:
            (xa, ya), (xb, yb) = self.xy[a_rack], self.xy[b_rack]
            dx, dy = xa - xb, ya - yb
        return self._measured(self.top.get(a_rack, 0), a_u, self.top.get(b_rack, 0), b_u,
                              dx, dy, a_rack == b_rack)

    def _measured(self, a_top: float, a_u: int | None, b_top: float, b_u: int | None,
                  dx: float, dy: float, one_rack: bool) -> float:
        """length_m of two ends, given their racks' heights and how far apart the racks are."""
        g = self.g
        za = (a_u - 0.5) * g.u_height_mm if a_u else None
        zb = (b_u - 0.5) * g.u_height_mm if b_u else None
        if za is None:
            za = zb if zb is not None else a_top / 2
        if zb is None:
            zb = za if a_u else b_top / 2
        if one_rack:
            return round(max(abs(za - zb) / 1000, g.in_rack_min_m) + g.slack_m, 2)
        up = (a_top - za) + (b_top - zb) + 2 * g.tray_rise_mm
        return round((up + abs(dx) + abs(dy)) / 1000 + g.slack_m, 2)

    def lengths(self, a_device: tuple[str, ...], b_device: tuple[str, ...],
                devices: dict[str, Device]) -> tuple[float, ...]:
        """length_m of every cable. A length depends only on how far apart the two racks are,
        their heights and the two ends' U: each cable is keyed by one int made of those,
        summed column by column from a code per device, and each distinct key is measured
        once (40,000 keys for 469,250 cables at 100,000 GPUs). An end whose rack is not on
        the floor (or no device) goes through length_m, once per route."""
        keys = _RouteKeys(self, devices)
        try:
            column = list(map(add, lookup(keys.a, a_device), lookup(keys.b, b_device)))
        except KeyError:  # a name with no device: off the floor
            column = list(map(add, map(keys.a.get, a_device, repeat(keys.limit)),
                              map(keys.b.get, b_device, repeat(keys.limit))))
        distinct = set(column)
        measured = keys.measure(distinct)
        if len(measured) == len(distinct):
            return tuple(lookup(measured, column))
        return self._off_the_floor(column, measured, keys.limit, a_device, b_device, devices)

    def _off_the_floor(self, column: list[int], measured: dict[int, float], limit: int,
                       a_device: tuple[str, ...], b_device: tuple[str, ...],
                       devices: dict[str, Device]) -> tuple[float, ...]:
        """lengths, where some cables have an end off the floor (key ``limit`` or above):
        those through length_m, once per route; an unknown device is an unplaced one."""
        metres = list(map(measured.get, column, repeat(_OTHER)))
        unplaced = Device("", "", "", "", "", "", None, 0, "")
        routes: dict[tuple[Any, ...], float] = {}
        get = devices.get
        other = list(map(limit.__le__, column))
        for i, a, b in zip(compress(count(), other),
                           map(get, compress(a_device, other), repeat(unplaced)),
                           map(get, compress(b_device, other), repeat(unplaced)), strict=True):
            route = (a.u, b.u) if a.rack == b.rack else (a.rack, a.u, b.rack, b.u)
            found = routes.get(route)
            if found is None:
                found = routes[route] = self.length_m(a.rack, a.u, b.rack, b.u)
            metres[i] = found
        return tuple(metres)


class _RouteKeys:
    """One int per device at each end of a cable, whose sum keys the cable's route.

    A key is ``(apart * places + a_place) * places + b_place``. A place is a rack height and
    a U (0 for a 0U or unplaced device): ``top_index * units + u``. ``apart`` says where the
    two racks are relative to each other: when every rack's floor position is whole
    millimetres and no two racks share one, it is the position difference itself,
    ``(dx + x_offset) * y_span + (dy + y_offset)`` in steps of the positions' greatest common
    divisor, so every pair of racks as far apart shares it (a few thousand at 100,000 GPUs,
    where there are 157,000 rack pairs) and zero means one rack; otherwise it is the rack
    pair, ``a_rack * racks + b_rack``. A device whose rack is not on the floor (or a name
    with no device) has ``limit``, above every key of two racked ends.
    """

    def __init__(self, geometry: Geometry, devices: dict[str, Device]) -> None:
        self.geometry = geometry
        g = geometry.g
        racks = list(geometry.xy)
        self.tops = sorted(set(geometry.top.values()))
        top_index = {top: i for i, top in enumerate(self.tops)}
        self.units = max((d.u or 0 for d in devices.values()), default=0) + 1
        self.places = places = len(self.tops) * self.units
        self.square = square = places * places
        a_apart, b_apart = self._aparts(racks)
        self.limit = limit = (max(a_apart, default=0) + max(b_apart, default=0) + 1) * square
        # each rack's share of a key, its top's place included; a device adds its U
        a_rack = {rack: (a * square + top_index[geometry.top[rack]] * self.units * places)
                  for rack, a in zip(racks, a_apart, strict=True)}
        b_rack = {rack: (b * square + top_index[geometry.top[rack]] * self.units)
                  for rack, b in zip(racks, b_apart, strict=True)}
        names = list(devices)
        rack_of = list(map(attrgetter("rack"), devices.values()))
        u_of = list(map(attrgetter("u"), devices.values()))
        u_of = list(map(_ZERO.get, u_of, u_of))
        # (a name with no device has none: lengths gives it ``limit``, off the floor)
        self.a = dict(zip(names, map(add, map(a_rack.get, rack_of, repeat(limit)),
                                     map(mul, u_of, repeat(places))), strict=True))
        self.b = dict(zip(names, map(add, map(b_rack.get, rack_of, repeat(limit)), u_of),
                          strict=True))
        self.rise = [top - (u - 0.5) * g.u_height_mm if u else _OTHER
                     for top in self.tops for u in range(self.units)]

    def _aparts(self, racks: list[str]) -> tuple[list[int], list[int]]:
        """Each rack's share of ``apart`` at the A end and at the B end (see the class)."""
        xy = self.geometry.xy
        xs, ys = [x for x, _ in xy.values()], [y for _, y in xy.values()]
        whole = all(float(v).is_integer() and abs(v) < 2**52 for v in (*xs, *ys))
        if not whole or len(set(xy.values())) < len(xy):
            n = len(racks)
            self.decode = self._by_pair
            self.x = xs
            self.y = ys
            self.span = n
            return [i * n for i in range(n)], list(range(n))
        self.decode = self._by_difference
        x0, y0 = min(xs, default=0), min(ys, default=0)
        self.x_step = math.gcd(*(int(x - x0) for x in xs)) or 1
        self.y_step = math.gcd(*(int(y - y0) for y in ys)) or 1
        ix = [int(x - x0) // self.x_step for x in xs]
        iy = [int(y - y0) // self.y_step for y in ys]
        self.x_offset, self.y_offset = max(ix, default=0), max(iy, default=0)
        self.span = span = 2 * self.y_offset + 1
        a = [i * span + j for i, j in zip(ix, iy, strict=True)]
        b = [(self.x_offset - i) * span + (self.y_offset - j) for i, j in zip(ix, iy, strict=True)]
        return a, b

    def _by_difference(self, apart: int) -> tuple[float, float, bool]:
        """(dx, dy, one rack) of an ``apart`` that is a position difference."""
        qx, ry = divmod(apart, self.span)
        dx, dy = (qx - self.x_offset) * self.x_step, (ry - self.y_offset) * self.y_step
        return dx, dy, dx == 0 and dy == 0

    def _by_pair(self, apart: int) -> tuple[float, float, bool]:
        """(dx, dy, one rack) of an ``apart`` that is a rack pair."""
        a, b = divmod(apart, self.span)
        return self.x[a] - self.x[b], self.y[a] - self.y[b], a == b

    def measure(self, keys: Iterable[int]) -> dict[int, float]:
        """The length of each key below ``limit``. Between two racks with both ends racked
        it is each end's rise to the tray plus the racks' distance, ``((rise_a + rise_b) +
        apart) / 1000 + slack`` rounded, summed column by column over the keys from a table
        per place pair and per ``apart``; any other route (one rack, a 0U end) through
        length_m's arithmetic, once per key."""
        g = self.geometry.g
        keys = [key for key in keys if key < self.limit]
        aparts = list(map(floordiv, keys, repeat(self.square)))
        pairs = list(map(mod, keys, repeat(self.square)))
        tray = 2 * g.tray_rise_mm
        across = {}
        for apart in set(aparts):
            dx, dy, one_rack = self.decode(apart)
            across[apart] = _OTHER if one_rack else (abs(dx) + abs(dy)) + tray
        rise, places = self.rise, self.places
        rises = {pair: rise[pair // places] + rise[pair % places] for pair in set(pairs)}
        total = list(map(add, map(rises.__getitem__, pairs), map(across.__getitem__, aparts)))
        # round() is the dear step (a decimal conversion): once per distinct sum
        sums = list(set(total))
        rounded = dict(zip(sums, map(round, map(add, map(truediv, sums, repeat(1000.0)),
                                                repeat(g.slack_m)), repeat(2)), strict=True))
        measured = dict(zip(keys, map(rounded.__getitem__, total), strict=True))
        if _OTHER in rounded:  # routes the sum does not cover
            for key in compress(keys, map(_OTHER.__eq__, total)):
                measured[key] = self._measured(key)
        return measured

    def _measured(self, key: int) -> float:
        apart, pair = divmod(key, self.square)
        a, b = divmod(pair, self.places)
        (a_top, a_u), (b_top, b_u) = divmod(a, self.units), divmod(b, self.units)
        dx, dy, one_rack = self.decode(apart)
        return self.geometry._measured(self.tops[a_top], a_u, self.tops[b_top], b_u,
                                       dx, dy, one_rack)


_ZERO = {None: 0}  # an unplaced device's U, as a 0U one's: length_m treats both alike
