"""Parsers of the Lustre manual's syntax for the generated server and client files:
mkfs.lustre(8), mount.lustre(8), mdadm(8) --create, lctl set_param, fstab(5) and the YAML of
`lnetctl import`. Each raises SyntaxError on what the tool would refuse."""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML

NID = re.compile(r"^(?P<ip>\d+\.\d+\.\d+\.\d+)@(?P<net>(?:o2ib|tcp)(?:[1-9][0-9]*)?)$")
PARAM = re.compile(r"^(?P<name>[a-z_]+\.[A-Za-z0-9_*-]+\.[a-z_]+)=(?P<value>-?[0-9]+)$")
MKFS_VALUED = {"--fsname", "--index", "--mgsnode", "--servicenode", "--failnode",
               "--mkfsoptions", "--mountfsoptions", "--backfstype", "--param", "--comment",
               "--device-size"}
MKFS_FLAGS = {"--mgs", "--mdt", "--ost", "--reformat", "--dryrun", "--verbose", "--quiet"}


def nid(text: str) -> tuple[str, str]:
    """'10.3.0.15@o2ib' -> ('10.3.0.15', 'o2ib'): an IPv4 address on an LNet network; the
    network number 0 is never written (Lustre prints o2ib, not o2ib0)."""
    match = NID.match(text)
    if not match:
        raise SyntaxError(f"not a NID: {text!r}")
    ipaddress.IPv4Address(match.group("ip"))
    return match.group("ip"), match.group("net")


@dataclass
class Mkfs:
    """One mkfs.lustre command."""

    types: set[str]
    options: dict[str, list[str]] = field(default_factory=dict)
    device: str = ""


def parse_mkfs(words: list[str]) -> Mkfs:
    """mkfs.lustre {--ost|--mdt|--mgs} [options] device; --mgs may pair with one --mdt."""
    if words[0] != "mkfs.lustre" or len(words) < 3 or words[-1].startswith("-"):
        raise SyntaxError("usage: mkfs.lustre <target types> [options] <device>")
    out = Mkfs(types=set(), device=words[-1])
    for word in words[1:-1]:
        name, eq, value = word.partition("=")
        if name in MKFS_FLAGS and not eq:
            if name in ("--mgs", "--mdt", "--ost"):
                out.types.add(name[2:])
        elif name in MKFS_VALUED and eq and value:
            out.options.setdefault(name, []).append(value)
        else:
            raise SyntaxError(f"mkfs.lustre: unknown option or missing value {word!r}")
    if not out.types or "ost" in out.types and len(out.types) > 1:
        raise SyntaxError(f"mkfs.lustre: bad target types {sorted(out.types)}")
    if out.types & {"mdt", "ost"}:
        fsname = out.options.get("--fsname", [""])[0]
        if not 1 <= len(fsname) <= 8 or not re.fullmatch(r"[A-Za-z0-9_-]+", fsname):
            raise SyntaxError(f"mkfs.lustre: fsname {fsname!r}: 1-8 letters, digits, _ or -")
        if len(out.options.get("--index", [])) != 1:
            raise SyntaxError("mkfs.lustre: an MDT or OST takes one --index")
        int(out.options["--index"][0])
        if "mgs" not in out.types and not out.options.get("--mgsnode"):
            raise SyntaxError("mkfs.lustre: a target without the MGS needs --mgsnode")
    for value in out.options.get("--mgsnode", []) + out.options.get("--servicenode", []):
        for item in value.split(","):
            nid(item)
    for value in out.options.get("--mkfsoptions", []):
        match = re.fullmatch(r"-E stride=(\d+),stripe_width=(\d+)", value)
        if not match or int(match.group(2)) % int(match.group(1)):
            raise SyntaxError(f"mkfs.lustre: --mkfsoptions {value!r}: stripe_width must be a "
                              "multiple of stride")
    return out


def parse_mount(words: list[str]) -> tuple[str, str, list[str]]:
    """mount -t lustre [-o options] {device|mgsspec:/fsname} directory."""
    options: list[str] = []
    rest = list(words[1:])
    if words[0] != "mount" or rest[:2] != ["-t", "lustre"]:
        raise SyntaxError("usage: mount -t lustre [-o options] device directory")
    rest = rest[2:]
    if rest[:1] == ["-o"]:
        options = rest[1].split(",")
        rest = rest[2:]
    if len(rest) != 2 or not rest[1].startswith("/"):
        raise SyntaxError(f"mount: want a device and a directory, got {rest}")
    return rest[0], rest[1], options


