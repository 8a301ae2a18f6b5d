"""The spec's vocabulary: the strict base model, string types, bounded numbers and limits.

Every string field uses the narrowest type that fits what reads it (Slurm, Ansible, file
names, DNS, the shell, NCCL). No string type holds a control character. Each violation is a
pydantic error of type ``spec_<kind>`` whose context carries the hint; spec/parse.py turns it
into a located diagnostic with the stable code of ``CODES``.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, WithJsonSchema
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from cluster_iac.base.text import control_character


def _describe_fields(schema: dict[str, Any], model: type) -> None:
    """Each property's description from its attribute docstring, read from the source when a
    JSON Schema is made. (pydantic's use_attribute_docstrings reads every model's source when
    the class is made: a fifth of `cluster-iac validate`'s start-up, for text only the schema
    shows.)"""
    properties = schema.get("properties", {})
    fields = getattr(model, "model_fields", {})
    for cls in reversed(model.__mro__):  # a subclass's docstring wins over its base's
        for name, doc in _attribute_docstrings(cls).items():
            if name not in properties or name not in fields:
                continue
            kind = fields[name].annotation
            # as pydantic does: a field that says what its model's docstring says says nothing
            if not (isinstance(kind, type) and inspect.getdoc(kind) == doc):
                properties[name]["description"] = doc


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal written right below its annotated assignment."""
    module = sys.modules.get(cls.__module__)
    if module is None or not cls.__module__.startswith("cluster_iac."):
        return {}
    tree = ast.parse(inspect.getsource(module))
    body = next((node.body for node in tree.body
                 if isinstance(node, ast.ClassDef) and node.name == cls.__name__), [])
    docs = {}
    for field, doc in zip(body, body[1:], strict=False):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)):
            docs[field.target.id] = inspect.cleandoc(doc.value.value)
    return docs


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, values are immutable, nothing is
    coerced (``count: true`` is not 1, ``"8"`` is not 8) and no number is infinite or NaN."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=_describe_fields,
        populate_by_name=False,
        strict=True,
        allow_inf_nan=False,
    )


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

CODES = {
    "control": "SPEC-CONTROL-CHAR",
    "name": "SPEC-NAME",
    "rack_name": "SPEC-NAME",
    "hostname": "SPEC-HOSTNAME",
    "path": "SPEC-PATH",
    "interface": "SPEC-INTERFACE",
    "text": "SPEC-TEXT",
    "hostlist": "SPEC-HOSTLIST",
    "ratio": "SPEC-RATIO",
    "limit": "SPEC-LIMIT",
    "env_name": "SPEC-ENV-NAME",
    "code": "SPEC-CODE",
}
"""pydantic error type ``spec_<kind>`` -> stable diagnostic code."""


def fail(kind: str, message: str, hint: str | None = None) -> NoReturn:
    """Raise the pydantic error of a string type; parse.py locates it."""
    raise PydanticCustomError(f"spec_{kind}", "{message}", {"message": message, "hint": hint or ""})


def shown(value: str) -> str:
    """A value quoted for a message, shortened when long."""
    return repr(value if len(value) <= 60 else value[:57] + "...")


def no_control(value: str) -> None:
    found = control_character(value)
    if found is not None:
        index, what = found
        fail("control", f"holds the control character {what} at position {index + 1}",
             "every spec string is one line of printable text; YAML's escapes (\"\\n\") and "
             "block scalars ('|', '>') make line breaks")


@dataclass(frozen=True)
class _After:
    """What pydantic's AfterValidator does for a function of the value alone, without its
    inspecting the function's signature at every field that uses the type (some 130 fields:
    a tenth of `cluster-iac validate`'s start-up)."""

    func: Callable[[Any], Any]

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.func, handler(source))


def _validator(check: Callable[[str], None]) -> _After:
    def validate(value: str) -> str:
        no_control(value)
        check(value)
        return value

    return _After(validate)


def _schema(**schema: Any) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", **schema})


# --- names -------------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?")
_HOST = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")


def _suggest(value: str, allowed: str, limit: int) -> str | None:
    fixed = re.sub(f"[^{allowed}]+", "-", value).strip("-_.")[:limit].strip("-_.")
    return f"did you mean '{fixed}'?" if fixed and fixed != value else None


def check_name(value: str) -> None:
    """Letters, digits, '-', '_' and '.', first a letter or digit, at most 63 characters: what a
    Slurm partition, feature or GRES type, an Ansible group (after '-'/'.' -> '_') and a file
    name can all carry."""
    if len(value) > 63:
        fail("name", f"{shown(value)} is {len(value)} characters long; a name has at most 63")
    if not _NAME.fullmatch(value):
        fail("name", f"{shown(value)} is not a name: letters, digits, '-', '_' and '.', "
             "starting with a letter or digit", _suggest(value, "A-Za-z0-9_.-", 63))


