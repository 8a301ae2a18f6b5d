"""Lustre servers and clients: per-server RAID, format and mount commands, LNet in `lnetctl
import` form, client mount lines and client tuning, in the Lustre manual's syntax.

Every command is a list of words joined with shlex.quote, so no spec string can end a word or
add a command; YAML comes from the YAML serializer.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from cluster_iac.emit.base import render_template
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.lustre import LustrePlan, LustreServer, LustreServers, LustreTarget

BLOCK_KIB = 4  # ldiskfs block size: stride and stripe_width count 4 KiB blocks
PAGE_KIB = 4  # client page size (x86_64, aarch64 with 4K pages): max_pages_per_rpc counts them
MDADM_LEVEL = {"raid0": "0", "raid1": "1", "raid5": "5", "raid6": "6", "raid10": "10"}
# Mount options of the clients: _netdev waits for the network (systemd orders the mount after
# it), flock makes flock()/fcntl locks coherent across clients (mount.lustre(8)), which
# frameworks that lock checkpoint and cache files rely on.
CLIENT_OPTIONS = "defaults,_netdev,flock"


def command(*words: object) -> str:
    """One shell command, each word quoted (a word with no special character stays bare)."""
    return " ".join(shlex.quote(str(w)) for w in words)


def render(plan: Plan) -> dict[str, str]:
    lustre: LustrePlan | None = plan.lustre
    if lustre is None or lustre.hardware is None:
        return {}
    hw = lustre.hardware
    files = {f"lustre/servers/{s.hostname}.sh": _server_script(lustre, hw, s)
             for s in hw.servers}
    for node_type, interfaces in sorted(hw.lnet.interfaces.items()):
        files[f"lustre/lnet/{node_type}.yaml"] = lnet_yaml(hw.lnet.net, interfaces, node_type)
    files["lustre/clients/fstab"] = render_template(
        "lustre/fstab.j2", line=fstab_line(lustre, hw), lustre=lustre)
    files["lustre/clients/mount.sh"] = render_template(
        "lustre/client-mount.sh.j2", lustre=lustre, mkdir=command("mkdir", "-p", lustre.mount),
        mount=command("mount", "-t", "lustre", "-o", "flock", mgs_spec(lustre, hw),
                      lustre.mount))
    files["lustre/clients/tune.sh"] = render_template(
        "lustre/client-tune.sh.j2", lustre=lustre, settings=client_tuning(plan, lustre, hw))
    return files


def mgs_spec(lustre: LustrePlan, hw: LustreServers) -> str:
    """mount.lustre's <mgsnode>[:<mgsnode>]:/<fsname>, with the MGS's NID."""
    return ":".join(hw.lnet.mgs_nids) + ":/" + lustre.fsname


def fstab_line(lustre: LustrePlan, hw: LustreServers) -> str:
    """The client's fstab(5) line: device, mount point, type, options, dump, pass."""
    return "\t".join((mgs_spec(lustre, hw), lustre.mount, "lustre", CLIENT_OPTIONS, "0", "0"))


def lnet_yaml(net: str, interfaces: Sequence[str], node_type: str) -> str:
    """The `lnetctl import` document of one node type: one local NI per interface (several:
    LNet multi-rail), in the form `lnetctl export` writes."""
    data = {"net": [{"net type": net,
                     "local NI(s)": [{"interfaces": {0: name}} for name in interfaces]}]}
    return yaml_text(data, header=(
        f"LNet of node type {node_type}: `lnetctl import < this file` (or /etc/lnet.conf,",
        "read by the lnet service); the NIDs are the interfaces' IPv4 addresses."))


def _server_script(lustre: LustrePlan, hw: LustreServers, server: LustreServer) -> str:
    steps = [_target_steps(lustre, hw, server, t) for t in server.targets]
    return render_template("lustre/server.sh.j2", lustre=lustre, server=server,
                           role=server.role.upper(), steps=steps,
                           persistent=_persistent(lustre, server))


def _target_steps(lustre: LustrePlan, hw: LustreServers, server: LustreServer,
                  target: LustreTarget) -> dict[str, Any]:
    mount_point = f"/mnt/{target.label}"
    raid = _mdadm(target) if target.members else None
    return {
        "label": target.label, "about": _about(target), "raid": raid,
        "mkfs": command(*mkfs_words(lustre, hw, target)),
        "mkdir": command("mkdir", "-p", mount_point),
        "mount": command("mount", "-t", "lustre", target.device, mount_point),
    }


