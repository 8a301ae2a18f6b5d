"""Hardware models shared by the built-in catalog and the spec's own catalog entries."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import Field

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import (
    MAX_BANDWIDTH_GBS,
    MAX_NICS,
    MAX_POWER_W,
    MAX_SOCKETS,
    BandwidthGbs,
    CoreCount,
    DriveMbs,
    DriveTb,
    GpuCount,
    HeightU,
    LaneCount,
    MemoryGib,
    NicCount,
    PortCount,
    PowerW,
    PsuCount,
    SocketCount,
    SpareCount,
    SpeedGbps,
    ThreadCount,
    WeightKg,
    at_most,
    up_to,
)
from cluster_iac.spec.rack_layout import RackSlots
from cluster_iac.spec.strings import Name, Source, Text

LinkLayer = Literal["infiniband", "ethernet", "nvlink"]
DriveKind = Literal["nvme", "sas-ssd", "sata-ssd", "hdd"]
PlatformCooling = Literal["air", "liquid", "either"]
NicRole = Literal["compute", "storage", "inband", "bmc"]


class GpuModel(SpecModel):
    """A GPU model."""

    name: Text
    """Marketing name, e.g. 'NVIDIA H100 SXM5 80GB'."""
    gres_type: Name
    """Slurm GRES type: NVML's product name lower-cased with spaces as '_' and the 'NVIDIA '
    prefix dropped, which is what Slurm's AutoDetect=nvml reports, so both ways agree."""
    memory_gib: MemoryGib
    """HBM capacity in GiB."""
    max_power_w: PowerW
    """Maximum board power (TDP) in watts."""
    nvlink_gbs: Annotated[float, up_to(MAX_BANDWIDTH_GBS, ge=0),
                          at_most(MAX_BANDWIDTH_GBS, "GB/s")]
    """NVLink bandwidth per GPU, one direction, GB/s (0 when the GPU has no NVLink)."""
    nvml_name: Text
    """Product name as NVML and nvidia-smi print it."""
    architecture: Literal["volta", "ampere", "hopper", "blackwell"] | None = None
    """GPU architecture (compute capability 7.x, 8.x, 9.x, 10.x): NCCL keys its tuning on it,
    and the all_reduce model its calibrated efficiencies; None for others."""
    mig_gb: Annotated[list[MemoryGib], Field(min_length=6, max_length=6)] | None = None
    """Multi-Instance GPU: the memory in GB that the names of its 1g, double-memory 1g, 2g, 3g,
    4g and 7g GPU instance profiles show (NVIDIA MIG User Guide, "Supported MIG Profiles"),
    e.g. [10, 20, 20, 40, 40, 80] for '1g.10gb' ... '7g.80gb'; None: no MIG."""
    baseboard: Name | None = None
    """The GPU baseboard this module fits (e.g. 'hgx-hopper-8gpu': NVIDIA's HGX H200 boards
    are compatible with the hardware of HGX H100 systems). A node type may replace its
    platform's GPU with another of the same baseboard and keep the platform's PCIe layout
    and socket binding; None: the GPU fits no other platform's board."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class CpuModel(SpecModel):
    """A CPU model (one socket)."""

    name: Text
    """Marketing name, e.g. 'Intel Xeon Platinum 8480C'."""
    arch: Literal["x86_64", "arm64", "ppc64"]
    """Architecture as NCCL's topology XML names it."""
    vendor: Literal["GenuineIntel", "AuthenticAMD", "ARM", "IBM"]
    """CPUID vendor string (ARM/IBM for non-x86)."""
    family: Annotated[int, up_to(270, ge=0), at_most(270, "as a CPUID family")] = 0
    """CPUID family (family + extended family), as NCCL's topology XML wants it: at most
    15 + 255 (CPUID leaf 1 EAX: a 4-bit family and an 8-bit extended family)."""
    model: Annotated[int, up_to(255, ge=0), at_most(255, "as a CPUID model")] = 0
    """CPUID model (model + extended model << 4): at most 255 (two 4-bit fields)."""
    cores: CoreCount
    """Physical cores per socket."""
    threads_per_core: ThreadCount = 1
    """Hardware threads per core (2 with SMT/Hyper-Threading on)."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class NicModel(SpecModel):
    """A network adapter (one port is one link)."""

    name: Text
    """Marketing name, e.g. 'NVIDIA ConnectX-7 NDR 400G'."""
    link: LinkLayer
    """Link layer: InfiniBand or Ethernet (RoCE v2 runs on Ethernet)."""
    speed_gbps: SpeedGbps
    """Line rate of one port in Gb/s."""
    ports: NicCount = 1
    """Ports used per adapter."""
    pcie_gen: int = Field(default=4, ge=1, le=6)
    """PCIe generation of the host interface."""
    pcie_width: LaneCount = 16
    """PCIe lanes of the host interface."""
    max_power_w: Annotated[float, up_to(MAX_POWER_W, ge=0), at_most(MAX_POWER_W, "W")] = 25
    """Maximum power in watts (included in the server's figure; used for switches'
    optics budget)."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class PortBreakout(SpecModel):
    """One way to split a switch port: ``ports`` ports of ``speed_gbps`` each."""

    speed_gbps: SpeedGbps
    """Rate of each port of the split (400 for an 800G cage split in two)."""
    ports: Annotated[int, Field(ge=2, le=8)]
    """Ports one switch port becomes (the splitter cable's legs)."""


