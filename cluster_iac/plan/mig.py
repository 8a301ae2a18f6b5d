"""MIG devices of a node type: each GPU instance the plan puts on a GPU, with the ids and device
files it has on the node (catalog/mig.py derives them)."""

from __future__ import annotations

from dataclasses import dataclass

from cluster_iac.catalog.mig import cap_minor

CAPS_DIR = "/dev/nvidia-caps"


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class MigDevice:
    """One MIG instance: a GPU instance with one compute instance spanning it."""

    gpu: int
    profile: str  # '3g.40gb'
    gres_type: str  # the GPU's GRES type and the profile: 'h100_80gb_hbm3_3g.40gb'
    gi: int  # GPU instance id
    start: int  # first memory slice
    compute: int  # compute slices (of 7)
    memory_gb: int

    @property
    def files(self) -> tuple[str, ...]:
        """The device files a job needs: the GPU's, the GPU instance's and the compute
        instance's capability devices (gres.conf MultipleFiles)."""
        return (f"/dev/nvidia{self.gpu}",
                f"{CAPS_DIR}/nvidia-cap{cap_minor(self.gpu, self.gi)}",
                f"{CAPS_DIR}/nvidia-cap{cap_minor(self.gpu, self.gi, 0)}")


def gres_counts(gres_type: str | None, gpu_count: int,
                devices: tuple[MigDevice, ...]) -> dict[str, int]:
    """GPU GRES type -> count on one node: each MIG instance, and each GPU without MIG."""
    counts: dict[str, int] = {}
    partitioned = {d.gpu for d in devices}
    for device in devices:
        counts[device.gres_type] = counts.get(device.gres_type, 0) + 1
    whole = gpu_count - len(partitioned)
    if whole and gres_type:
        counts[gres_type] = whole
    return dict(sorted(counts.items()))