def _about(target: LustreTarget) -> str:
    if not target.members:
        return f"{target.label}: no drives declared in the spec; create {target.device} first"
    spares = f" + {len(target.spares)} hot spares" if target.spares else ""
    chunk = f", {target.chunk_kib} KiB chunks" if target.chunk_kib else ""
    return (f"{target.label}: {target.raid} of {len(target.members)} x {target.drive}"
            f"{spares}{chunk}; {target.capacity_tb:.2f} TB usable, reads "
            f"{target.read_gbs:.1f} GB/s, writes {target.write_gbs:.1f} GB/s")


def _mdadm(target: LustreTarget) -> str:
    words: list[object] = ["mdadm", "--create", target.device, "--run",
                           f"--level={MDADM_LEVEL[target.raid]}",
                           f"--raid-devices={len(target.members)}"]
    if target.chunk_kib:
        words.append(f"--chunk={target.chunk_kib}")
    if target.spares:
        words.append(f"--spare-devices={len(target.spares)}")
    return command(*words, *target.members, *target.spares)


def mkfs_words(lustre: LustrePlan, hw: LustreServers, target: LustreTarget) -> list[str]:
    """mkfs.lustre {--mgs|--mdt|--ost} [options] device (mkfs.lustre(8))."""
    if target.kind == "mgt":
        words = ["mkfs.lustre", "--mgs"]
    else:
        words = ["mkfs.lustre", f"--fsname={lustre.fsname}"]
        words += ["--mgs", "--mdt"] if target.with_mgs else [f"--{target.kind}"]
        words.append(f"--index={target.index}")
        if not target.with_mgs:
            words += [f"--mgsnode={nid}" for nid in hw.lnet.mgs_nids]
    stripe = target.stripe_kib
    if stripe and target.chunk_kib:
        # Lustre manual, "Computing file system parameters for mkfs": stride = chunk in
        # blocks, stripe_width = stride x data drives, so ldiskfs allocates whole stripes.
        stride = target.chunk_kib // BLOCK_KIB
        width = stride * int(target.data_drives)
        words.append(f"--mkfsoptions=-E stride={stride},stripe_width={width}")
    words.append(target.device)
    return words


def _persistent(lustre: LustrePlan, server: LustreServer) -> list[dict[str, str]]:
    """Settings the MGS stores for every target (lctl set_param -P), run on the MGS's server."""
    if not any(t.kind == "mgt" or t.with_mgs for t in server.targets):
        return []
    if not _wide_stripes(lustre):
        return []
    return [{"reason": "OSTs take 4 MiB bulk RPCs, the clients' RPC size (clients/tune.sh)",
             "command": command("lctl", "set_param", "-P",
                                f"obdfilter.{lustre.fsname}-OST*.brw_size=4")}]


def _wide_stripes(lustre: LustrePlan) -> bool:
    """Some layout stripes 4 MiB or more: 4 MiB RPCs then move one stripe per round trip."""
    return any(c.stripe_size >= 4 << 20 for d in lustre.directories for c in d.components
               if not c.on_mdt)


def client_tuning(plan: Plan, lustre: LustrePlan, hw: LustreServers) -> list[dict[str, str]]:
    """`lctl set_param` lines for the clients, each with the figures that make it."""
    fs = lustre.fsname
    osts = sum(1 for t in hw.targets if t.kind == "ost")
    out = []
    rpc_mib = 4 if _wide_stripes(lustre) else 1
    if rpc_mib == 4:
        out.append({"reason": "4 MiB RPCs (1024 pages of 4 KiB; the default is 256 = 1 MiB): "
                              "the dataset and checkpoint layouts stripe 4 MiB, so one RPC "
                              "moves one stripe (the OSTs allow it: brw_size=4 on the MGS)",
                    "command": command("lctl", "set_param",
                                       f"osc.{fs}-OST*.max_pages_per_rpc={4 * 1024 // PAGE_KIB}")})
    per_file = max(64, osts * rpc_mib)
    gpus = max((nt.gpu_count for nt in plan.node_types.values()), default=1) or 1
    out.append({"reason": f"read-ahead of one file covers one {rpc_mib} MiB RPC on each of the "
                          f"{osts} OSTs a wide file stripes over (at least Lustre's 64 MiB "
                          f"default): {per_file} MiB",
                "command": command("lctl", "set_param",
                                   f"llite.{fs}-*.max_read_ahead_per_file_mb={per_file}")})
    out.append({"reason": f"total read-ahead holds that for one file per GPU of a node "
                          f"({gpus} GPUs): {gpus} x {per_file} MiB",
                "command": command("lctl", "set_param",
                                   f"llite.{fs}-*.max_read_ahead_mb={gpus * per_file}")})
    return out