class SwitchModel(SpecModel):
    """A network switch."""

    name: Text
    """Marketing name, e.g. 'NVIDIA Quantum-2 QM9700'."""
    link: LinkLayer
    """InfiniBand or Ethernet."""
    ports: PortCount
    """Radix: usable ports at ``port_speed_gbps`` (QM9700: 64 x NDR 400G on 32 OSFP cages)."""
    port_speed_gbps: SpeedGbps
    """Speed of one port in Gb/s."""
    breakout: list[PortBreakout] = []
    """Port breakout: the lower rates one port splits into on a splitter cable (SN5600: 2 x
    400G or 4 x 200G on an 800G cage). Hosts whose ports all run at such a rate take one leg
    each, so a leaf holds that many times as many of them; none listed: each host port takes
    a whole port. Used on Ethernet fabrics, for splits that carry no more than the port."""
    cage_ports: Annotated[int, Field(ge=1, le=8)] = 1
    """Ports one physical cage carries at ``port_speed_gbps`` (QM9700: 2, its 64 NDR ports
    on 32 twin-port OSFP cages). The bill of materials buys one transceiver per cage: a
    twin-port transceiver serves two optical links. The ports stay the fabric's unit."""
    height_u: HeightU = 1
    """Rack units."""
    max_power_w: PowerW
    """Maximum power in watts, with active cables where the datasheet gives it."""
    psus: PsuCount = 2
    """Power supplies (1+1 redundant unless ``psus_required`` says otherwise)."""
    psus_required: PsuCount = 1
    """Power supplies needed to carry the maximum load."""
    weight_kg: WeightKg = 15.0
    """Weight in kg."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class PsuSpec(SpecModel):
    """A device's power supplies and their redundancy."""

    count: PsuCount
    """Number of power supplies (each one cord to a PDU outlet)."""
    rating_w: PowerW
    """Output rating of one supply in watts."""
    required: PsuCount
    """Supplies needed to carry the maximum draw (DGX H100: 4 of 6, i.e. 4+2)."""


class PowerShelfModel(SpecModel):
    """A rack power shelf: AC in from the PDUs, DC out to the rack's busbar (GB200 NVL72)."""

    name: Text
    """Marketing name."""
    capacity_w: PowerW
    """DC power the shelf delivers to the busbar, watts."""
    psus: PsuSpec
    """The shelf's rectifiers, each with its own AC input cord."""
    height_u: HeightU = 1
    """Rack units."""
    weight_kg: WeightKg = 20.0
    """Weight, kg."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class DriveModel(SpecModel):
    """A drive for Lustre targets: capacity and sequential rates as its maker states them."""

    name: Text
    """Marketing name, e.g. 'Samsung PM1653 15.36 TB'."""
    kind: DriveKind
    """NVMe, SAS or SATA SSD, or a hard disk."""
    capacity_tb: DriveTb
    """Capacity in decimal TB (10^12 bytes), as drive makers count it."""
    seq_read_mbs: DriveMbs
    """Sequential read rate of one drive, MB/s (10^6 bytes per second)."""
    seq_write_mbs: DriveMbs
    """Sequential write rate of one drive, MB/s."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class CoolantPoint(SpecModel):
    """A coolant's properties at one temperature."""

    temperature_c: float = Field(ge=-40, le=150)
    """Temperature, degrees C."""
    density_kg_m3: Annotated[float, up_to(25_000), at_most(25_000, "kg/m3")]
    """Density, kg/m3 (at most 25,000: denser than osmium, the densest element, 22,590)."""
    cp_kj_kg_k: Annotated[float, up_to(20), at_most(20, "kJ/(kg K)")]
    """Specific heat at constant pressure, kJ/(kg K) (at most 20: above hydrogen's 14.3, the
    highest of any substance; water's is 4.18)."""


