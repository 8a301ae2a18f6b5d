"""The cable catalog (media, reach per speed, stocked lengths) and the floor geometry."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import lru_cache

from cluster_iac.catalog.snapshot import builtin_file


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class CableMedium:
    """One way to build a link: a cable type, with or without transceivers."""

    key: str
    name: str
    netbox_type: str
    link: str  # 'ethernet' | 'any' | 'power'
    reach_m: dict[int, float]
    stocked_m: tuple[float, ...]
    transceivers: int
    max_psu_w: float | None
    # a split switch port's cable of this medium, by the rate of one leg (port breakout);
    # none: the medium splits by optics (a twin-port transceiver in the switch's cage)
    splitters: dict[int, str] = field(default_factory=dict)
    # the parts of an optical link's ends and fiber, by line rate and BOM item ('transceiver',
    # 'transceiver, twin-port', 'cable'...): what the bill of materials names
    modules: dict[int, dict[str, str]] = field(default_factory=dict)

    def reach_at(self, speed_gbps: int) -> float | None:
        """Longest supported length at this line rate, or None when the medium cannot carry it.

        A rate between two listed ones takes the reach of the next faster one (a cable rated
        for 400G carries 200G at least as far); faster than every listed rate: unsupported.
        """
        faster = [s for s in self.reach_m if s >= speed_gbps]
        return self.reach_m[min(faster)] if faster else None

    def stocked_length(self, length_m: float) -> float | None:
        """The shortest stocked length that covers ``length_m``."""
        i = bisect.bisect_left(self.stocked_m, length_m - 1e-9)
        return self.stocked_m[i] if i < len(self.stocked_m) else None


@dataclass(frozen=True, eq=False, repr=False)
class Geometry:
    """Floor geometry for cable-length estimates."""

    u_height_mm: float
    rack_width_mm: float
    row_pitch_mm: float
    tray_rise_mm: float
    slack_m: float
    in_rack_min_m: float


@dataclass(frozen=True, eq=False, repr=False)
class CableCatalog:
    media: tuple[CableMedium, ...]
    geometry: Geometry

    def medium(self, key: str) -> CableMedium:
        return next(m for m in self.media if m.key == key)


@lru_cache(maxsize=1)
def cable_catalog() -> CableCatalog:
    """The built-in cable catalog, media in preference order."""
    data = builtin_file("cables.yaml")
    media = tuple(
        CableMedium(
            key=key,
            name=entry["name"],
            netbox_type=entry["netbox_type"],
            link=entry["link"],
            reach_m={int(k): float(v) for k, v in entry["reach_m"].items()},
            stocked_m=tuple(sorted(float(x) for x in entry["stocked_m"])),
            transceivers=int(entry["transceivers"]),
            max_psu_w=entry.get("max_psu_w"),
            splitters={int(k): str(v) for k, v in entry.get("splitters", {}).items()},
            modules={int(k): {str(item): str(part) for item, part in v.items()}
                     for k, v in entry.get("modules", {}).items()},
        )
        for key, entry in data["media"].items()
    )
    return CableCatalog(media=media, geometry=Geometry(**data["geometry"]))
