"""The Slurm releases the tool targets, and what each one reads: one table, one row per release.

Every version-dependent choice of the Slurm emitters is a field here, never an ``if version``
in an emitter. Each field's comment cites where Slurm says so (the release's CHANGELOG/NEWS
entry or man page) or what a real daemon did here (tests/real runs 22.05, 24.11 and 26.05).

The slurm.conf keys each release accepts (``slurm_conf_keys.tsv``) were measured with each
release's own parser: every parameter name of the three slurm.conf(5) man pages and every
capitalised string of libslurmfull, one ``Key=1`` at a time, through ``scontrol show
hostnames`` (it parses slurm.conf first and dies on 'Parsing error at unrecognized key').
Debian 12 gives 22.05.8, trixie 24.11.5, sid 26.05.5. A key that appeared or went between two
measured releases carries that range ('23.02..24.11'): for a release inside it the table
cannot say, and ``key_status`` answers 'unsure'.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

Version = tuple[int, int]
KeyStatus = Literal["yes", "no", "unsure"]


def parse_version(text: str) -> Version:
    """'24.11' -> (24, 11)."""
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def version_text(version: Version) -> str:
    return f"{version[0]}.{version[1]:02d}"


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class SlurmRelease:
    """One release's version-dependent facts."""

    version: str
    # topology/block exists (slurm.schedmd.com/topology.html: the block plugin arrived in 23.11;
    # Debian 12's 22.05 has no topology_block.so, trixie's 24.11 and sid's 26.05 do).
    topology_block: bool
    # topology.conf names the block sizes BlockSizes (CHANGELOG/slurm-24.05.md: "topology/block -
    # Replaced the BlockLevels with BlockSizes in topology.conf"). Before, 23.11 takes the base
    # block size from the first block, so the emitter lists the smallest block first.
    block_sizes: bool
    # topology.yaml: several named topologies, chosen per partition by Topology= (topology.yaml(5)
    # first appears with 25.05, its man page dated May 2025; slurm.conf(5) 'Topology' partition
    # key; sid's 26.05.5 reads both in tests/real).
    topology_yaml: bool
    # Partition Exclusive=NODE: slurm.conf(5) of 26.05 "replaces the deprecated options
    # OverSubscribe=EXCLUSIVE, ExclusiveUser, and ExclusiveTopo"; 24.11 has no such key.
    exclusive_node: bool
    # CgroupPlugin=disabled exists (CHANGELOG/slurm-24.05.md: "Add CgroupPlugin=disabled to
    # disable any interaction with Cgroups"): the harness's chroot has no cgroup file system.
    cgroup_disabled: bool
    # switch/nvidia_imex exists: SwitchType=switch/nvidia_imex hands jobs an IMEX channel for
    # multi-node NVLink (GB200/GB300 NVL72). CHANGELOG/slurm-24.05.md: "switch/nvidia_imex -
    # New plugin"; measured: Debian 12's 22.05.8 ships no switch_nvidia_imex.so, trixie's
    # 24.11.5 and sid's 26.05.5 do, and their slurmctld and slurmd load it (tests/real).
    nvidia_imex: bool = False
    # Which steps get a channel, as slurm.conf(5) SwitchParameters imex_channel_count says:
    # 24.11's "the batch and interactive steps will not have imex channels ... once you start
    # creating job steps that span nodes you will see the channels created"; 26.05's "each job
    # is allocated one IMEX channel that is accessible by the batch, interactive, and normal
    # job steps on all nodes within the job" (or one per segment with
    # --network=unique-channel-per-segment). The change came with 25.11: its slurm.conf(5)
    # has the 26.05 text and CHANGELOG/slurm-25.11.md says "switch/nvidia_imex - IMEX channels
    # are now accessible in the batch step and interactive step"; 25.05's man page still has
    # 24.11's (read from SchedMD/slurm tags slurm-25-05-0-1 and slurm-25-11-0-1).
    imex_channel_per_job: bool = False
    # AutoDetect=nvml names a MIG instance's GRES type from NVML's name of the MIG device
    # ("NVIDIA H100 80GB HBM3 MIG 1g.10gb" -> "_1g.10gb" after the parent's type): SchedMD/slurm
    # commit 04f0e4c3d7 "Get mig profile name from nvidia if possible" (bug 17705), first in
    # 23.02.6; src/plugins/gpu/nvml/gpu_nvml.c _handle_mig of 24.11 and 26.05. Before it
    # (22.05's _handle_mig) the suffix is "_%ug.%lugb" of the slice count and the instance's
    # memory in MiB / 1024 rounded, which the catalog does not hold (an H100's 7g.80gb has
    # 79.25 GiB: '7g.79gb'). 23.02 is taken as its first releases (not measured).
    mig_nvml_names: bool = False

    @property
    def key(self) -> Version:
        return parse_version(self.version)

    def key_status(self, key: str) -> KeyStatus:
        """Whether this release's slurm.conf parser accepts ``key`` (case-insensitive)."""
        entry = slurm_conf_keys().get(key.lower())
        if entry is None:
            return "no"
        return entry.status(self.key)


