"""The spec's documented limits (README, "Limits") and the bounded number types made of them:
counts, a node's own figures and physical quantities, each a SPEC-LIMIT error beyond its
maximum and with that maximum in the JSON Schema."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cluster_iac.spec.base import After, fail

# Documented limits (README, "Limits"). Each is far above a 200,000-GPU cluster and low enough
# that nothing is expanded before it is known to fit in memory and a few seconds.
MAX_NODES = 262_144
"""Nodes in one group, and in the whole cluster (200,000 one-GPU nodes fit)."""
MAX_RACKS = 65_536
"""Racks one hostlist names, and racks in the whole cluster."""
MAX_NAMES = 1_048_576
"""Names all the spec's hostlists write together, and places in all partitions together (a
node in four partitions at the largest size)."""
MAX_GPUS_PER_NODE = 64
MAX_NICS = 64
"""Adapters of one role in a node, and ports of one adapter."""
MAX_SWITCH_PORTS = 2_048
MAX_PSUS = 32
MAX_CIRCUITS = 64
"""Branch circuits (breakers) of one PDU."""
MAX_OUTLETS = 256
"""Outlets of one PDU."""
MAX_PER_RACK = 512
MAX_INDEX = 1_000_000_000
"""Largest first index of a hostname pattern."""
MAX_GPUS = 4_194_304
"""GPUs in a job size the policy names."""
MAX_TEXT = 1_000
"""Characters in a free-text field (a model name, a source citation)."""


# --- bounded numbers ---------------------------------------------------------------------------


def _at_most(maximum: float, what: str) -> After:
    """A documented limit: SPEC-LIMIT beyond it."""

    def validate(value: Any) -> Any:
        if value > maximum:
            fail("limit", f"{_figure(value)} {what} is more than the limit of {maximum:,}",
                 "the limits (README, 'Limits') hold a 200,000-GPU cluster; a larger value "
                 "is a typo")
        return value

    return After(validate)


def _figure(value: float) -> str:
    """1000000 -> '1,000,000'; 1e9 (a float) -> '1,000,000,000', not '1,000,000,000.0'."""
    return f"{value:,}" if isinstance(value, int) else f"{value:,.15g}"


def _limit(maximum: int, minimum: int = 1) -> Any:
    return Field(ge=minimum, json_schema_extra={"maximum": maximum})


def at_most(maximum: float, what: str) -> After:
    """A documented upper limit, for a field with its own lower bound: SPEC-LIMIT beyond it."""
    return _at_most(maximum, what)


def up_to(maximum: float, *, gt: float | None = 0, ge: float | None = None) -> Any:
    """The lower bound (above 0 unless told) and the JSON Schema's maximum of a limited field."""
    return Field(gt=gt if ge is None else None, ge=ge, json_schema_extra={"maximum": maximum})


NodeCount = Annotated[int, _limit(MAX_NODES), _at_most(MAX_NODES, "nodes")]
GpuCount = Annotated[int, _limit(MAX_GPUS_PER_NODE, 0), _at_most(MAX_GPUS_PER_NODE, "GPUs")]
NicCount = Annotated[int, _limit(MAX_NICS), _at_most(MAX_NICS, "adapters or ports")]
PortCount = Annotated[int, _limit(MAX_SWITCH_PORTS), _at_most(MAX_SWITCH_PORTS, "ports")]
PsuCount = Annotated[int, _limit(MAX_PSUS), _at_most(MAX_PSUS, "power supplies")]
CircuitCount = Annotated[int, _limit(MAX_CIRCUITS), _at_most(MAX_CIRCUITS, "circuits")]
OutletCount = Annotated[int, _limit(MAX_OUTLETS), _at_most(MAX_OUTLETS, "outlets")]
PerRack = Annotated[int, _limit(MAX_PER_RACK), _at_most(MAX_PER_RACK, "nodes per rack")]
FirstIndex = Annotated[int, _limit(MAX_INDEX, 0), _at_most(MAX_INDEX, "as the first index")]
JobGpus = Annotated[int, _limit(MAX_GPUS), _at_most(MAX_GPUS, "GPUs")]
UnitCount = Annotated[int, _limit(MAX_RACKS), _at_most(MAX_RACKS, "scalable units")]