def check_rack_name(value: str) -> None:
    """A DNS label of at most 40 characters: devices are named after their rack
    ('bmc-<rack>-1', '<rack>-pdu-a', '<rack>-nvsw9') and must stay valid hostnames."""
    if len(value) > 40:
        fail("rack_name", f"rack name {shown(value)} is {len(value)} characters long; at most "
             "40, so that the switches and PDUs named after it stay within 63")
    if not _LABEL.fullmatch(value):
        fail("rack_name", f"rack name {shown(value)} is not a DNS label: letters, digits and "
             "'-', neither first nor last a '-'", _suggest(value, "A-Za-z0-9-", 40))


def hostname_problem(value: str) -> str | None:
    """Why ``value`` is not an RFC 1123 host label (lower case), or None."""
    if not value:
        return "is empty"
    if len(value) > 63:
        return f"is {len(value)} characters long; a host name label has at most 63 (RFC 1123)"
    if value.startswith("-") or value.endswith("-"):
        return "starts or ends with '-' (RFC 1123)"
    if not _HOST.fullmatch(value):
        return "holds a character other than lower-case letters, digits and '-'"
    return None


def _check_hostname_pattern(value: str) -> None:
    if "#" not in value:
        fail("hostname", f"hostname pattern {shown(value)} has no '#' for the node's index",
             f"e.g. '{value[:60]}##' makes {value[:60]}01, {value[:60]}02, ...")
    run = re.fullmatch(r"([a-z0-9-]*)(#+)([a-z0-9-]*)", value)
    if run is None:
        fail("hostname", f"hostname pattern {shown(value)} must be lower-case letters, digits "
             "and '-' around one run of '#' (the index)", "e.g. 'gpu-###' -> gpu-001")
    first = run[1] + "1".zfill(len(run[2])) + run[3]
    problem = hostname_problem(first)
    if problem is not None:
        fail("hostname", f"hostname pattern {shown(value)} gives host names such as "
             f"{shown(first)}, which {problem}")
    if not run[1]:
        fail("hostname", f"hostname pattern {shown(value)} makes all-digit host names",
             f"start it with a letter, e.g. 'n{value}'")