def _release(version: str, *, block: bool = False, block_sizes: bool = False,
             yaml: bool = False, exclusive_node: bool = False,
             cgroup_disabled: bool = False, imex: bool = False,
             imex_per_job: bool = False, mig_names: bool = True) -> SlurmRelease:
    return SlurmRelease(version, block, block_sizes, yaml, exclusive_node, cgroup_disabled,
                        imex, imex_per_job, mig_names)


SLURM_RELEASES: dict[str, SlurmRelease] = {r.version: r for r in (
    _release("22.05", mig_names=False),
    _release("23.02", mig_names=False),
    _release("23.11", block=True),
    _release("24.05", block=True, block_sizes=True, cgroup_disabled=True, imex=True),
    _release("24.11", block=True, block_sizes=True, cgroup_disabled=True, imex=True),
    _release("25.05", block=True, block_sizes=True, yaml=True, cgroup_disabled=True,
             imex=True),
    _release("25.11", block=True, block_sizes=True, yaml=True, cgroup_disabled=True,
             imex=True, imex_per_job=True),
    _release("26.05", block=True, block_sizes=True, yaml=True, exclusive_node=True,
             cgroup_disabled=True, imex=True, imex_per_job=True),
)}
"""The supported releases, oldest first (spec/cluster.py's SlurmVersion lists the same)."""

# The releases whose parsers measured the key table, and which tests/real starts.
MEASURED = ("22.05", "24.11", "26.05")


def slurm_release(version: str) -> SlurmRelease:
    return SLURM_RELEASES[version]


@dataclass(frozen=True, eq=False, repr=False)
class ConfKey:
    """A slurm.conf key and the releases that accept it."""

    name: str
    added: tuple[Version, Version]  # the first release that accepts it lies in this range
    removed: tuple[Version, Version] | None  # the first that does not, when it was dropped

    def status(self, release: Version) -> KeyStatus:
        if release < self.added[0] or (self.removed and release >= self.removed[1]):
            return "no"
        if release < self.added[1] or (self.removed and release >= self.removed[0]):
            return "unsure"
        return "yes"


def _range(text: str) -> tuple[Version, Version]:
    """'22.05' -> ((22, 5), (22, 5)); '23.02..24.11' -> ((23, 2), (24, 11))."""
    first, _, last = text.partition("..")
    return parse_version(first), parse_version(last or first)


@lru_cache(maxsize=1)
def slurm_conf_keys() -> dict[str, ConfKey]:
    """Every key of the table, by its lower-case name (Slurm's parser ignores case)."""
    text = resources.files(__package__).joinpath("slurm_conf_keys.tsv").read_text("utf-8")
    rows = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    return {row["key"].lower(): ConfKey(row["key"], _range(row["added"]),
                                        _range(row["removed"]) if row["removed"] else None)
            for row in rows}