# A node's own figures: past these a value is a typo, and a CPU layout this large would be
# expanded CPU by CPU (NCCL's affinity masks) before anything else could refuse it.
MAX_SOCKETS = 16
MAX_CORES = 1_024
"""Cores of one socket or one NUMA node (the largest CPUs have 288)."""
MAX_THREADS = 8
"""Hardware threads per core (SMT8 on POWER)."""
MAX_MEMORY_GIB = 65_536
MAX_POWER_W = 1_000_000
MAX_HEIGHT_U = 60
MAX_SPEED_GBPS = 100_000
MAX_LANES = 32
MAX_CPUS = MAX_SOCKETS * MAX_CORES * MAX_THREADS
"""CPUs (hardware threads) of one node, 131,072."""
MAX_SLURM_NUMBER = (1 << 64) - 1
"""A number in slurm.extra: Slurm reads slurm.conf numbers into fields of at most 64 bits."""
SocketCount = Annotated[int, _limit(MAX_SOCKETS), _at_most(MAX_SOCKETS, "sockets or NUMA nodes")]
CoreCount = Annotated[int, _limit(MAX_CORES), _at_most(MAX_CORES, "cores")]
ThreadCount = Annotated[int, _limit(MAX_THREADS), _at_most(MAX_THREADS, "threads per core")]
MemoryGib = Annotated[int, _limit(MAX_MEMORY_GIB), _at_most(MAX_MEMORY_GIB, "GiB")]
PowerW = Annotated[int, _limit(MAX_POWER_W), _at_most(MAX_POWER_W, "W")]
HeightU = Annotated[int, _limit(MAX_HEIGHT_U), _at_most(MAX_HEIGHT_U, "rack units")]
SpeedGbps = Annotated[int, _limit(MAX_SPEED_GBPS), _at_most(MAX_SPEED_GBPS, "Gb/s")]
LaneCount = Annotated[int, _limit(MAX_LANES), _at_most(MAX_LANES, "PCIe lanes")]
MAX_DRIVES = 1_024
"""Drives of one RAID group or one server's bays (the largest JBOD heads hold about 100)."""
MAX_TARGETS = 256
"""Lustre targets (MDTs or OSTs) one server serves (usual: 1-4 MDTs, 2-32 OSTs)."""
MAX_PUMPS = 64
DriveCount = Annotated[int, _limit(MAX_DRIVES), _at_most(MAX_DRIVES, "drives")]
SpareCount = Annotated[int, _limit(MAX_DRIVES, 0), _at_most(MAX_DRIVES, "drives")]
TargetCount = Annotated[int, _limit(MAX_TARGETS), _at_most(MAX_TARGETS, "targets per server")]
PumpCount = Annotated[int, _limit(MAX_PUMPS), _at_most(MAX_PUMPS, "pumps")]
MAX_CDUS = 64
"""CDUs joined on one secondary loop (an in-row pair or an N+1 set; a row holds a few)."""
CduCount = Annotated[int, _limit(MAX_CDUS), _at_most(MAX_CDUS, "CDUs")]

PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Fraction = Annotated[float, Field(gt=0, le=1)]

# Physical figures that drive no expansion, bounded so that a typo (or a hostile file) is a
# located error rather than a number no equipment has. Each limit is far above what exists.
MAX_FACILITY_KW = 10_000_000
"""10 GW: a site, a row, a CDU or a heat-rejection plant. A 200,000-GPU cluster draws about
300 MW with its cooling; the largest campuses announced are a few GW."""
MAX_RACK_KW = 10_000
"""10 MW a rack: the densest racks shipping draw about 130 kW (GB200 NVL72), those announced
for 2027 about 600 kW."""
MAX_WEIGHT_KG = 10_000
"""10 t: a rack with everything in it (racks are rated for 1.5-3 t), or one device."""
MAX_CURRENT_A = 6_300
"""6,300 A: the largest low-voltage air circuit breaker frames (IEC 60947-2); a PDU's
breakers are 16-125 A."""
MAX_VOLTAGE_V = 1_000
"""1,000 V: the top of low voltage (IEC 60038, the Low Voltage Directive 2014/35/EU), where
every PDU lives (240/415 V, 277/480 V)."""
MAX_FLOW_LPM = 1_000_000
"""1,000,000 L/min through one loop (a 2 MW CDU moves about 3,000)."""
MAX_BANDWIDTH_GBS = 10_000_000
"""10 PB/s: a link, a GPU's NVLink, a server's drives or a whole file system (the fastest
file systems deliver about 10 TB/s)."""
MAX_DRIVE_TB = 10_000
"""10 PB a drive (the largest SSDs hold about 250 TB)."""
MAX_DRIVE_MBS = 1_000_000
"""1 TB/s a drive (PCIe 6.0 x4 carries about 32 GB/s)."""
MAX_STORAGE_TB = 100_000_000
"""100 EB: a file system's capacity, or a checkpoint in GB (the largest file systems hold
a few hundred PB)."""
FacilityKw = Annotated[float, up_to(MAX_FACILITY_KW), _at_most(MAX_FACILITY_KW, "kW")]
RackKw = Annotated[float, up_to(MAX_RACK_KW), _at_most(MAX_RACK_KW, "kW")]
WeightKg = Annotated[float, up_to(MAX_WEIGHT_KG), _at_most(MAX_WEIGHT_KG, "kg")]
CurrentA = Annotated[float, up_to(MAX_CURRENT_A), _at_most(MAX_CURRENT_A, "A")]
VoltageV = Annotated[float, up_to(MAX_VOLTAGE_V), _at_most(MAX_VOLTAGE_V, "V")]
FlowLpm = Annotated[float, up_to(MAX_FLOW_LPM), _at_most(MAX_FLOW_LPM, "L/min")]
BandwidthGbs = Annotated[float, up_to(MAX_BANDWIDTH_GBS),
                         _at_most(MAX_BANDWIDTH_GBS, "GB/s")]
DriveTb = Annotated[float, up_to(MAX_DRIVE_TB), _at_most(MAX_DRIVE_TB, "TB")]
DriveMbs = Annotated[float, up_to(MAX_DRIVE_MBS), _at_most(MAX_DRIVE_MBS, "MB/s")]
StorageTb = Annotated[float, up_to(MAX_STORAGE_TB), _at_most(MAX_STORAGE_TB, "TB")]
