"""Shared storage: Lustre servers and directory classes."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import (
    BandwidthGbs,
    DriveCount,
    SpareCount,
    StorageTb,
    TargetCount,
    at_most,
    up_to,
)
from cluster_iac.spec.strings import AbsPath, MountPoint, Name, check_plain_path

MAX_STRIPES = 2_000
"""Lustre's largest stripe count (LOV_MAX_STRIPE_COUNT; -1 stripes over every OST)."""
StripeCount = Annotated[int, up_to(MAX_STRIPES, ge=-1), at_most(MAX_STRIPES, "stripes")]
MAX_CHUNK_KIB = 1 << 20
"""1 GiB: a RAID chunk (mdadm's default is 512 KiB, ours at most 1 MiB / data drives)."""

AccessPattern = Literal["dataset", "checkpoint", "scratch", "home", "small-files"]
RaidLevel = Literal["raid0", "raid1", "raid5", "raid6", "raid10"]
LnetNetwork = Literal["storage", "compute", "management"]
InterfaceName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}$")]
"""A Linux network interface name (at most 15 characters, IFNAMSIZ - 1)."""
DevicePattern = Annotated[str, StringConstraints(
    pattern=r"^/dev/[A-Za-z0-9_./:-]*\{n\}[A-Za-z0-9_./:-]*$", max_length=200),
    AfterValidator(lambda value: check_plain_path(value, extra="{}:") or value)]
"""A block device path under /dev with '{n}' where the drive's slot number goes, e.g.
'/dev/nvme{n}n1': no '..', '.' or empty component (it goes into root-run mdadm commands)."""


class LayoutComponent(SpecModel):
    """One progressive-file-layout component (``lfs setstripe -E``)."""

    end: str
    """Component end: a size such as '64M' or '1G', or 'eof' for the last one."""
    stripe_count: StripeCount
    """Stripe count (-1 = all OSTs)."""
    stripe_size: str = "1M"
    """Stripe size, a multiple of 64K."""
    on_mdt: bool = False
    """Data-on-MDT: keep this (first) component on the metadata target (``-L mdt``)."""


class DirectoryClass(SpecModel):
    """A directory tree with one access pattern."""

    path: AbsPath
    """Absolute path on the client (under the Lustre mount)."""
    pattern: AccessPattern
    """How jobs use it; picks the default layout."""
    stripe_count: StripeCount | None = None
    """Override: plain stripe count (-1 = all OSTs)."""
    stripe_size: str | None = None
    """Override: stripe size, e.g. '4M'."""
    components: list[LayoutComponent] | None = None
    """Override: explicit progressive file layout."""


class TargetDevices(SpecModel):
    """The drives of one Lustre target (MGT, MDT or OST) and how they are joined (Linux md RAID,
    ldiskfs on top): one RAID group per target, drives taken from the server's bays."""

    drive: Name
    """Catalog drive model (catalog.drives)."""
    drives: DriveCount
    """Drives in the target's RAID group, parity or mirror drives included (RAID-6 8+2: 10)."""
    raid: RaidLevel = "raid6"
    """RAID level: raid6 (two parity drives, the usual OST), raid10 (the usual MDT), raid1
    (the usual MGT), raid5, or raid0 (no redundancy)."""
    spares: SpareCount = 0
    """Hot spares kept beside the group (mdadm --spare-devices), taken from the same bays."""
    chunk_kib: Annotated[int, up_to(MAX_CHUNK_KIB), at_most(MAX_CHUNK_KIB, "KiB")] | None = None
    """RAID chunk size, KiB; default: 1 MiB / data drives, so that one Lustre 1 MiB RPC fills
    a full stripe (RAID 5/6), or 128 KiB (mdadm's default) for mirrors."""