def parse_mgsspec(text: str) -> tuple[list[list[str]], str]:
    """<mgsnode>[:<mgsnode>]:/<fsname>, <mgsnode> := <mgsnid>[,<mgsnid>] (mount.lustre(8))."""
    spec, sep, fsname = text.partition(":/")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_-]{1,8}", fsname):
        raise SyntaxError(f"not <mgsspec>:/<fsname>: {text!r}")
    nodes = [node.split(",") for node in spec.split(":")]
    for node in nodes:
        for item in node:
            nid(item)
    return nodes, fsname


@dataclass
class Mdadm:
    device: str
    level: str
    raid_devices: int
    spares: int
    chunk_kib: int | None
    members: list[str]


def parse_mdadm(words: list[str]) -> Mdadm:
    """mdadm --create md-device [--run] --level=L --raid-devices=N [--chunk=K]
    [--spare-devices=S] member-devices (N + S of them)."""
    if words[:2] != ["mdadm", "--create"] or not words[2].startswith("/dev/md/"):
        raise SyntaxError("usage: mdadm --create /dev/md/NAME [options] devices")
    opts: dict[str, str] = {}
    members = []
    for word in words[3:]:
        if word.startswith("--"):
            name, _, value = word.partition("=")
            opts[name] = value
        else:
            members.append(word)
    known = {"--run", "--level", "--raid-devices", "--chunk", "--spare-devices"}
    if set(opts) - known or opts.get("--level") not in ("0", "1", "5", "6", "10"):
        raise SyntaxError(f"mdadm: options {sorted(opts)}")
    out = Mdadm(device=words[2], level=opts["--level"], raid_devices=int(opts["--raid-devices"]),
                spares=int(opts.get("--spare-devices", "0")),
                chunk_kib=int(opts["--chunk"]) if "--chunk" in opts else None, members=members)
    if len(members) != out.raid_devices + out.spares or len(set(members)) != len(members):
        raise SyntaxError("mdadm: member count differs from raid-devices + spare-devices")
    if out.level == "1" and out.chunk_kib is not None:
        raise SyntaxError("mdadm: RAID 1 takes no chunk")
    if out.chunk_kib is not None and out.chunk_kib & (out.chunk_kib - 1):
        raise SyntaxError("mdadm: the chunk is a power of two")
    return out


def parse_set_param(words: list[str]) -> tuple[bool, str, int]:
    """lctl set_param [-P] name=value -> (persistent, name, value)."""
    if words[:2] != ["lctl", "set_param"]:
        raise SyntaxError("usage: lctl set_param [-P] name=value")
    persistent = words[2:3] == ["-P"]
    rest = words[3:] if persistent else words[2:]
    if len(rest) != 1 or not (match := PARAM.match(rest[0])):
        raise SyntaxError(f"lctl set_param: not name=value: {rest}")
    return persistent, match.group("name"), int(match.group("value"))


def commands(script: str) -> list[list[str]]:
    """The commands of a generated shell script: one per non-comment line, split as sh would
    split words (every line is a simple command: no pipes, no substitutions); the scripts'
    `set -eu` (stop at the first failing command, or an unset variable) is left out."""
    out = []
    for line in script.splitlines():
        if not line.strip() or line.startswith("#") or line == "set -eu":
            continue
        words = shlex.split(line)
        if any(w in (";", "&&", "||", "|", "&") for w in words):
            raise SyntaxError(f"not a simple command: {line}")
        out.append(words)
    return out


def parse_fstab(text: str) -> list[list[str]]:
    """fstab(5): comment lines, then six whitespace-separated fields per line."""
    rows = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
    for row in rows:
        if len(row) != 6 or row[2] != "lustre" or not row[1].startswith("/"):
            raise SyntaxError(f"fstab: {row}")
        parse_mgsspec(row[0])
    return rows


def parse_lnet(text: str) -> list[dict[str, Any]]:
    """The `lnetctl import` YAML: net: a list of {net type, local NI(s): [{interfaces:
    {0: name}}]}, as `lnetctl export` writes it."""
    data = YAML(typ="safe").load(text)
    if set(data) != {"net"}:
        raise SyntaxError(f"lnet: top-level keys {sorted(data)}")
    for net in data["net"]:
        if not re.fullmatch(r"(o2ib|tcp)([1-9][0-9]*)?", net["net type"]):
            raise SyntaxError(f"lnet: net type {net['net type']!r}")
        for ni in net["local NI(s)"]:
            if list(ni["interfaces"]) != [0] or not isinstance(ni["interfaces"][0], str):
                raise SyntaxError(f"lnet: interfaces {ni['interfaces']}")
    result: list[dict[str, Any]] = data["net"]
    return result
