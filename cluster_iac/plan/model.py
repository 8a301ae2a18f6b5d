"""Frozen dataclasses of the plan; the NVLink graph lives beside them as a networkx object."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from cluster_iac.base.errors import SpecPath
from cluster_iac.plan.kept import Lock
from cluster_iac.plan.node_types import NodeTypePlan
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
from cluster_iac.plan.switching import MlagPair, SwitchConfig
from cluster_iac.plan.wiring import FabricWiring, LinkMove

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
    # The management networks' aggregation and core pairs (compile/build_management.py)
    mlag_pairs: tuple[MlagPair, ...] = ()
    # Named networkx graphs: 'nvlink'. The fabrics are tables (fabric_wiring), each with its
    # graph on demand for what needs graph algorithms.
    graphs: dict[str, Any] = field(default_factory=dict)
    # 'compute' / 'storage' -> who is cabled to whom in the fabric: each device's tier, SU,
    # rail and the switches above it (plan/wiring.py); the cables are rows of ``cables``
    fabric_wiring: dict[str, FabricWiring] = field(default_factory=dict)
    # the switch-to-switch cables the lock held that the fabrics cannot keep, and why
    # (compile/fabric_links.py): what `cluster-iac changes` says it moves
    link_moves: tuple[LinkMove, ...] = ()
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
    # Ethernet fabric ('compute' / 'storage') -> its lossless RoCE QoS (plan/qos.py FabricQos)
    qos: dict[str, Any] = field(default_factory=dict)
    # Ethernet fabric -> GPU node -> its RoCE NICs on it by rail (plan/host_rails.py HostRail,
    # compile/plan_host_rails.py); empty before that pass and without a routed fabric
    rails: dict[str, dict[str, tuple[Any, ...]]] = field(default_factory=dict)
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
    # (compile/plan_cabling.py) every racked device and every cable
    # (``cables``, ``ports``)
    links: Links = field(default_factory=Links)
    devices: tuple[Device, ...] = ()
    cables: Cables = field(default_factory=Cables)
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
    # Ethernet fabric switch -> its configuration (plan/switching.py, compile/plan_switches.py)
    switch_configs: dict[str, SwitchConfig] = field(default_factory=dict)
    # management and BMC network switch -> its configuration, bridged (compile/plan_access.py)
    management_configs: dict[str, SwitchConfig] = field(default_factory=dict)
    # The boot path: DNS names, the boot server, MACs (plan/boot.py BootPlan), None before
    # compile/plan_boot.py
    boot: Any = None
    # Facts of delivered hardware the lock holds (serials, InfiniBand GUIDs: plan/facts.py
    # Facts), None before compile/plan_facts.py
    facts: Any = None
    # The validator's findings (Diagnostics), set after the checks so report.md can list them
    findings: tuple[Any, ...] = ()
    # Errors a pass found but compiled past (a rack too short for its devices: they are
    # stacked anyway), so that the checks still judge power, cooling and the fabric; the
    # compile raises them at its end (compile/__init__.py)
    deferred: tuple[Any, ...] = ()
    # The identities an earlier render allocated (cluster_iac/plan/kept.py Lock), which the
    # allocating passes keep; an empty Lock on a first render
    lock: Lock = field(default_factory=Lock)

    @property
    def ports(self) -> Ports:
        """Both ends of every cable: a view of ``cables``."""
        return Ports(self.cables)

    def nodes_by_role(self, role: str) -> tuple[Node, ...]:
        return tuple(node for node in self.nodes if node.role == role)

    @cached_property
    def compute_nodes(self) -> tuple[Node, ...]:
        """nodes_by_role("compute"), found once per plan (a plan is never changed: a pass
        makes a new one): report.md alone asked for it 49 times at 100,000 GPUs."""
        return self.nodes_by_role("compute")

    @cached_property
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
