"""Multi-node NVLink: NVIDIA's IMEX service on the nodes of each rack-scale NVLink domain, and the
IMEX channels Slurm's switch/nvidia_imex plugin hands to jobs.

IMEX (the Import/Export service of NVIDIA's driver) lets a process map GPU memory of another node
of the same NVLink domain. Every node of a domain runs ``nvidia-imex``, which reads
``/etc/nvidia-imex/config.cfg`` once at start and, through it, ``nodes_config.cfg``: the
addresses of all the domain's nodes, one per line, the same file on each of them (NVIDIA IMEX
guide, "Configuring IMEX"). A job reaches IMEX through a channel device,
``/dev/nvidia-caps-imex-channels/channelN``, which switch/nvidia_imex makes for the job on its
nodes (the devices are not kept across a reboot: the plugin makes each anew).
"""

from __future__ import annotations

from dataclasses import dataclass

CONFIG_DIR = "/etc/nvidia-imex"
NODES_FILE = f"{CONFIG_DIR}/nodes_config.cfg"
SERVICE = "nvidia-imex"
CHANNEL_DIR = "/dev/nvidia-caps-imex-channels"
CHANNEL_MAJOR = "nvidia-caps-imex-channels"  # the driver's character device in /proc/devices
# SwitchParameters=imex_channel_count: slurm.conf(5) of 24.11 and 26.05 gives 2048 as the
# default, which is also the number of channels the driver's nvidia-caps-imex-channels device
# offers (NVIDIA IMEX guide, "IMEX channels"). Every running job (26.05), or every running step
# that spans nodes (24.11), holds one; fewer would refuse jobs a channel while the driver has
# channels free, so the plan writes the full count out rather than rely on the default.
MAX_CHANNELS = 2048


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class ImexDomain:
    """One NVLink domain's IMEX peers: its nodes and their addresses on the IMEX network."""

    name: str
    nodes: tuple[str, ...]
    addresses: tuple[str, ...]  # in the nodes' order; nodes_config.cfg lists them so


@dataclass(frozen=True, eq=False, repr=False)
class ImexPlan:
    """Where IMEX runs and how many channels Slurm manages."""

    network: str  # the plan network whose addresses the daemons use ('management')
    domains: tuple[ImexDomain, ...]
    node_types: tuple[str, ...]  # compute node types whose nodes run IMEX
    channels: int  # SwitchParameters=imex_channel_count
