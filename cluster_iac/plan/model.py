"""Frozen dataclasses of the plan; the NVLink graph lives beside them as a networkx object."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, NamedTuple, TypeVar, cast

from cluster_iac.base.errors import CompileError, SpecPath
from cluster_iac.plan.kept import Lock
from cluster_iac.plan.physical import Cables, Device, Links, Ports
from cluster_iac.plan.power_tables import (
    PduLoad,
    PowerCircuit,
    PowerCord,
    PowerDevice,
    PowerFeed,
    PowerLine,
    PowerOutage,
)
from cluster_iac.plan.wiring import FabricWiring

# The plan's records, here and in the other plan/ and compile/ modules, are dataclasses
# without the __eq__, __hash__ and __repr__ that @dataclass would write (eq=False,
# repr=False): nothing compares, hashes or prints them (the test suite, probed, calls none of
# them), and on Python 3.11 each generated method is compiled from source when its module
# loads. They were 5 % of the instructions of `cluster-iac validate` on a small spec (82 M of
# 1,502 M, valgrind). A record equals only itself; vars(record) shows its fields. The busbw
# model's Estimate keeps its __eq__ (its tests compare estimates).
# Records made by the thousand before the emitter worker forks (switches, placements, board
# NVLink domains) are named tuples, as plan/physical.py's rows: made in a third of a frozen
# dataclass's time (which sets each field with object.__setattr__), equal by value, changed
# with _replace; a field read costs some 10 ns more.


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


@dataclass(frozen=True, eq=False, repr=False)
class Rack:
    """One rack on the floor."""

    name: str
    row: str
    position: int
    height_u: int
    max_power_kw: float | None
    max_weight_kg: float | None
    cooling: str
    liquid_capacity_kw: float | None
    pdu_profile: str
    spec_path: SpecPath
    in_rack_cdu: bool = False  # its own CDU: a path for its heat without a cooling loop


@dataclass(frozen=True, eq=False, repr=False)
class Row:
    """A row of racks."""

    name: str
    racks: tuple[str, ...]
    max_power_kw: float | None
    spec_path: SpecPath


@dataclass(frozen=True, eq=False, repr=False)
class Node:
    """One host."""

    hostname: str
    group: str
    role: str
    node_type: str
    rack: str
    index: int
    spec_path: SpecPath


class Switch(NamedTuple):
    """A switch of any network (compute/storage fabric, management, BMC, NVLink tray): 7,200
    of them at 100,000 GPUs."""

    name: str
    model: str  # catalog switch key
    network: str  # 'compute' | 'storage' | 'management' | 'bmc' | 'nvlink'
    tier: str  # 'leaf' | 'spine' | 'core' | 'access' | 'aggregation' | 'nvswitch-tray'
    rack: str
    ports: int
    port_speed_gbps: int
    height_u: int
    max_power_w: int
    psu_count: int
    psu_required: int
    weight_kg: float
    spec_path: SpecPath

    @staticmethod
    def figures(entry: Any, spec_path: SpecPath) -> tuple[Any, ...]:
        """The fields after ``rack``, from the catalog's entry of the model: the same for
        every switch of a model, made once per model and tier by the builders."""
        return (entry.ports, entry.port_speed_gbps, entry.height_u, entry.max_power_w,
                entry.psus, entry.psus_required, entry.weight_kg, spec_path)


class Placement(NamedTuple):
    """Where a device sits: rack and lowest rack unit (1-based); 0U devices have height 0:
    one per racked device, 35,000 of them at 100,000 GPUs."""

    rack: str
    u: int
    height_u: int


@dataclass(frozen=True, eq=False, repr=False)
class FabricPlan:
    """Summary of one built fabric ('compute' or 'storage'); plan.fabric_wiring has who is cabled
    to whom, plan.cables every cable."""

    network: str  # 'compute' | 'storage'
    technology: str  # 'infiniband' | 'roce' | 'ethernet'
    design: str  # 'rail-optimized' | 'plain' | 'single-switch'
    tiers: int  # 1: leaves only, 2: leaf-spine, 3: leaf-spine-core
    link_speed_gbps: int  # switch port speed
    scalable_unit_nodes: int  # nodes per scalable unit
    scalable_units: int
    switch_counts: dict[str, int]  # tier -> switches ('leaf', 'spine', 'core')
    link_counts: dict[str, int]  # 'node-leaf' | 'leaf-spine' | 'spine-core' -> cables
    # tier -> (downlink Gb/s, uplink Gb/s) of the busiest switch of that tier; 'leaf' always,
    # 'spine' when there is a core tier.
    tier_bandwidth_gbps: dict[str, tuple[int, int]]
    spare_ports: int  # unused switch ports over the whole fabric (a split cage is one)
    spec_path: SpecPath
    # host ports one leaf port carries: 2 when 400G hosts split 800G cages (port breakout)
    breakout_legs: int = 1

    def oversubscription(self, tier: str) -> float:
        """Downlink:uplink bandwidth ratio of a tier (1.0 = non-blocking; inf without uplinks)."""
        down, up = self.tier_bandwidth_gbps.get(tier, (0, 0))
        return down / up if up else (0.0 if not down else float("inf"))


class NvlinkDomain(NamedTuple):
    """GPUs joined by NVLink: one HGX/DGX board (12,500 at 100,000 GPUs), or a rack-scale
    domain such as GB200 NVL72."""

    name: str
    kind: str  # 'board' | 'rack'
    nodes: tuple[str, ...]
    gpus: int
    gpu_bandwidth_gbs: float  # NVLink bandwidth of each GPU, one direction, GB/s
    switch_trays: tuple[str, ...] = ()  # NVLink switch trays (rack domains)


@dataclass(frozen=True, eq=False, repr=False)
class PartitionPlan:
    """A Slurm partition with its nodes."""

    name: str
    nodes: tuple[str, ...]
    default: bool
    max_time: str
    priority_tier: int
    exclusive: bool
    spec_path: SpecPath


Made = TypeVar("Made")


class OnFirstUse(Generic[Made]):
    """A value made the first time it is asked for, then kept.

    Why this form: the plan is frozen and every pass (and the findings) makes a new copy with
    dataclasses.replace, which copies each field's reference. A field holding this one object
    is shared by every copy, so the value is made at most once, by whichever copy and process
    asks first. ``functools.cached_property`` would cache per copy (made again after each
    replace), and a field holding a bare function would turn every reader's ``plan.cables``
    into a call; a property over this field keeps the readers as they are, and mypy sees the
    value's type.
    """

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Made]) -> None:
        self._make: Callable[[], Made] | None = make
        self._value: Made | None = None

    @classmethod
    def made(cls, value: Made) -> OnFirstUse[Made]:
        """One that holds ``value`` already."""
        held = cls(lambda: value)
        held.get()
        return held

    @property
    def is_made(self) -> bool:
        return self._make is None

    def get(self) -> Made:
        """The value, made now if it was not yet (an exception leaves it unmade)."""
        if self._make is not None:
            self._value = self._make()
            self._make = None
        return cast(Made, self._value)

    def __repr__(self) -> str:
        return f"OnFirstUse({self._value!r})" if self._make is None else "OnFirstUse(<not made>)"


@dataclass(frozen=True, eq=False, repr=False)
class Plan:
    """Everything the cluster is, expanded; each compile pass returns a new Plan."""

    cluster: Any  # ClusterInfo
    catalog: Any  # Catalog (built-in merged with the spec's)
    settings: Any  # the spec's policy-like sections (slurm, power, cooling, storage, ...)
    node_types: dict[str, NodeTypePlan] = field(default_factory=dict)
    rows: tuple[Row, ...] = ()
    racks: tuple[Rack, ...] = ()
    nodes: tuple[Node, ...] = ()
    partitions: tuple[PartitionPlan, ...] = ()
    switches: tuple[Switch, ...] = ()
    # Named networkx graphs: 'nvlink'. The fabrics are tables (fabric_wiring), each with its
    # graph on demand for what needs graph algorithms.
    graphs: dict[str, Any] = field(default_factory=dict)
    # 'compute' / 'storage' -> who is cabled to whom in the fabric: each device's tier, SU,
    # rail and the switches above it (plan/wiring.py); the cables are rows of ``cables``
    fabric_wiring: dict[str, FabricWiring] = field(default_factory=dict)
    # device name -> Placement (nodes, switches, PDUs, power shelves)
    placements: dict[str, Placement] = field(default_factory=dict)
    # network name ('management', 'bmc', 'ipoib', 'storage') -> device name -> IPv4 address
    addresses: dict[str, dict[str, str]] = field(default_factory=dict)
    # 'compute' / 'storage' -> summary of the built fabric (wiring in fabric_wiring[...])
    fabrics: dict[str, FabricPlan] = field(default_factory=dict)
    # NVLink domains, rack-scale ones first named by rack
    nvlink_domains: tuple[NvlinkDomain, ...] = ()
    # GPU node type -> its NCCL environment (plan/nccl.py NcclNodeType)
    nccl: dict[str, Any] = field(default_factory=dict)
    # The power chain as flat tables (build_power, plan/power_tables.py): PDUs and power
    # shelves, every cord (with its line, outlet and draws), the feeds, the circuits, each
    # circuit line with its current in every case, each PDU's worst case, the devices that a
    # single failure takes down, and each rack's load
    power_devices: tuple[PowerDevice, ...] = ()
    power_cords: Sequence[PowerCord] = ()
    power_feeds: tuple[PowerFeed, ...] = ()
    power_circuits: Sequence[PowerCircuit] = ()
    power_lines: Sequence[PowerLine] = ()
    power_pdus: Sequence[PduLoad] = ()
    power_outages: Sequence[PowerOutage] = ()
    rack_loads_w: dict[str, float] = field(default_factory=dict)
    # The physical layer as flat tables (plan/physical.py): the network builders' links, then
    # (compile/plan_cabling.py) every racked device, and the cable table made on first use
    # (``cables``, ``ports``)
    links: Links = field(default_factory=Links)
    devices: tuple[Device, ...] = ()
    cabling: OnFirstUse[Cables] = field(default_factory=lambda: OnFirstUse.made(Cables()))
    # What makes ``cabling`` from a placed plan (compile/plan_cabling.py planned_cables), for
    # cords_cabled: a family that needs a few power cords' rows does not make the whole table
    cable_planner: Callable[[Plan], Cables] | None = None
    # Slurm: the targeted release, topology and checked slurm.extra (plan/slurm.py SlurmPlan)
    slurm: Any = None
    # The Lustre file system's directory layouts (plan/lustre.py LustrePlan), None without Lustre
    lustre: Any = None
    # Accounting, priority, QOS, accounts, partition defaults and the node health check
    # (plan/scheduling.py SchedulingPlan)
    scheduling: Any = None
    # Multi-node NVLink: the IMEX domains and Slurm's channels (plan/imex.py ImexPlan), None
    # when no job spans the nodes of a rack-scale NVLink domain
    imex: Any = None
    # The validator's findings (Diagnostics), set after the checks so report.md can list them
    findings: tuple[Any, ...] = ()
    # The identities an earlier render allocated (cluster_iac/plan/kept.py Lock), which the
    # allocating passes keep; an empty Lock on a first render
    lock: Lock = field(default_factory=Lock)

    @property
    def cables(self) -> Cables:
        """Every cable (compile/plan_cabling.py), made the first time any copy of this plan
        is asked: only the cabling files and NetBox's cables read it (emit.CABLED), and with
        two processes (emit/parallel.py) it is made in the worker that renders them, beside
        the checks.
        A cable no medium carries raises CompileError here."""
        return self.cabling.get()

    def cords_cabled(self, cords: Iterable[int]) -> Cables:
        """The cable table's rows of these power cords (by index in power_cords, each once),
        in that order, planned by themselves: a cord's row depends only on the cord and the devices
        at its two ends (the PSU's rating, where the device and the PDU sit in their rack),
        so it is the row the whole table holds, at a fraction of its cost (the NetBox device
        types need a few cords' media in a process that does not make the table). When one
        of them has no medium, the whole table is made (here, on that path only), so that
        its CompileError is the table's: the first cable no medium carries, as validate says."""
        if self.cable_planner is None:
            raise ValueError("the plan's devices are not placed yet (compile/plan_cabling.py)")
        chosen = tuple(map(self.power_cords.__getitem__, cords))
        ends = {name for cord in chosen for name in (cord.device, cord.pdu)}
        try:
            return self.cable_planner(replace(
                self, links=Links(), power_cords=chosen,
                devices=tuple(d for d in self.devices if d.name in ends)))
        except CompileError:
            self.cables  # noqa: B018  # raises the table's own error
            raise

    @property
    def ports(self) -> Ports:
        """Both ends of every cable: a view of ``cables``."""
        return Ports(self.cables)

    def nodes_by_role(self, role: str) -> tuple[Node, ...]:
        return tuple(node for node in self.nodes if node.role == role)

    @property
    def compute_nodes(self) -> tuple[Node, ...]:
        return self.nodes_by_role("compute")

    @property
    def gpu_count(self) -> int:
        return sum(self.node_types[n.node_type].gpu_count for n in self.compute_nodes)


@dataclass(frozen=True, eq=False, repr=False)
class Settings:
    """The spec's settings sections, validated and frozen, for passes, checks and emitters."""

    slurm: Any
    power: Any
    cooling: Any
    fabric: Any
    networks: Any
    storage: Any
    workload: Any
    policy: Any
    reliability: Any
    cost: Any

    @classmethod
    def from_spec(cls, spec: Any) -> Settings:
        return cls(**{name: getattr(spec, name) for name in cls.__dataclass_fields__})
