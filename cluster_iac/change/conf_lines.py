"""Read rendered slurm.conf, gres.conf and Lustre server scripts back into comparable records.

Only what the change actions need: slurm.conf's global keys (case-insensitive, as Slurm reads
them), each node's attributes (NodeName lines expanded to one entry per host), each partition's
line, the QOS its partitions allow; gres.conf's lines by the nodes they name; the fsname, index
and MGS NID of each Lustre target that mkfs.lustre formats.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from cluster_iac.base.hostlist import HostlistError, expand, size

# Lines of slurm.conf that define objects rather than set a global key.
OBJECT_KEYS = ("nodename", "partitionname", "nodeset", "downnodes", "frontendname")


@dataclass
class SlurmConf:
    """One slurm.conf, read."""

    keys: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # lower -> (Key, values)
    nodes: dict[str, str] = field(default_factory=dict)  # host -> its attributes
    partitions: dict[str, str] = field(default_factory=dict)  # name -> its line
    others: dict[str, str] = field(default_factory=dict)  # NodeSet/DownNodes/... line -> line

    def allowed_qos(self) -> list[str]:
        """The QOS names the partitions' AllowQos lists name, in first-seen order."""
        names: dict[str, None] = {}
        for line in self.partitions.values():
            for word in line.split():
                key, _, value = word.partition("=")
                if key.lower() == "allowqos" and value.upper() != "ALL":
                    names.update(dict.fromkeys(v for v in value.split(",") if v))
        return list(names)


def _words(text: str) -> list[list[str]]:
    """Each non-comment line as its words ('#' starts a comment, as in Slurm's parser)."""
    lines = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line.split())
    return lines


def read_slurm_conf(text: str) -> SlurmConf:
    """Global keys, nodes, partitions and other object lines of a slurm.conf."""
    conf = SlurmConf()
    default_node = ""
    for words in _words(text):
        key, _, value = words[0].partition("=")
        lower = key.lower()
        rest = " ".join(words[1:])
        if lower == "nodename":
            if value.upper() == "DEFAULT":
                default_node = rest
                continue
            attributes = f"{default_node} | {rest}" if default_node else rest
            for host in _hosts(value):
                conf.nodes[host] = attributes
        elif lower == "partitionname":
            conf.partitions[value] = " ".join(words)
        elif lower in OBJECT_KEYS:
            conf.others[" ".join(words)] = " ".join(words)
        else:
            # a global line holds one Key=Value (values may hold spaces: keep the whole rest)
            whole = " ".join(words)
            conf.keys.setdefault(lower, (key, []))[1].append(whole.partition("=")[2])
    return conf


def _hosts(expression: str) -> list[str]:
    """A NodeName's hosts; an expression that is no hostlist (a hand-edited file) as written."""
    try:
        size(expression)  # a hostlist of names and ranges in brackets, or HostlistError
        return expand(expression)
    except HostlistError:
        return [expression]


def changed_keys(old: SlurmConf, new: SlurmConf) -> list[str]:
    """The global keys whose values differ, added or dropped included, as the new file (or
    the old, for a dropped key) spells them, sorted case-insensitively."""
    names = set(old.keys) | set(new.keys)
    changed = [lower for lower in names
               if old.keys.get(lower, ("", []))[1] != new.keys.get(lower, ("", []))[1]]
    return sorted(((new.keys.get(n) or old.keys[n])[0] for n in changed), key=str.lower)


def gres_nodes(text: str) -> dict[str, str | None]:
    """gres.conf line -> the nodes it names (a hostlist), None for a line of every node."""
    lines: dict[str, str | None] = {}
    for words in _words(text):
        line = " ".join(words)
        named = [w.partition("=")[2] for w in words if w.partition("=")[0].lower() == "nodename"]
        lines[line] = named[0] if named else None
    return lines


def gres_hosts(expression: str | None, every: list[str]) -> list[str]:
    """The hosts a gres.conf line names (``every`` node for a line naming none)."""
    return every if expression is None else _hosts(expression)


def lustre_targets(text: str) -> dict[str, tuple[str, str, str]]:
    """Target -> (fsname, index, mgsnode) of each `mkfs.lustre` line of a server script. A
    target is its place among the script's mkfs.lustre lines and its kind ('1: mdt'): its
    device is named after the fsname and index, so a renamed file system or a new index is the
    same target (the same drives) formatted otherwise, not another one."""
    targets: dict[str, tuple[str, str, str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("mkfs.lustre"):
            continue
        try:
            args = shlex.split(line)
        except ValueError:
            continue
        options = {a.partition("=")[0]: a.partition("=")[2] for a in args if a.startswith("--")}
        kind = "+".join(k for k in ("mgs", "mdt", "ost") if f"--{k}" in options)
        targets[f"{len(targets) + 1}: {kind}"] = (options.get("--fsname", ""),
                                                  options.get("--index", ""),
                                                  options.get("--mgsnode", ""))
    return targets