class CoolantModel(SpecModel):
    """A liquid-loop coolant: density and specific heat by temperature."""

    name: Text
    """What the fluid is, e.g. 'Water' or 'Propylene glycol 25 % by mass'."""
    points: list[CoolantPoint] = Field(min_length=1)
    """Properties at rising temperatures; a loop takes them at its mean temperature,
    interpolated linearly (and held at the ends)."""
    source: Source
    """Where the numbers come from: handbook or datasheet, with the table."""


class NicSlot(SpecModel):
    """Adapters of one role in a platform."""

    role: NicRole
    """What the adapters carry: the compute fabric, storage, in-band management, or the BMC."""
    model: Name
    """Catalog NIC model."""
    count: NicCount = 1
    """Number of adapters (one compute-fabric port each, for rail counting)."""
    cage_ports: Annotated[int, Field(ge=1, le=8)] = 1
    """Ports of these adapters that share one physical cage on the chassis (DGX H100: its 8
    compute NDR ports on 4 twin-port OSFP cages): one transceiver per cage in the bill of
    materials. 1: a cage per port, as on a PCIe card."""


PciBusId = str
"""A PCI bus id as Linux prints it: lower-case hex ``DDDD:BB:DD.F``."""
_BUSID = r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"
# an interface name or netplan's glob of one, at most 15 characters: no '/', space or ':' and
# not '.' or '..' (the kernel's dev_valid_name refuses them; ':' marks an alias)
_NETDEV = r"^[A-Za-z0-9_*?\[\]-][A-Za-z0-9_.*?\[\]-]{0,14}$"


class PcieDevice(SpecModel):
    """One endpoint on the node's PCIe tree (a GPU or a NIC)."""

    kind: Literal["gpu", "nic"]
    """GPU or NIC."""
    index: Annotated[int, up_to(MAX_NICS - 1, ge=0), at_most(MAX_NICS - 1, "as a device index")]
    """GPU index, or NIC index among the compute NICs (its rail): below 64, the most GPUs and
    adapters of one role a node takes."""
    busid: PciBusId = Field(pattern=_BUSID)
    """PCI bus id as Linux prints it (lower-case hex); NICs with function 0, as NCCL looks
    them up."""
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]+$")
    """RDMA device name of a NIC (``mlx5_0``), for NCCL_IB_HCA."""
    netdev: str | None = Field(default=None, pattern=_NETDEV)
    """A compute NIC's network interface as the OS names it (``ip -br link``: ``enp24s0np0``),
    or a shell glob netplan matches it by (``enp24s0*``), up to 15 characters (Linux's
    IFNAMSIZ less its NUL). The playbook renames it to its rail's name (``rdma0``) by netplan's
    ``match``/``set-name``. Default: the systemd path name of its ``busid``
    (systemd.net-naming-scheme(7): ``en[P<domain>]p<bus>s<slot>``, then ``*``)."""


class PcieSwitch(SpecModel):
    """A PCIe switch under one NUMA node, with the devices behind it."""

    busid: PciBusId | None = Field(default=None, pattern=_BUSID)
    """Bus id of the switch's upstream port; default a fake, unused id ``ffff:ff:NN.0``
    numbered in layout order, as vendors' topology files do."""
    devices: list[PcieDevice] = Field(min_length=1)
    """GPUs and NICs behind this switch."""


class NumaNode(SpecModel):
    """One NUMA node (a socket, or a quarter of one with AMD NPS4) and its PCIe switches."""

    numaid: Annotated[int, up_to(MAX_SOCKETS * MAX_SOCKETS - 1, ge=0),
                      at_most(MAX_SOCKETS * MAX_SOCKETS - 1, "as a NUMA node id")]
    """NUMA node id as Linux numbers it: below 16 sockets x 16 NUMA nodes a socket."""
    switches: list[PcieSwitch] = Field(min_length=1)
    """PCIe switches attached to this node."""


