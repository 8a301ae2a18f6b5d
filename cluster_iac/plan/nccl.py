"""NCCL settings per GPU node type, as the plan_nccl pass derives them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster_iac.base.errors import SpecPath
from cluster_iac.plan.node_types import NodeTypePlan

# Where the playbooks install nccl/<node type>.topo.xml on the hosts (emit/ansible.py's
# NCCL_TOPO_DIR says the same; a test keeps them equal).
TOPO_DIR = "/etc/nccl"


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class NcclSetting:
    """One environment variable with the reason it is set."""

    name: str
    value: str
    reason: str


@dataclass(frozen=True, eq=False, repr=False)
class NcclNodeType:
    """The NCCL environment of one GPU node type."""

    node_type: str
    settings: tuple[NcclSetting, ...]  # sorted by name
    hcas: tuple[str, ...]  # compute-fabric RDMA devices, rail order
    topo_file: str | None  # host path of the topology XML (None: no PCIe layout known)
    spec_path: SpecPath

    def env(self) -> dict[str, str]:
        return {s.name: s.value for s in self.settings}


def topo_path(node_type: str) -> str:
    """Host path of a node type's NCCL topology file."""
    return f"{TOPO_DIR}/{node_type}.topo.xml"


def compute_hcas(nt: NodeTypePlan) -> tuple[str, ...]:
    """RDMA device names of the node type's compute NICs, in rail order.

    The catalog's PCIe layout names them where it describes the same NICs; otherwise the
    compute adapters are taken to enumerate first, as mlx5_0, mlx5_1, ...
    """
    named = layout_nics(nt)
    if layout_describes_nics(nt) and all(dev.name for dev in named):
        return tuple(str(dev.name) for dev in named)
    return tuple(f"mlx5_{index}" for index in range(nt.nic_count("compute")))


def layout_nics(nt: NodeTypePlan) -> list[Any]:
    """The layout's NICs sorted by rail ([] without a layout)."""
    if nt.pcie is None:
        return []
    return sorted((dev for numa in nt.pcie.numa_nodes for switch in numa.switches
                   for dev in switch.devices if dev.kind == "nic"), key=lambda dev: dev.index)


def layout_describes_nics(nt: NodeTypePlan) -> bool:
    """Whether the layout's NICs are the node type's compute NICs (a spec that replaces the
    platform's adapters, like the seed's single HDR HCA, keeps the GPUs but not the NICs)."""
    nics = layout_nics(nt)
    return bool(nics) and len(nics) == nt.nic_count("compute")