def _check_env_name(value: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", value):
        fail("env_name", f"{shown(value)} is not an environment variable name: letters, digits "
             "and '_', not starting with a digit", _suggest(value, "A-Za-z0-9_", 128))


def _check_code(value: str) -> None:
    if not re.fullmatch(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+", value):
        fail("code", f"{shown(value)} is not a check code (upper case words joined by '-')",
             "e.g. POWER-BREAKER")


# --- paths, interfaces, text -------------------------------------------------------------------


def _check_path(value: str) -> None:
    if not value.startswith("/"):
        fail("path", f"{shown(value)} is not an absolute path", f"did you mean '/{value}'?")
    parts = value.split("/")
    if ".." in parts:
        fail("path", f"{shown(value)} has a '..' component; give the path it resolves to")
    if len(value.encode()) > 4095 or any(len(p.encode()) > 255 for p in parts):
        fail("path", f"{shown(value)} is longer than Linux takes (4095 bytes, 255 a component)")
    if "\\" in value:
        fail("path", f"{shown(value)} holds a backslash", "POSIX paths separate with '/'")


def check_plain_path(value: str, extra: str = "") -> None:
    """Absolute, no '..', '.' or empty component, only letters, digits and . _ / - (and the
    ``extra`` characters): a path from the spec goes into root-run scripts and configuration
    files."""
    _check_path(value)
    if value != "/" and any(p in ("", ".") for p in value.split("/")[1:]):
        fail("path", f"{shown(value)} has an empty or '.' component; write the path plainly")
    if not re.fullmatch(f"/[A-Za-z0-9._/{re.escape(extra)}-]*", value):
        fail("path", f"{shown(value)} holds characters other than letters, digits and . _ / -")


def within(*dirs: str, example: str) -> _After:
    """Validates a plain absolute path (``check_plain_path``) inside one of ``dirs`` (each
    ending in '/'): the directories a file of its kind belongs in, so a spec cannot make a
    root-run script write or run a file elsewhere. Its schema: ``within_schema``."""
    def check(value: str) -> None:
        check_plain_path(value)
        if not value.startswith(dirs) or value in dirs:
            fail("path", f"{shown(value)} is not a file under {' or '.join(dirs)}",
                 f"e.g. '{example}'")

    return _validator(check)


def within_schema(*dirs: str) -> WithJsonSchema:
    alternatives = "|".join(re.escape(d) for d in dirs)
    return _schema(pattern=f"^({alternatives})[A-Za-z0-9._/-]+$", maxLength=255)


SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
               "/proc", "/root", "/run", "/sbin", "/sys", "/usr", "/var")
"""Directories of the operating system (Filesystem Hierarchy Standard 3.0, ch. 3): a file
system mounted on or under one would hide the system's own files."""


def _check_mount_point(value: str) -> None:
    check_plain_path(value)
    top = "/" + value.strip("/").split("/", 1)[0]
    if value == "/" or top in SYSTEM_DIRS:
        fail("path", f"{shown(value)} is {'the root' if value == '/' else 'under ' + top}, a "
             "directory of the operating system; mounting there hides the system's files",
             "e.g. '/lustre' or '/mnt/lustre'")


MountPoint = Annotated[str, _validator(_check_mount_point),
                       _schema(pattern="^/[A-Za-z0-9_./-]*$", maxLength=200)]
"""A mount point: a plain absolute path outside the operating system's directories."""


def _check_interface(value: str) -> None:
    if len(value.encode()) > 15:
        fail("interface", f"interface name {shown(value)} is {len(value.encode())} bytes long; "
             "Linux takes at most 15 (IFNAMSIZ 16 with the NUL)")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
        fail("interface", f"{shown(value)} is not an interface name: letters, digits, '_', '.' "
             "and '-' (Linux refuses '/', ':' and white space; NCCL_SOCKET_IFNAME reads ',', "
             "'^' and '=' as list syntax)", _suggest(value, "A-Za-z0-9_.-", 15))


def _check_text(value: str) -> None:
    if len(value) > MAX_TEXT:
        fail("text", f"text of {len(value)} characters; at most {MAX_TEXT}")


def _check_hostlist(value: str) -> None:
    if not value.strip():
        fail("hostlist", "the hostlist is empty", "name at least one, e.g. 'r[01-04]'")
    if len(value) > MAX_TEXT or not re.fullmatch(r"[A-Za-z0-9_.,\[\]/ -]+", value):
        fail("hostlist", f"{shown(value)} is not a hostlist: names, ranges in brackets and commas",
             "e.g. 'r[01-04],s01'")


def _check_ratio(value: str) -> None:
    match = re.fullmatch(r"(\d{1,6}(?:\.\d{1,6})?):(\d{1,6}(?:\.\d{1,6})?)", value)
    if match is None:
        fail("ratio", f"{shown(value)} is not a ratio", "write downlink:uplink, e.g. '2:1'")
    if float(match[1]) <= 0 or float(match[2]) <= 0:
        fail("ratio", f"ratio {shown(value)} has a zero side",
             "both sides are positive, e.g. '1:1'")


Name = Annotated[str, _validator(check_name), _schema(pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                                                         maxLength=63)]
"""A name used as a reference elsewhere in the spec (letters, digits, '-', '_', '.')."""
RackName = Annotated[str, _validator(check_rack_name),
                     _schema(pattern="^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$", maxLength=40)]
"""A rack name: a DNS label of at most 40 characters."""
HostnamePattern = Annotated[str, _validator(_check_hostname_pattern),
                            _schema(pattern="^[a-z0-9-]*#+[a-z0-9-]*$", maxLength=63)]
"""A host name with one run of '#' for the index."""
EnvName = Annotated[str, _validator(_check_env_name), _schema(pattern="^[A-Za-z_][A-Za-z0-9_]*$")]
"""An environment variable name (POSIX: letters, digits, '_')."""
CheckCode = Annotated[str, _validator(_check_code),
                      _schema(pattern="^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$")]
"""A check's stable code, e.g. POWER-BREAKER."""
AbsPath = Annotated[str, _validator(_check_path), _schema(pattern="^/", maxLength=4095)]
"""An absolute POSIX path without '..' components."""
InterfaceName = Annotated[str, _validator(_check_interface),
                          _schema(pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$", maxLength=15)]
"""A Linux network interface name."""
Text = Annotated[str, _validator(_check_text), _schema(maxLength=MAX_TEXT)]
"""Free text: one line, printable, at most 1,000 characters."""
Source = Annotated[str, Field(min_length=3), _validator(_check_text),
                   _schema(minLength=3, maxLength=MAX_TEXT)]
"""Where a catalog number comes from (datasheet, standard, document)."""
HostlistExpr = Annotated[str, _validator(_check_hostlist),
                         _schema(minLength=1, maxLength=MAX_TEXT)]
"""A hostlist expression such as ``r[01-04]`` or ``a01,a03``."""
Ratio = Annotated[str, _validator(_check_ratio), _schema(pattern=r"^\d+(\.\d+)?:\d+(\.\d+)?$")]
"""A ratio of two positive numbers such as '1:1' or '2:1'."""


# --- bounded numbers ---------------------------------------------------------------------------


def _at_most(maximum: float, what: str) -> _After:
    """A documented limit: SPEC-LIMIT beyond it."""

    def validate(value: Any) -> Any:
        if value > maximum:
            fail("limit", f"{_figure(value)} {what} is more than the limit of {maximum:,}",
                 "the limits (README, 'Limits') hold a 200,000-GPU cluster; a larger value "
                 "is a typo")
        return value

    return _After(validate)


def _figure(value: float) -> str:
    """1000000 -> '1,000,000'; 1e9 (a float) -> '1,000,000,000', not '1,000,000,000.0'."""
    return f"{value:,}" if isinstance(value, int) else f"{value:,.15g}"


def _limit(maximum: int, minimum: int = 1) -> Any:
    return Field(ge=minimum, json_schema_extra={"maximum": maximum})


def at_most(maximum: float, what: str) -> _After:
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
