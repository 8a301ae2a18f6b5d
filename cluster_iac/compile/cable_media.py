"""Each cable's medium: the first (cheapest) medium of the cable catalog that carries its line
rate as far as its routed length, in a stocked length."""

from __future__ import annotations

import math
from bisect import bisect_left
from operator import getitem, itemgetter

from cluster_iac.catalog.cables import CableCatalog, CableMedium

# A choice: (medium key, stocked length, transceivers)
Choice = tuple[str, float, int]


class NoMedium(ValueError):
    """No medium of the cable catalog carries a cable: longer than every medium's reach at
    its line rate, or a power cord for a supply no cord is rated for. ``cable`` is its row in
    the cable table, once cable_table has found it."""

    def __init__(self, link: str, speed_gbps: int, estimated_m: float) -> None:
        super().__init__(f"no cable medium carries {speed_gbps} Gb/s {link} over {estimated_m} m")
        self.link, self.speed_gbps, self.estimated_m = link, speed_gbps, estimated_m
        self.cable: int | None = None


def media(catalog: CableCatalog, link: tuple[str, ...], speed: tuple[int, ...],
          estimated: tuple[float, ...], kinds: list[tuple[int, int, tuple[float, ...] | None]]
          ) -> tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]]:
    """Medium, stocked length and transceivers of every cable. ``kinds`` are runs of one link
    and speed, each with its cables' PSU ratings (None for data cables, which have none):
    each cable looks its estimated length up in the table of its rating."""
    chosen: list[Choice] = []
    tables: dict[tuple[str, int, float], Choices] = {}

    def table(kind: tuple[str, int], rating: float) -> Choices:
        key = (*kind, rating)
        if key not in tables:
            tables[key] = Choices(catalog, *kind, rating)
        return tables[key]

    for start, stop, ratings in kinds:
        kind = (link[start], speed[start])
        if ratings is None:
            chosen += map(table(kind, 0.0).__getitem__, estimated[start:stop])
        else:
            by_rating = {rating: table(kind, rating) for rating in set(ratings)}
            chosen += map(getitem, map(by_rating.__getitem__, ratings), estimated[start:stop])
    # three columns of the choices: itemgetter maps, 5x zip(*chosen)'s speed
    return (tuple(map(itemgetter(0), chosen)), tuple(map(itemgetter(1), chosen)),
            tuple(map(itemgetter(2), chosen)))


class Choices(dict[float, Choice]):
    """Estimated length -> (medium key, stocked length, transceivers) for one kind of cable
    (link, line rate, PSU rating), each chosen on first use by bisection of the choice as a
    step function of the length (_steps); a length no medium carries raises NoMedium."""

    def __init__(self, catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float) -> None:
        super().__init__()
        self.kind = (link, speed_gbps)
        self.bounds, self.choices = _steps(candidates(catalog, link, speed_gbps, psu_w))

    def __missing__(self, estimated_m: float) -> Choice:
        # _first's tolerance: a stocked length 1e-9 short still covers
        found = self.choices[bisect_left(self.bounds, estimated_m - 1e-9)]
        if found is None:
            raise NoMedium(*self.kind, estimated_m)
        self[estimated_m] = found
        return found


def _steps(candidates: list[tuple[CableMedium, float]]
           ) -> tuple[list[float], list[Choice | None]]:
    """_first as a step function of ``estimated_m - 1e-9``: the choice for x is that of the
    first bound >= x (None past the last). Each medium is first where it reaches and no
    earlier one does, from the farthest an earlier one reaches (exclusive) to its longest
    stocked length within reach; there its lengths are its stocked ones."""
    bounds: list[float] = []
    choices: list[Choice | None] = []
    farthest = -math.inf
    for medium, longest in candidates:
        for length in medium.stocked_m:
            if farthest < length <= longest:
                bounds.append(length)
                choices.append((medium.key, length, medium.transceivers))
        farthest = max(farthest, longest)
    return bounds, [*choices, None]


def choose_medium(catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float,
                  estimated_m: float) -> tuple[CableMedium, float]:
    """The first (cheapest) medium that carries the link's rate this far, in a stocked length."""
    return _first(candidates(catalog, link, speed_gbps, psu_w), link, speed_gbps, estimated_m)


def candidates(catalog: CableCatalog, link: str, speed_gbps: int,
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


def carried(catalog: CableCatalog, link: str, speed_gbps: int, psu_w: float,
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



def cage_media(catalog: CableCatalog, split: set[str], network: tuple[str, ...],
               tier: tuple[str, ...], b_device: tuple[str, ...], b_port: tuple[str, ...],
               estimated: tuple[float, ...],
               chosen: tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]]
               ) -> tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]]:
    """The media of ``chosen`` with the legs of each split switch port ('swp5s0', 'swp5s1':
    cage swp5) of the fabrics in ``split`` in one medium: the longest leg's (the first of
    the longest on a tie), as the bill of materials buys them (emit/cabling.py
    _split_items). A cage takes one plug: a copper splitter cable, whose legs are one part
    of one length (the longest leg's), or one multi-port module with a fiber per leg, each
    fiber in the stocked length of that medium its own run needs. So a leg that copper would
    reach alone is a fiber where another leg of its cage needs optics."""
    media, lengths, transceivers = list(chosen[0]), list(chosen[1]), list(chosen[2])
    longest: dict[tuple[str, str], int] = {}
    legs: dict[tuple[str, str], list[int]] = {}
    for i, (net, kind) in enumerate(zip(network, tier, strict=False)):
        if kind != "node-leaf" or net not in split:
            continue
        cage = (b_device[i], b_port[i].rpartition("s")[0])
        legs.setdefault(cage, []).append(i)
        if cage not in longest or lengths[i] > lengths[longest[cage]]:
            longest[cage] = i
    for cage, members in legs.items():
        first = longest[cage]
        medium = catalog.medium(media[first])
        for i in members:
            if media[i] == medium.key and (medium.transceivers or lengths[i] == lengths[first]):
                continue
            # a fiber of its own within the longest leg's reach, or the splitter's length
            own = medium.stocked_length(estimated[i]) if medium.transceivers else None
            media[i], lengths[i], transceivers[i] = medium.key, own or lengths[first], \
                medium.transceivers
    return tuple(media), tuple(lengths), tuple(transceivers)