class RaidEngine(SpecModel):
    """What computes the OSTs' RAID parity on each OSS: the servers' CPUs (Linux md, which the
    generated setup builds), a hardware RAID controller, or a declustered RAID engine."""

    kind: Literal["software", "hardware", "declustered"] = "software"
    """software: Linux md on the server's cores (the bound derives from the CPU's cores and a
    published per-core parity rate); hardware or declustered: the figures below, which
    replace that term."""
    write_gbs: BandwidthGbs | None = None
    """hardware or declustered: sustained full-stripe write one server's engine sustains,
    GB/s (the vendor's figure). Required for those kinds, not allowed for software."""
    read_gbs: BandwidthGbs | None = None
    """hardware or declustered: sustained read through one server's engine, GB/s (default:
    not a limit). Not allowed for software."""


class Lnet(SpecModel):
    """The LNet network Lustre runs on."""

    network: LnetNetwork | None = None
    """Which network carries Lustre: the storage fabric (networks.storage addresses), the
    compute fabric (networks.ipoib addresses) or the management network. Default: the storage
    fabric when there is one, else the compute fabric, else the management network."""
    net: str | None = Field(default=None, pattern=r"^(o2ib|tcp)[0-9]{0,4}$")
    """LNet network name: o2ib<n> on InfiniBand or RoCE (ko2iblnd), tcp<n> on Ethernet
    (ksocklnd). Default o2ib0 or tcp0 as the network's link layer says."""
    interfaces: dict[Name, list[InterfaceName]] = {}
    """Interfaces LNet uses, by node type (several: LNet multi-rail). Default: the network's
    ``interface``."""


class Lustre(SpecModel):
    """A Lustre file system: its servers and their targets, LNet, clients and layouts."""

    fsname: str = Field(pattern=r"^[A-Za-z0-9_-]+$", max_length=63)
    """File system name: letters, digits, '_' and '-', at most 8 characters (mkfs.lustre)."""
    mount: MountPoint = "/lustre"
    """Client mount point."""
    mds_group: Name | None = None
    """Node group of the metadata servers (role lustre_mds); the first runs the MGS."""
    oss_group: Name | None = None
    """Node group of the object storage servers (role lustre_oss)."""
    mdts_per_mds: TargetCount = 1
    """MDTs each MDS serves."""
    osts_per_oss: TargetCount = 2
    """OSTs each OSS serves."""
    mgt: TargetDevices | None = None
    """The MGS's own target on the first MDS; without it the MGS shares MDT0's device
    (mkfs.lustre --mgs --mdt)."""
    mdt: TargetDevices | None = None
    """Drives and RAID of each MDT."""
    ost: TargetDevices | None = None
    """Drives and RAID of each OST: the aggregate bandwidth and capacity derive from them."""
    ost_indices: list[int] | None = Field(default=None, max_length=65536)
    """OST index of each OST, in server order (default 0, 1, 2, ...): set it to keep the
    indices of an existing file system. Each 0-65535, each once."""
    drive_path: DevicePattern | None = None
    """Device path of a server's drive slot n (0-based), e.g. '/dev/nvme{n}n1' (the default
    for NVMe drives) or '/dev/disk/by-vdev/d{n}' (the default for SAS and SATA drives: names
    from /etc/vdev_id.conf, stable across reboots)."""
    lnet: Lnet = Lnet()
    """LNet network, name and interfaces."""
    raid_engine: RaidEngine = RaidEngine()
    """What computes the OSTs' parity on each OSS: its term joins the write (and read) bound."""
    read_gbs: BandwidthGbs | None = None
    """Measured aggregate sustained read bandwidth, GB/s: it may only narrow the bound derived
    from the drives, servers' NICs, fabric and clients' NICs (a larger figure is an error)."""
    write_gbs: BandwidthGbs | None = None
    """Measured aggregate sustained write bandwidth, GB/s (at most the derived bound)."""
    capacity_tb: StorageTb | None = None
    """Usable capacity stated by the vendor, TB (at most what the OSTs' data drives hold)."""
    directories: list[DirectoryClass] = []
    """Directory classes and their layouts."""


class Storage(SpecModel):
    """Shared storage."""

    lustre: Lustre | None = None
    """The Lustre file system."""
