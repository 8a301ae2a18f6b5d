"""Node types (catalog platform plus overrides) and node groups (how many, where, named how)."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import Field, model_validator

from cluster_iac.spec.base import SpecModel, fail, shown
from cluster_iac.spec.hardware import NicSlot, PsuSpec
from cluster_iac.spec.limits import (
    CoreCount,
    FirstIndex,
    GpuCount,
    HeightU,
    MemoryGib,
    NodeCount,
    PerRack,
    PowerW,
    SocketCount,
    ThreadCount,
    WeightKg,
)
from cluster_iac.spec.strings import HostlistExpr, HostnamePattern, MoveName, Name

Role = Literal["compute", "controller", "login", "lustre_mds", "lustre_oss", "service"]


class GpuOverride(SpecModel):
    """Replace the platform's GPU model or count."""

    model: Name | None = None
    """Catalog GPU model."""
    count: GpuCount | None = None
    """GPUs per node."""


class CpuOverride(SpecModel):
    """Replace the platform's CPU layout."""

    model: Name | None = None
    """Catalog CPU model."""
    sockets: SocketCount | None = None
    """CPU sockets."""
    cores_per_socket: CoreCount | None = None
    """Physical cores per socket (default: the CPU model's)."""
    threads_per_core: ThreadCount | None = None
    """Hardware threads per core: 1 with SMT off, 2 with SMT on."""


class MigLayout(SpecModel):
    """MIG partitions of some GPUs of a node: the same profiles on each of them."""

    gpus: list[Annotated[int, Field(ge=0, le=63)]] | Literal["all"] = "all"
    """GPU indices (nvidia-smi's) this layout applies to, or 'all' (every GPU no other
    layout names)."""
    profiles: list[Annotated[str, Field(pattern=r"^[1-7]g\.[0-9]{1,4}gb$")]] = Field(
        min_length=1, max_length=7)
    """GPU instance profiles on each of those GPUs, as NVIDIA names them ('3g.40gb',
    '1g.10gb'): each must exist on the GPU and together they must fit its 7 compute and 8
    memory slices (NVIDIA MIG user guide, 'Supported MIG Profiles')."""


class NodeType(SpecModel):
    """A kind of node: a catalog platform, with any field overridden."""

    platform: Name
    """Catalog platform this node type starts from (e.g. 'dgx-h100')."""
    gpu: GpuOverride | None = None
    """GPU model/count override."""
    cpu: CpuOverride | None = None
    """CPU override."""
    memory_gib: MemoryGib | None = None
    """Installed memory in GiB."""
    nics: list[NicSlot] | None = None
    """Network adapters by role; replaces the platform's whole list, so it must name the
    in-band and BMC adapters too when networks.management and networks.bmc are declared
    (to add an adapter, use ``nics_add``)."""
    nics_add: list[NicSlot] = []
    """Network adapters added to the platform's list (or to ``nics``), e.g. one storage HCA:
    ``nics_add: [{role: storage, model: cx7-ndr}]``."""
    max_power_w: PowerW | None = None
    """Maximum power draw of the node in watts."""
    gpu_power_limit_w: PowerW | None = None
    """A power cap on each GPU, W: the limit the nodes hold each GPU to (nvidia-smi -pl, or
    the BMC's GPU power limit), below the catalog GPU's max_power_w. The node then draws the
    platform's maximum less gpus x (GPU maximum - limit) (unless max_power_w is given), and
    needs the PSUs that carry that; report.md predicts the speed it costs and POWER-GPU-CAP
    says so."""
    psus: PsuSpec | None = None
    """Power supplies and their redundancy."""
    height_u: HeightU | None = None
    """Rack units."""
    weight_kg: WeightKg | None = None
    """Weight in kg."""
    features: list[Name] = []
    """Slurm node features (constraints users can request with --constraint)."""
    mig: list[MigLayout] = []
    """MIG partitioning of the node's GPUs (empty: none). Each MIG instance is one GPU GRES of
    its own type in gres.conf (the GPU's type and the profile, e.g. h100_80gb_hbm3_3g.40gb);
    mig/<node type>.yaml applies the layout with nvidia-mig-parted."""
    gres_autodetect: Literal["off", "nvml"] = "off"
    """gres.conf AutoDetect: 'nvml' lets slurmd read GPUs from NVML, 'off' writes File= lines."""


class NodeGroup(SpecModel):
    """A set of identical nodes with consecutive hostnames."""

    name: Name
    """Group name (partitions and inventories refer to it)."""
    node_type: Name
    """Node type of every node in the group."""
    count: NodeCount
    """Number of nodes."""
    hostname: HostnamePattern
    """Hostname pattern: a run of '#' is the zero-padded index, e.g. 'dgx-###' -> dgx-001."""
    first_index: FirstIndex = 1
    """Index of the first node."""
    role: Role = "compute"
    """What the nodes do: compute nodes become Slurm nodes; the others are infrastructure."""
    racks: HostlistExpr
    """Racks the nodes are placed in, as a hostlist (e.g. 'r[01-04]'); filled in order."""
    per_rack: PerRack | None = None
    """Nodes per rack (default: spread evenly over the listed racks)."""



class Move(SpecModel):
    """A host, or a node group's hostname pattern, renamed: the lock's lines of the old name
    are the new name's before anything is allocated, so the renamed hosts keep their rack,
    U, ports, outlets and addresses (Terraform's ``moved`` block). Harmless once applied:
    the lock then holds only the new names; a move whose old name is again a host of the
    spec is not applied."""

    from_: MoveName = Field(alias="from", description=(
        "The old name: a host (gpu001) or a hostname pattern (gpu###), whose hosts keep "
        "their index."))
    to: MoveName
    """The new name: a host (node001), or the new hostname pattern (node###) when ``from``
    is a pattern."""

    @model_validator(mode="after")
    def _same_kind(self) -> "Move":
        if ("#" in self.from_) != ("#" in self.to):
            fail("hostname", f"moved from {shown(self.from_)} to {shown(self.to)}: a hostname "
                 "pattern moves to a pattern, a host to a host",
                 "write both with '#' (gpu### -> node###) or neither (gpu001 -> node001)")
        return self
