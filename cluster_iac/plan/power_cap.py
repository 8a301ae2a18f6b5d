"""A declared GPU power cap (node_types.*.gpu_power_limit_w) and what it costs a job's speed.

Under a cap the GPU lowers its clock (and voltage) until its draw fits. The dynamic power of
CMOS logic is P = C V^2 f, and across a GPU's DVFS range the voltage follows the clock, so
P grows as f^3 (Mei, Wang and Chu, "A survey and measurement study of GPU DVFS on energy
conservation", Digital Communications and Networks 3(2), 2017). A step limited by the GPU's
arithmetic, drawing the GPU's maximum uncapped, then runs at

    speed = clock ratio = (limit / GPU maximum) ^ (1/3)

of its full speed: the most a cap costs. Steps that draw less than the cap (memory-bound
kernels, communication, data loading) lose less or nothing: measured transformer training
under caps lost far less than the cap's share (McDonald et al., "Great Power, Great
Responsibility", Findings of NAACL 2022, arXiv:2205.09646: BERT on V100 capped at 150 W of
250 W used 15 % less energy for a marginal increase in training time; Zhao et al.,
"Sustainable Supercomputing for AI: GPU Power Capping at HPC Scale", ACM SoCC 2023,
arXiv:2402.18593). Collectives keep their bandwidth: NVLink and the network are not capped.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from cluster_iac.plan.model import Plan

EXPONENT = 3  # P ~ f^3 under DVFS (Mei, Wang and Chu 2017)
SOURCES = ("CMOS dynamic power P = C V^2 f with V following f under DVFS: Mei, Wang and Chu, "
           "Digital Communications and Networks 3(2), 2017; measured training under caps: "
           "McDonald et al., Findings of NAACL 2022 (arXiv:2205.09646); Zhao et al., ACM SoCC "
           "2023 (arXiv:2402.18593)")


class CapEffect(NamedTuple):
    """A node type's GPU cap and the speed it predicts."""

    node_type: str
    gpu: str  # the GPU's name
    gpus: int
    limit_w: int
    gpu_max_w: int
    node_w: int  # the node's maximum draw under the cap
    platform_w: int  # the platform's, uncapped

    @property
    def speed(self) -> float:
        """The least share of full speed a compute-bound step keeps: (limit / max)^(1/3)."""
        return float((self.limit_w / self.gpu_max_w) ** (1 / EXPONENT))

    @property
    def slower_percent(self) -> float:
        """How much longer such a step takes, at most: 1 / speed - 1, in %."""
        return 100 * (1 / self.speed - 1)


def gpu_limit_w(platform_w: int, gpus: int, gpu_max_w: int, node_w: float) -> int | None:
    """The highest whole GPU power limit under which the node draws at most ``node_w``: each
    GPU gives up ceil((platform - node_w) / gpus) W of its maximum. None without GPUs, or
    where the GPUs alone cannot give up that much."""
    if not gpus or not gpu_max_w:
        return None
    limit = gpu_max_w - math.ceil((platform_w - node_w) / gpus)
    return limit if 0 < limit <= gpu_max_w else None


def cap_effects(plan: Plan) -> list[CapEffect]:
    """Every node type whose GPUs are capped below their catalog maximum, by name."""
    return [CapEffect(name, nt.gpu_name or nt.gpu_model or "", nt.gpu_count,
                      nt.gpu_power_limit_w, nt.gpu_max_power_w, nt.max_power_w,
                      nt.platform_max_power_w)
            for name, nt in sorted(plan.node_types.items())
            if nt.gpu_count and 0 < nt.gpu_power_limit_w < nt.gpu_max_power_w]


def effect_text(e: CapEffect) -> str:
    """The prediction in words, with its numbers."""
    return (f"each of its {e.gpus} {e.gpu} GPUs is capped at {e.limit_w} W of the "
            f"{e.gpu_max_w} W the catalog gives it ({100 * e.limit_w / e.gpu_max_w:.0f} %), so "
            f"a compute-bound step runs at least ({e.limit_w} / {e.gpu_max_w})^(1/3) = "
            f"{e.speed:.3f} of full speed, up to {e.slower_percent:.1f} % slower (the clock "
            f"falls as the cube root of the power); the node draws at most {e.node_w} W of "
            f"the platform's {e.platform_w} W")
