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

Which start the driver picks, and so the GPU instance id (gres.conf's capability devices and the
health check depend on it), is read from real transcripts (tests/test_mig.py holds each table):
- nvidia-mig-parted creates a layout's instances largest first (NVIDIA/mig-parted
  pkg/types/mig_config.go MigConfig.Flatten sorts by compute slices, then memory) and tries
  other orders only when one fails (pkg/mig/config/config.go iteratePermutationsUntilSuccess);
- the driver puts each new instance at the start that leaves the most placements of every
  profile still possible, the lowest such start on a tie: on an empty GPU a 1g goes to 6:1, a
  2g to 4:2, a 3g to 4:4 (MIG User Guide, "Getting Started with MIG": `-cgi 9,19,14,19` gives
  3g at 4:4 id 2, 1g at 0:1 id 7, 2g at 2:2 id 4, 1g at 1:1 id 8; `-cgi 14,19,19,19,19,19` gives
  2g at 4:2 id 5, then 1g at 6, 0, 1, 2, 3; seven 1g.10gb on an H100 80GB HBM3 are created as
  ids 13, 11, 12, 7, 8, 9, 10 and listed by `nvidia-smi mig -lgi` as 7-13 at 0:1-6:1);
- the id is the start's place in a binary tree over the 8 memory slices, lowest start first:
  the whole GPU 0, the halves 1-2, the quarters 3-6, the eighths 7-14.
The '+me' profiles (one instance with the media engines) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from cluster_iac.spec.hardware import GpuModel

COMPUTE_SLICES = 7
MEMORY_SLICES = 8
# (compute slices, memory slices, starts) of the 1g, double-memory 1g, 2g, 3g, 4g and 7g
# profiles: the same slice grid on every GPU of 7 compute and 8 memory slices
SHAPES = ((1, 1, tuple(range(7))), (1, 2, (0, 2, 4, 6)), (2, 2, (0, 2, 4)), (3, 4, (0, 4)),
          (4, 4, (0,)), (7, 8, (0,)))


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
    rows = [(f"{c}g.{gb}gb", c, m, gb, starts)
            for (c, m, starts), gb in zip(SHAPES, gpu.mig_gb, strict=True)]
    return {name: MigProfile(name, c, m, gb, s) for name, c, m, gb, s in rows}


def place(profiles: list[MigProfile]) -> list[int] | None:
    """A start for each profile (in the given order) where the driver puts it when
    nvidia-mig-parted creates them: largest first, each where the driver places it
    (``driver_start``); other orders only when that fails, as mig-parted tries them. None
    when no order fits."""
    if sum(p.compute for p in profiles) > COMPUTE_SLICES:
        return None
    order = sorted(range(len(profiles)), key=lambda i: (-profiles[i].compute,
                                                        -profiles[i].memory, i))
    for attempt in [order, *permutations(order)]:
        starts = _create([profiles[i] for i in attempt])
        if starts is not None:
            out = [0] * len(profiles)
            for i, start in zip(attempt, starts, strict=True):
                out[i] = start
            return out
    return None


def _create(profiles: list[MigProfile]) -> list[int] | None:
    """The starts the driver gives instances created in this order; None when one fails."""
    used: list[tuple[int, int]] = []  # (start, memory slices) of each instance made
    compute = 0
    starts = []
    for p in profiles:
        start = driver_start(p, used, COMPUTE_SLICES - compute)
        if start is None:
            return None
        used.append((start, p.memory))
        compute += p.compute
        starts.append(start)
    return starts


def driver_start(profile: MigProfile, used: list[tuple[int, int]],
                 compute_left: int) -> int | None:
    """Where the driver puts a new instance of ``profile`` beside the ``used`` ones: of its
    free starts, the one that leaves the most placements of all six profiles possible (the
    lowest start on a tie); None when none is free. The rule reproduces every transcript
    cited in the module docstring."""
    if profile.compute > compute_left:
        return None
    free = [s for s in profile.starts if _free(s, profile.memory, used)]
    if not free:
        return None
    def left(start: int) -> int:
        after = [*used, (start, profile.memory)]
        room = compute_left - profile.compute
        return sum(1 for compute, memory, starts in SHAPES if compute <= room
                   for s in starts if _free(s, memory, after))

    return max(free, key=lambda s: (left(s), -s))


def _free(start: int, memory: int, used: list[tuple[int, int]]) -> bool:
    return all(start + memory <= s or s + m <= start for s, m in used)


def gpu_instance_id(memory: int, start: int) -> int:
    """The GPU instance id of an instance of ``memory`` slices at ``start``: the driver numbers
    them as a binary tree over the 8 memory slices, the whole GPU 0, the halves 1-2, the
    quarters 3-6, the eighths 7-14, lowest start first (seven 1g on an H100 80GB are ids 7-13
    at 0:1-6:1; a 3g at 4:4 is id 2, a 2g at 2:2 id 4: see the module docstring). The health
    check compares the node's `nvidia-smi mig -lgi` with these ids, and gres.conf names the
    capability devices by them."""
    per_size = MEMORY_SLICES // memory
    return (per_size - 1) + start // memory


def cap_minor(gpu: int, gi: int, ci: int | None = None) -> int:
    """Minor of /dev/nvidia-caps/nvidia-cap<N> for a GPU instance's access (ci None) or its
    compute instance's: /proc/driver/nvidia-caps/mig-minors numbers config 1, monitor 2, then
    per GPU (0-31) 15 GPU instances of 9 minors each (its access, then 8 compute instances):
    gpu0/gi2/access is 21 and gpu0/gi2/ci0/access 22, as in Slurm's gres.conf MIG example
    (MIG guide, "Device Nodes and Capabilities")."""
    return 3 + 135 * gpu + 9 * gi + (0 if ci is None else 1 + ci)
