"""Alpha-beta cost of one all_reduce under each algorithm NCCL has, for one job's shape.

Every algorithm's time is t = latency + S / algbw (S the message size in bytes); nccl-tests
prints busbw = S / t x 2(n-1)/n for all_reduce, whichever algorithm ran. Per GPU and per
NVLink domain (a board, or an NVL72 rack; NCCL's "node"), over D domains of g GPUs, n = D x g:

- ring: every rank sends and receives 2(n-1)/n x S over its slowest link; each of NCCL's
  rings enters and leaves every domain once through one NIC, so the domain's NICs together
  carry the same as one GPU's NVLink: busbw <= min(NVLink x e_ring, NICs x e_net).
  2(n-1) steps, of which 2D cross the network: latency grows linearly with the ranks.
- tree (double binary tree between domains, a chain inside each): a GPU of the chain moves
  2S each way; a domain sends S (D = 2) or 2S (D > 2) over its NICs. 2 log2(D) network
  steps: latency grows logarithmically.
- NVLS (NVLink SHARP, one domain): the NVSwitch reduces and multicasts, each GPU moves S
  each way: algbw = NVLink x e_nvls, one constant latency.
- NVLS-tree (domains > 1): NVLS inside each domain, a tree between domains over NICs.
- NVLS with IB SHARP, and CollNet: the switches reduce across domains, so a domain sends and
  receives S once: algbw <= NICs x e_net (a ring-like reduce-scatter inside the domain for
  CollNet).

A fabric with oversubscribed tiers on the job's path divides the NIC bound (worst case: all
nodes send across the uplinks at once, as when other jobs share them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from cluster_iac.plan.collectives.constants import (
    BASE_LATENCY_US,
    COLLNET_ARITY_US,
    NET_STEP_US,
    NVLINK_STEP_US,
    TREE_EFFICIENCY,
    Efficiency,
)

ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "collnet")
LABELS = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS", "nvls_tree": "NVLS-tree",
          "collnet": "CollNet"}


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class JobShape:
    """What the cost model needs to know of one job: ranks, NVLink domains and links."""

    gpus: int
    nodes: int
    domains: int  # NVLink domains the job's GPUs fall in (NCCL's nodes)
    domain_gpus: int  # the job's GPUs in its smallest domain
    intra_gbs: float  # per-GPU bandwidth inside a domain, one direction (NVLink or PCIe)
    intra_link: str  # 'NVLink' | 'PCIe'
    efficiency: Efficiency
    nvlink_sharp: bool
    net_line_gbs: float  # line rate of the NICs NCCL drives in the weakest domain, GB/s
    net_efficiency: float
    oversubscription: float  # divisor of the NIC bound (1.0: the job stays under its leaves)
    technology: str  # 'infiniband' | 'roce' | 'none'
    enabled: frozenset[str]  # algorithms NCCL may use here

    @property
    def net_gbs(self) -> float:
        """What NCCL's busbw reaches over one domain's NICs, GB/s."""
        return self.net_line_gbs * self.net_efficiency / self.oversubscription

    @property
    def bus_factor(self) -> float:
        """nccl-tests' 2(n-1)/n."""
        return 2 * (self.gpus - 1) / self.gpus


@dataclass(frozen=True, repr=False)
class Estimate:
    """One algorithm's predicted latency, bandwidth, time and busbw at one message size."""

    algorithm: str
    latency_us: float
    algbw_gbs: float  # the bandwidth term: S / (t - latency)
    time_us: float
    busbw_gbs: float
    limit: str  # what bounds algbw: 'NVLink' | 'PCIe' | 'network'

    @property
    def label(self) -> str:
        return LABELS[self.algorithm]


@dataclass(frozen=True, eq=False, repr=False)
class _Bounds:
    latency_us: float
    intra: float  # algbw bound inside domains (inf when there is nothing to cross)
    network: float  # algbw bound over the NICs (inf within one domain)
    scale: float = 1.0  # algorithm's efficiency on top of the smaller bound


