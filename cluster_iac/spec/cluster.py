"""The whole cluster spec: one document, every section."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Literal

from pydantic import Field

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.facility import Cooling, Power, Row
from cluster_iac.spec.hardware import Catalog
from cluster_iac.spec.nccl import Nccl
from cluster_iac.spec.network import Fabric, Networks
from cluster_iac.spec.nodes import Move, NodeGroup, NodeType
from cluster_iac.spec.policy import Policy, Workload
from cluster_iac.spec.reliability import Cost, Reliability
from cluster_iac.spec.slurm import Slurm
from cluster_iac.spec.storage import Storage
from cluster_iac.spec.strings import Name

# The releases of catalog/slurm_releases.py (a test keeps the two lists equal).
SlurmVersion = Literal["22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05"]


class ClusterInfo(SpecModel):
    """Identity of the cluster and the software it targets."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    """Cluster name (Slurm ClusterName: lower case)."""
    slurm_version: SlurmVersion = "22.05"
    """Slurm release the generated files target: it decides the plugins, keys and files
    written (topology/block from 23.11, BlockSizes from 24.05, topology.yaml from 25.05,
    Exclusive=NODE from 26.05) and which slurm.extra keys exist."""
    nccl_version: str = Field(default="2.21", pattern=r"^\d+\.\d+(\.\d+)?$")
    """NCCL release the generated NCCL files target."""
    site: Name = "site1"
    """Data-center site name (NetBox site)."""


class ClusterSpec(SpecModel):
    """A GPU training cluster, declared in one file."""

    cluster: ClusterInfo
    """Name and targeted software versions."""
    catalog: Catalog = Catalog()
    """Extra hardware models, added to the built-in catalog."""
    node_types: dict[Name, NodeType] = Field(min_length=1)
    """Node types by name."""
    node_groups: list[NodeGroup] = Field(min_length=1)
    """Groups of identical nodes: compute, controllers, login, storage servers."""
    moved: list[Move] = Field(default=[], max_length=10_000)
    """Hosts and hostname patterns renamed: each a ``from`` and a ``to``, applied to the
    lock's lines before anything is allocated, so a renamed host keeps its identities
    (docs/lock.md, 'Renames')."""
    rows: list[Row] = Field(min_length=1)
    """Rows of racks."""
    power: Power
    """Power distribution: the PDU profiles racks name (layout, voltage, phases, breakers),
    feeds, the facility's capacity and PUE."""
    cooling: Cooling = Cooling()
    """Facility cooling: liquid loops (CDUs, coolant, flow, temperatures, pumps) and the heat
    the facility can reject; air-cooled racks need none."""
    fabric: Fabric = Fabric()
    """Compute and storage fabrics."""
    networks: Networks = Networks()
    """IP networks."""
    storage: Storage = Storage()
    """Shared storage: the Lustre file system, its servers' node groups, targets, LNet and
    directory layouts."""
    nccl: Nccl = Nccl()
    """Extra NCCL environment for the GPU nodes."""
    slurm: Slurm
    """Scheduler."""
    workload: Workload = Workload()
    """What training jobs need."""
    policy: Policy = Policy()
    """Validator thresholds."""
    reliability: Reliability = Reliability()
    """Failure rates, recovery times and hot spares: the goodput model's inputs."""
    cost: Cost = Cost()
    """Prices, amortization and running costs: the cost per useful GPU-hour."""