class PcieLayout(SpecModel):
    """The node's PCIe/NUMA layout, for NCCL's topology XML."""

    numa_nodes: list[NumaNode] = Field(min_length=1)
    """NUMA nodes that host GPUs or NICs, in GPU order."""
    numa_per_socket: SocketCount = 1
    """NUMA nodes per socket (AMD NPS4: 4)."""
    cores_per_numa: CoreCount | None = None
    """Physical cores per NUMA node as the OS sees them (default: the node's cores spread
    evenly); set for VMs that expose fewer cores than the CPU has."""
    threads_per_core: ThreadCount | None = None
    """Hardware threads per core as the OS sees them (default: the node type's)."""
    gen: int = Field(default=5, ge=3, le=6)
    """PCIe generation of the GPU/NIC links."""
    link_width: LaneCount = 16
    """PCIe lanes of the GPU/NIC links."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class PlatformModel(SpecModel):
    """A server or compute-tray model: what a node type starts from."""

    name: Text
    """Marketing name."""
    kind: Literal["server", "compute-tray"] = "server"
    """A standalone server, or a tray of a rack-scale system (GB200 NVL72)."""
    gpu: Name | None = None
    """Catalog GPU model (None for CPU-only servers)."""
    gpu_count: GpuCount = 0
    """GPUs per node."""
    cpu: Name
    """Catalog CPU model."""
    sockets: SocketCount = 2
    """CPU sockets."""
    memory_gib: MemoryGib
    """Installed system memory in GiB."""
    nics: list[NicSlot] = []
    """Network adapters by role."""
    max_power_w: PowerW
    """Maximum power draw of the whole node in watts."""
    psus: PsuSpec | None = None
    """Power supplies; None for trays fed from the rack's power shelves and busbar."""
    height_u: HeightU = 1
    """Rack units."""
    weight_kg: WeightKg = 20.0
    """Weight in kg."""
    cooling: PlatformCooling = "air"
    """How the node sheds its heat: 'air' (fans; in an air rack, or a liquid rack's rear-door
    heat exchanger), 'liquid' (direct-to-chip cold plates: it needs a liquid rack), or
    'either' (made in both variants)."""
    drive_bays: SpareCount = 0
    """Drive bays for data drives (storage servers: Lustre targets take their drives from
    these); 0 when the platform holds no data drives."""
    drive_io_gbs: BandwidthGbs | None = None
    """Bandwidth between the drive bays and the host, GB/s: the drive controllers' (SAS HBAs')
    PCIe links, or the PCIe lanes wired to the NVMe bays. None: not a limit."""
    nvlink_domain: Literal["none", "board", "rack"] = "none"
    """NVLink reach: none, the node's own NVSwitch board, or a rack-scale domain (NVL72)."""
    nvlink_sharp: bool = False
    """The NVSwitches reduce in the switch (NVLink SHARP, NCCL's NVLS algorithms): third
    generation NVSwitch and later (HGX/DGX H100, H200, B200, GB200 NVL72); not on A100."""
    gpu_sockets: list[Annotated[int, up_to(MAX_SOCKETS - 1, ge=0),
                                at_most(MAX_SOCKETS - 1, "as a socket index")]] = []
    """CPU socket each GPU hangs off (PCIe root), for gres.conf Cores= affinity."""
    pcie: PcieLayout | None = None
    """PCIe layout for the NCCL topology XML."""
    rack_layout: list[RackSlots] = []
    """Compute trays of a rack-scale system (nvlink_domain 'rack'): the rack's slots from its
    lowest unit up, as the integrated rack is delivered (its NVLink spine fixes them); a rack
    of these trays places them, its NVLink switch trays and power shelves there. Empty: the
    devices stack from the bottom and the top like any other."""
    rack_layout_source: Source | None = None
    """Where the rack layout comes from (document and section)."""
    source: Source
    """Where the numbers come from: datasheet, standard or document (with the section)."""


class Catalog(SpecModel):
    """Hardware catalog entries; the spec's own entries add to (or replace) the built-in ones."""

    gpus: dict[Name, GpuModel] = {}
    """GPU models by key."""
    cpus: dict[Name, CpuModel] = {}
    """CPU models by key."""
    nics: dict[Name, NicModel] = {}
    """NIC models by key."""
    switches: dict[Name, SwitchModel] = {}
    """Switch models by key."""
    platforms: dict[Name, PlatformModel] = {}
    """Server and tray models by key."""
    power_shelves: dict[Name, PowerShelfModel] = {}
    """Rack power shelf models by key."""
    drives: dict[Name, DriveModel] = {}
    """Drive models (for Lustre targets) by key."""
    coolants: dict[Name, CoolantModel] = {}
    """Liquid-loop coolants by key."""