def estimate(shape: JobShape, algorithm: str, size_bytes: int) -> Estimate | None:
    """The algorithm's estimate, or None where NCCL cannot run it for this job."""
    if algorithm not in shape.enabled or shape.gpus < 2:
        return None
    bounds = _BOUNDS[algorithm](shape)
    if bounds is None:
        return None
    algbw = min(bounds.intra, bounds.network) * bounds.scale
    if not math.isfinite(algbw) or algbw <= 0:
        return None
    time_us = bounds.latency_us + size_bytes / (algbw * 1e3)  # GB/s = 1e3 bytes/us
    limit = "network" if bounds.network < bounds.intra else shape.intra_link
    return Estimate(algorithm, bounds.latency_us, algbw, time_us,
                    size_bytes / (time_us * 1e3) * shape.bus_factor, limit)


def estimates(shape: JobShape, size_bytes: int) -> tuple[Estimate, ...]:
    """Every algorithm NCCL could run for the job, in ALGORITHMS order."""
    found = (estimate(shape, algorithm, size_bytes) for algorithm in ALGORITHMS)
    return tuple(e for e in found if e is not None)


def nccl_choice(found: tuple[Estimate, ...]) -> Estimate | None:
    """NCCL runs the algorithm of least predicted time (ties: the first in ALGORITHMS)."""
    return min(found, key=lambda e: e.time_us, default=None)


def _intra_ring(shape: JobShape) -> float:
    """Ring busbw inside domains (inf with one GPU per domain: no intra-domain hop)."""
    if shape.domain_gpus < 2:
        return math.inf
    return shape.intra_gbs * shape.efficiency.ring


def _net(shape: JobShape) -> float:
    return shape.net_gbs if shape.domains > 1 else math.inf


def _ring(shape: JobShape) -> _Bounds:
    steps = 2 * (shape.gpus - 1)
    net_steps = 2 * shape.domains if shape.domains > 1 else 0
    latency = (BASE_LATENCY_US["ring"] + (steps - net_steps) * NVLINK_STEP_US["ring"]
               + net_steps * NET_STEP_US["ring"])
    to_algbw = 1 / shape.bus_factor
    return _Bounds(latency, _intra_ring(shape) * to_algbw, _net(shape) * to_algbw)


def _tree(shape: JobShape) -> _Bounds:
    depth = math.floor(math.log2(shape.domains))
    latency = BASE_LATENCY_US["tree"] + 2 * ((shape.domain_gpus - 1) * NVLINK_STEP_US["tree"]
                                             + depth * NET_STEP_US["tree"])
    network = _net(shape) / (1 if shape.domains <= 2 else 2)
    return _Bounds(latency, _intra_ring(shape) / 2, network, TREE_EFFICIENCY)


def _nvls(shape: JobShape) -> _Bounds | None:
    if not shape.nvlink_sharp or shape.domain_gpus < 2 or shape.efficiency.nvls <= 0:
        return None
    if shape.domains == 1:
        return _Bounds(NVLINK_STEP_US["nvls"], shape.intra_gbs * shape.efficiency.nvls,
                       math.inf)
    if "collnet" not in shape.enabled:  # NVLS across domains reduces in IB SHARP switches
        return None
    return _Bounds(NVLINK_STEP_US["nvls"] + NET_STEP_US["nvls"],
                   shape.intra_gbs * shape.efficiency.nvls_tree, shape.net_gbs)


def _nvls_tree(shape: JobShape) -> _Bounds | None:
    if (not shape.nvlink_sharp or shape.domains < 2 or shape.domain_gpus < 2
            or shape.efficiency.nvls_tree <= 0):
        return None
    depth = math.floor(math.log2(shape.domains))
    latency = NVLINK_STEP_US["nvls_tree"] + 2 * depth * NET_STEP_US["nvls_tree"]
    network = shape.net_gbs / (1 if shape.domains == 2 else 2)
    return _Bounds(latency, shape.intra_gbs * shape.efficiency.nvls_tree, network)


def _collnet(shape: JobShape) -> _Bounds | None:
    if shape.domains < 2:
        return None
    g = shape.domain_gpus
    latency = 2 * (min(1, g - 1) * NVLINK_STEP_US["collnet"] + (g - 1) * COLLNET_ARITY_US) \
        + NET_STEP_US["collnet"]
    intra = _intra_ring(shape) * g / (2 * (g - 1)) if g > 1 else math.inf
    return _Bounds(latency, intra, shape.net_gbs)


_BOUNDS: dict[str, Callable[[JobShape], _Bounds | None]] = {
    "ring": _ring, "tree": _tree, "nvls": _nvls, "nvls_tree": _nvls_tree, "collnet": _collnet,
}
