"""MIG (Multi-Instance GPU) profiles of the built-in GPUs, and where each may sit on the GPU.

Source: NVIDIA Multi-Instance GPU User Guide (r580), "Supported MIG Profiles": A100 SXM4 80GB,
H100 SXM5 80GB, H200 141GB and B200 180GB each have 7 compute slices and 8 memory slices; a
profile 'Ng.Mgb' takes N compute slices and a fixed number of memory slices (1g: 1, or 2 for the
double-memory 1g; 2g: 2; 3g and 4g: 4; 7g: 8), at most 7, 4, 3, 2, 1 and 1 instances of them.
Placement ("MIG partitioning and GPU instance profiles" figure, and `nvidia-smi mig -lgipp`):
a GPU instance occupies consecutive memory slices from a start of its own size's grid, 1g from
slice 0 to 6 (never the eighth), 2g from 0, 2 or 4, 3g from 0 or 4, 4g and 7g from 0; instances
do not overlap, and their compute slices add up to at most 7. The instance counts above follow
from these rules (tests/test_mig.py checks that they do).

The '+me' profiles (one instance with the media engines) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from cluster_iac.spec.hardware import GpuModel

COMPUTE_SLICES = 7
MEMORY_SLICES = 8


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class MigProfile:
    """One GPU instance profile: its slices and where it may start."""

    name: str  # '3g.40gb'
    compute: int  # compute slices (of 7)
    memory: int  # memory slices (of 8)
    memory_gb: int  # as the profile's name says
    starts: tuple[int, ...]  # memory slices it may start at


def mig_profiles(gpu: GpuModel | None) -> dict[str, MigProfile] | None:
    """The six profiles of a GPU from the memory its catalog entry gives per 1g, 1g-double,
    2g, 3g, 4g and 7g (GB, ``mig_gb``); None for a GPU without MIG."""
    if gpu is None or gpu.mig_gb is None:
        return None
    one, one2, two, three, four, seven = gpu.mig_gb
    rows = ((f"1g.{one}gb", 1, 1, one, tuple(range(7))),
            (f"1g.{one2}gb", 1, 2, one2, (0, 2, 4, 6)),
            (f"2g.{two}gb", 2, 2, two, (0, 2, 4)),
            (f"3g.{three}gb", 3, 4, three, (0, 4)),
            (f"4g.{four}gb", 4, 4, four, (0,)),
            (f"7g.{seven}gb", 7, 8, seven, (0,)))
    return {name: MigProfile(name, c, m, gb, s) for name, c, m, gb, s in rows}




def place(profiles: list[MigProfile]) -> list[int] | None:
    """A start for each profile (in the given order) such that no two overlap and the compute
    slices fit; None when there is none. Largest first, each at its lowest free start, as the
    driver places instances created in that order; other orders only when that fails."""
    if sum(p.compute for p in profiles) > COMPUTE_SLICES:
        return None
    order = sorted(range(len(profiles)), key=lambda i: (-profiles[i].memory,
                                                        -profiles[i].compute, i))
    for attempt in [order, *permutations(order)]:
        starts = _first_fit([profiles[i] for i in attempt])
        if starts is not None:
            out = [0] * len(profiles)
            for i, start in zip(attempt, starts, strict=True):
                out[i] = start
            return out
    return None


def _first_fit(profiles: list[MigProfile]) -> list[int] | None:
    used = [False] * MEMORY_SLICES
    starts = []
    for p in profiles:
        start = next((s for s in p.starts if not any(used[s:s + p.memory])), None)
        if start is None:
            return None
        used[start:start + p.memory] = [True] * p.memory
        starts.append(start)
    return starts


def gpu_instance_id(memory: int, start: int) -> int:
    """The GPU instance id of an instance of ``memory`` slices at ``start``: the driver numbers
    them as a binary tree over the 8 memory slices, the whole GPU 0, the halves 1-2, the
    quarters 3-6, the eighths 7-14, higher starts first within a size. (The guide's example:
    two 3g instances, the one at 4:4 is id 1, the one at 0:4 id 2.) The health check compares
    the node's `nvidia-smi mig -lgi` with these ids, as gres.conf names devices by them."""
    per_size = MEMORY_SLICES // memory
    return (per_size - 1) + (per_size - 1 - start // memory)


def cap_minor(gpu: int, gi: int, ci: int | None = None) -> int:
    """Minor of /dev/nvidia-caps/nvidia-cap<N> for a GPU instance's access (ci None) or its
    compute instance's: /proc/driver/nvidia-caps/mig-minors numbers config 1, monitor 2, then
    per GPU (0-31) 15 GPU instances of 9 minors each (its access, then 8 compute instances):
    gpu0/gi2/access is 21 and gpu0/gi2/ci0/access 22, as in Slurm's gres.conf MIG example
    (MIG guide, "Device Nodes and Capabilities")."""
    return 3 + 135 * gpu + 9 * gi + (0 if ci is None else 1 + ci)
