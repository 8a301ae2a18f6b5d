"""The front of a rack that arrives integrated (GB200/GB300 NVL72): which part sits in which
units, as its maker documents it, so that placement puts each tray where it is delivered."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Literal

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import HeightU

RackPart = Literal["compute-tray", "nvlink-switch-tray", "power-shelf"]
"""A part of a rack-scale system: one of the platform's compute trays, one of the rack's
NVLink switch trays (compile/build_nvlink.py) or one of its power shelves (plan/power.py)."""


class RackSlots(SpecModel):
    """A run of adjacent slots of one part, each as high as that part (1 U for NVL72 parts)."""

    part: RackPart
    """What the slots hold."""
    count: HeightU
    """How many of that part, one above the other."""
