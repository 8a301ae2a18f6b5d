"""Published fleets and the spread of failure rates they give: a scale on the reference class mix.

catalog/failure_rates.yaml holds one fully itemized table (classes: Llama 3's table 5) and a set
of published fleets (fleets:), each with its shape and what its count covers. For a fleet f:

    scale_f = (f's interruptions per node-day of the classes it covers)
              / (the reference's interruptions per node-day of the same classes)

so the reference has scale 1. A job's hardware classes fail at the reference's per-unit rate x a
scale: the expected scale of a GPU generation is the geometric mean of its fleets' scales (all
fleets' where it has none), and the range is the lowest and the highest fleet of any generation.
Software is counted once per job (a rate per job, not per part): Llama 3's software rows give
one end, the part of rsc1's MTTF at 1,024 GPUs that its per-node rate leaves unexplained the
other (Kokolis et al. 2024 find small jobs fail more often per GPU than a series of parts
predicts), and the expected figure is their geometric mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cluster_iac.catalog.snapshot import builtin_file

ENDS = ("lowest", "expected", "highest")
HARDWARE = ("gpu", "hbm", "host", "psu", "nic", "link")
COVERS = {"all": HARDWARE, "hardware": HARDWARE, "gpu": ("gpu", "hbm")}
GPUS_PER_NODE = 8  # every published fleet's hosts hold 8 GPUs and (Llama 3) one backend NIC per GPU
HOURS_A_DAY = 24


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Fleet:
    """One published fleet: its shape, its count and what the count covers."""

    key: str
    name: str
    source: str
    generation: str
    gpus: int
    nodes: int
    days: float
    covers: str  # 'all' | 'hardware' | 'gpu'
    per_node_day: float  # interruptions of the covered hardware classes per node per day
    per_job_day: float | None  # the per-job term it gives (interruptions per job per day)
    events: float | None  # the published count (None where the paper gives a rate)
    mttf_h: dict[int, float]  # published job MTTF by job size in GPUs
    ettr_at_least: float | None

    @property
    def per_day(self) -> float:
        """The published interruptions per day of the whole fleet (or its one job)."""
        return self.per_node_day * self.nodes + (self.per_job_day or 0 if self.covers == "all"
                                                 else 0)


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data: dict[str, Any] = builtin_file("failure_rates.yaml")
    return data


def classes() -> dict[str, dict[str, Any]]:
    """The reference table's classes (catalog/failure_rates.yaml classes:)."""
    found: dict[str, dict[str, Any]] = _data()["classes"]
    return found


def reference_per_node_day(keys: tuple[str, ...]) -> float:
    """The reference fleet's interruptions per node per day over ``keys``: events / (its nodes x
    days), its units being per node (8 GPUs and 8 NICs a host)."""
    ref = fleets()["llama3"]
    return sum(classes()[k]["events"] or 0 for k in keys) / (ref.nodes * ref.days)


@lru_cache(maxsize=1)
def fleets() -> dict[str, Fleet]:
    """Every published fleet, by key, in the catalog's order."""
    out = {}
    for key, e in _data()["fleets"].items():
        per_job = e.get("per_job_events")
        events = e.get("events")
        if "per_1000_node_days" in e:
            per_node = e["per_1000_node_days"] / 1000
        else:
            per_node = (events - (per_job or 0)) / (e["nodes"] * e["days"])
        mttf = {int(k): float(v) for k, v in (e.get("mttf_h") or {}).items()}
        per_job_day = per_job / e["days"] if per_job is not None else None
        if "per_job_from" in e:  # what the MTTF at that size leaves after the per-node rate
            size = e["per_job_from"]
            per_job_day = HOURS_A_DAY / mttf[size] - size / GPUS_PER_NODE * per_node
        out[key] = Fleet(key, e["name"], e["source"], e["generation"], e["gpus"], e["nodes"],
                         e["days"], e["covers"], per_node, per_job_day, events, mttf,
                         e.get("ettr_at_least"))
    return out


def scale(fleet: Fleet) -> float:
    """The fleet's rate over the reference's, on the classes its count covers."""
    return fleet.per_node_day / reference_per_node_day(COVERS[fleet.covers])


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def scales(generation: str | None) -> dict[str, float]:
    """The hardware scale at each end for a GPU generation ('expected': its fleets' geometric
    mean, or every fleet's where none is of that generation)."""
    every = [scale(f) for f in fleets().values()]
    own = [scale(f) for f in fleets().values() if f.generation == generation]
    return {"lowest": min(every), "expected": _geomean(own or every), "highest": max(every)}


def generation_fleets(generation: str | None) -> list[str]:
    """The fleets the expected scale of a generation comes from."""
    own = [k for k, f in fleets().items() if f.generation == generation]
    return own or list(fleets())


def per_job_days() -> dict[str, float]:
    """The per-job term (interruptions per job per day) at each end."""
    given = [f.per_job_day for f in fleets().values() if f.per_job_day is not None]
    return {"lowest": min(given), "expected": _geomean(given), "highest": max(given)}


def predicted_per_day(gpus: int, generation: str | None, end: str, covers: str = "all",
                      per_job: bool = True) -> float:
    """Interruptions per day of one job of ``gpus`` GPUs on 8-GPU hosts with a backend NIC per
    GPU, at one end of the range, over the classes ``covers`` names (plus the per-job term)."""
    nodes = math.ceil(gpus / GPUS_PER_NODE)
    hardware = reference_per_node_day(COVERS[covers]) * scales(generation)[end] * nodes
    return hardware + (per_job_days()[end] if per_job and covers == "all" else 0)
