"""The spec's string types: names, rack names, hostname patterns, environment variable names,
check codes, paths (plain, within given directories, mount points), interface names, free
text, hostlists and ratios.

Every string field uses the narrowest type that fits what reads it (Slurm, Ansible, file
names, DNS, the shell, NCCL). No string type holds a control character. Each violation is a
pydantic error of type ``spec_<kind>`` (spec/base.py's fail), which spec/parse.py turns into a
located diagnostic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from cluster_iac.spec.base import After, fail, no_control, shown
from cluster_iac.spec.limits import MAX_TEXT


def _validator(check: Callable[[str], None]) -> After:
    def validate(value: str) -> str:
        no_control(value)
        check(value)
        return value

    return After(validate)


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


_DOMAIN_PATTERN = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$"


def _check_domain(value: str) -> None:
    """Lower-case RFC 1123 labels joined by '.', at most 200 characters (room for a host label
    before it within DNS's 253)."""
    if len(value) > 200:
        fail("domain", f"domain {shown(value)} is {len(value)} characters long; at most 200")
    for label in value.split("."):
        problem = hostname_problem(label)
        if problem:
            fail("domain", f"domain {shown(value)}: label {shown(label)} {problem}",
                 _suggest(value.lower(), "a-z0-9.-", 200))


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


# Lines of host labels: what hostname_problem passes (1 to 63 characters, letters, digits and
# '-' inside), each line ended by a line break.
_HOST_LINES = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\n)*")


def hostnames_valid(values: Sequence[str]) -> bool:
    """Whether hostname_problem finds nothing in any of ``values``, decided by one scan of
    their text joined by line breaks (60,000 DNS names at 100,000 GPUs)."""
    text = "\n".join([*values, ""])  # each value followed by a line break
    return text.count("\n") == len(values) and _HOST_LINES.fullmatch(text) is not None


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


def _check_move_name(value: str) -> None:
    """A host name, or a hostname pattern (with a run of '#'): either end of a move."""
    if "#" in value:
        _check_hostname_pattern(value)
        return
    problem = hostname_problem(value)
    if problem is not None:
        fail("hostname", f"host name {shown(value)} {problem}",
             "a host name (gpu001) or a group's hostname pattern (gpu###)")


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


def within(*dirs: str, example: str) -> After:
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
MoveName = Annotated[str, _validator(_check_move_name),
                     _schema(pattern="^[a-z0-9-]*#*[a-z0-9-]*$", maxLength=63)]
"""A host name (gpu001) or a hostname pattern (gpu###): what a move renames."""
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
DomainName = Annotated[str, _validator(_check_domain),
                       _schema(pattern=_DOMAIN_PATTERN, maxLength=200)]
"""A DNS domain: lower-case labels joined by '.', e.g. 'cluster.example.org'."""
Ratio = Annotated[str, _validator(_check_ratio), _schema(pattern=r"^\d+(\.\d+)?:\d+(\.\d+)?$")]
"""A ratio of two positive numbers such as '1:1' or '2:1'."""
