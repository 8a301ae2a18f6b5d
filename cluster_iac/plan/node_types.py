"""A node type as the plan holds it: the spec's type with the catalog's defaults and the spec's
overrides merged (NodeTypePlan), its adapters by role (NicPlan), and which NIC role puts a
node on an IP network (NIC_ROLE), which the addresses and the Lustre checks share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster_iac.base.errors import SpecPath

# Which NIC role puts a node on the storage network (the fabric's own IPoIB uses 'compute').
NIC_ROLE = {"ipoib": "compute", "storage": "storage"}


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class NicPlan:
    """Adapters of one role on a node type, resolved against the catalog."""

    role: str
    model: str
    name: str
    link: str
    speed_gbps: int
    count: int
    pcie_gen: int
    pcie_width: int
    cage_ports: int = 1  # ports that share one chassis cage (one transceiver a cage)


@dataclass(frozen=True, eq=False, repr=False)
class NodeTypePlan:
    """A node type with catalog defaults and spec overrides merged."""

    name: str
    platform: str
    platform_name: str
    kind: str
    gpu_model: str | None
    gpu_name: str | None
    gpu_count: int
    gres_type: str | None
    gpu_max_power_w: int
    gpu_nvlink_gbs: float
    cpu_model: str
    cpu: Any  # CpuModel (catalog entry, frozen)
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    memory_gib: int
    nics: tuple[NicPlan, ...]
    max_power_w: int
    psu_count: int
    psu_rating_w: int
    psu_required: int
    height_u: int
    weight_kg: float
    cooling: str
    nvlink_domain: str
    gpu_sockets: tuple[int, ...]
    pcie: Any  # PcieLayout | None (catalog entry, frozen)
    features: tuple[str, ...]
    gres_autodetect: str
    spec_path: SpecPath
    gpu_architecture: str | None = None  # 'ampere' | 'hopper' | 'blackwell' (NCCL's tuning key)
    nvlink_sharp: bool = False  # the NVSwitches reduce in the switch (NCCL's NVLS algorithms)
    mig: tuple[Any, ...] = ()  # MIG instances (plan/mig.py MigDevice), by GPU and start
    gpu_power_limit_w: int = 0  # the declared cap on each GPU (0: none)
    platform_max_power_w: int = 0  # the platform's maximum draw, before any cap

    @property
    def gres_gpus(self) -> int:
        """GPU GRES one node offers Slurm: each MIG instance and each GPU without MIG."""
        return self.gpu_count - len({d.gpu for d in self.mig}) + len(self.mig)

    @property
    def cpus(self) -> int:
        """Logical CPUs as Slurm counts them."""
        return self.sockets * self.cores_per_socket * self.threads_per_core

    def nics_of(self, role: str) -> tuple[NicPlan, ...]:
        return tuple(nic for nic in self.nics if nic.role == role)

    def nic_count(self, role: str) -> int:
        return sum(nic.count for nic in self.nics_of(role))

