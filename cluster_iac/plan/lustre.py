"""Lustre as the plan_lustre pass derives it: layouts, servers, targets, LNet, bandwidth."""

from __future__ import annotations

from dataclasses import dataclass

from cluster_iac.base.errors import SpecPath


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class StripeComponent:
    """One layout component: a byte range of the file and how it is striped."""

    start: int  # bytes
    end: int | None  # bytes; None = end of file
    stripe_count: int  # -1 = all OSTs, 0 = file system default
    stripe_size: int  # bytes
    on_mdt: bool = False  # Data-on-MDT component


@dataclass(frozen=True, eq=False, repr=False)
class DirectoryLayout:
    """The default layout of one directory tree."""

    path: str
    pattern: str
    reason: str
    components: tuple[StripeComponent, ...]
    spec_path: SpecPath

    @property
    def composite(self) -> bool:
        """A progressive file layout (``-E`` components) rather than a plain one."""
        return len(self.components) > 1 or self.components[0].on_mdt


@dataclass(frozen=True, eq=False, repr=False)
class LustrePlan:
    """A Lustre file system and its directory layouts."""

    fsname: str
    mount: str
    oss_count: int | None
    ost_count: int | None  # None when no OSS group is declared
    directories: tuple[DirectoryLayout, ...]
    spec_path: SpecPath
    hardware: LustreServers | None = None  # servers, LNet and derived figures


@dataclass(frozen=True, eq=False, repr=False)
class LustreTarget:
    """One Lustre target (MGT, MDT or OST): its RAID group of drives and what it holds."""

    kind: str  # 'mgt' | 'mdt' | 'ost'
    index: int  # MDT or OST index (0 for the MGT)
    label: str  # target name: 'MGS', '<fsname>-MDT0000', '<fsname>-OST000a'
    server: str  # hostname of the server that mounts it
    device: str  # the md RAID device mkfs.lustre formats, '/dev/md/<label>'
    members: tuple[str, ...]  # drive device paths in the RAID group
    spares: tuple[str, ...]  # hot spares
    raid: str  # 'raid0' | 'raid1' | 'raid5' | 'raid6' | 'raid10'
    chunk_kib: int | None  # RAID chunk (None for raid1, which has none)
    data_drives: float  # drives' worth of data in the group (raid6 n-2, raid10 n/2, ...)
    drive: str  # catalog drive key
    read_gbs: float  # sequential read of the group, GB/s
    write_gbs: float  # sequential full-stripe write of the group, GB/s
    capacity_tb: float  # usable capacity, TB
    with_mgs: bool = False  # MDT0 that also holds the MGS (mkfs.lustre --mgs --mdt)

    @property
    def stripe_kib(self) -> int | None:
        """Full stripe: chunk x data drives (RAID 5/6), the unit a write must fill to skip
        reading parity first."""
        if self.chunk_kib is None or self.raid not in ("raid5", "raid6"):
            return None
        return int(self.chunk_kib * self.data_drives)


@dataclass(frozen=True, eq=False, repr=False)
class LustreServer:
    """An MDS or OSS, its NID on the LNet network and its targets."""

    hostname: str
    role: str  # 'mds' | 'oss'
    node_type: str
    nid: str | None  # '<address>@<net>'; None without an address on the LNet network
    nic_gbs: float  # NIC bandwidth the server has on the LNet network, GB/s
    drive_io_gbs: float | None  # the platform's drive controllers' limit, GB/s
    targets: tuple[LustreTarget, ...]


@dataclass(frozen=True, eq=False, repr=False)
class Bandwidth:
    """Aggregate bandwidth of one direction, GB/s: each term and the bound they make."""

    drives: float | None  # sum over OSSs of min(OST groups, drive controllers); None: no OST drives
    raid: float | None  # the OSSs' RAID engines (plan/raid_engine.py); None: not a limit
    engine: str  # what computes parity: 'software, 2 core(s) per server', 'hardware', ...
    server_nics: float  # the OSSs' NICs on the LNet network
    client_nics: float  # the compute nodes' NICs on the LNet network
    fabric: float | None  # max flow from every OSS port to every client port; None: no graph
    bound: float  # max flow with the drives as sources: never above any term
    limit: str  # the term that sets the bound ('drives', 'RAID engine', 'server NICs', ...)
    claimed: float | None  # the spec's measured figure
    spec_key: str  # 'read_gbs' | 'write_gbs'

    @property
    def effective(self) -> float:
        """What checks and checkpoints use: the bound, narrowed by a smaller measured figure."""
        return min(self.bound, self.claimed) if self.claimed else self.bound


@dataclass(frozen=True, eq=False, repr=False)
class LnetPlan:
    """The LNet network: its name, which network carries it, interfaces and NIDs."""

    net: str  # 'o2ib0', 'tcp0', ...
    network: str  # 'storage' | 'compute' | 'management' (fabric or management network)
    ip_network: str  # networks.<...> that the NIDs' addresses come from
    interfaces: dict[str, tuple[str, ...]]  # node type -> interfaces
    mgs_nids: tuple[str, ...]  # NIDs of the MGS (its server's)
    clients: tuple[str, ...]  # compute and login nodes, which mount the file system
    unreachable: dict[str, str]  # host -> why it cannot reach every server
    missing_nid: tuple[str, ...]  # servers and clients with no address on the network
    spec_path: SpecPath


@dataclass(frozen=True, eq=False, repr=False)
class LustreServers:
    """Servers, targets, LNet, and what the hardware gives: bandwidth and capacity."""

    servers: tuple[LustreServer, ...]
    lnet: LnetPlan
    read: Bandwidth
    write: Bandwidth
    capacity_tb: float | None  # usable, from the OSTs' data drives; None without OST drives
    raw_tb: float | None  # every OST drive, parity and spares included

    @property
    def targets(self) -> tuple[LustreTarget, ...]:
        return tuple(t for s in self.servers for t in s.targets)
