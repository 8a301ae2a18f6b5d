"""A switch's own port names as the plan names its ports, for LLDP tables read from the
switch itself (cabling verify, reconcile/ethernet.py).

The plan names a fabric switch's ports ``p<cage>`` and a breakout leg ``p<cage>s<leg>`` (legs
from 1), a management switch's ``swp<n>`` (plan/switching.py). A switch's network OS prints
its own names, which the plan's ports are found among:

- Arista EOS: ``Ethernet57`` (``Et57`` in short forms), a lane of a split cage
  ``Ethernet1/2`` (lanes from 1, as emit/avd_inputs.py's ``eos_port`` writes the plan's legs),
  and ``Ethernet57/1`` the first lane of an unsplit multi-lane cage;
- NVIDIA Cumulus Linux: ``swp57``, a breakout leg ``swp1s0`` (legs from 0: Cumulus Linux user
  guide, "Switch Port Attributes", breakout ports swp1s0-swp1s3).

A name is given the plan's name only where the plan has that port on that device; any other
name (a host's interface, a port the plan lacks) is left as it is, so an unplanned port stays
visible in a finding.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_EOS = re.compile(r"(?:Ethernet|Et)(\d+)(?:/(\d+))?")
_CUMULUS = re.compile(r"swp(\d+)(?:s(\d+))?")


def plan_port(name: str, planned: Collection[str]) -> str:
    """The plan's name of port ``name`` of a device whose planned ports are ``planned``."""
    if name in planned:
        return name
    return next((c for c in candidates(name) if c in planned), name)


def candidates(name: str) -> list[str]:
    """The plan's names a switch's port name may stand for, most specific first."""
    match = _EOS.fullmatch(name)
    if match is not None:
        cage, lane = match.groups()
        if lane is None:
            return [f"p{cage}", f"swp{cage}"]
        return [f"p{cage}s{lane}", *([f"p{cage}", f"swp{cage}"] if lane == "1" else [])]
    match = _CUMULUS.fullmatch(name)
    if match is not None:
        cage, leg = match.groups()
        return [f"p{cage}s{int(leg) + 1}"] if leg is not None else [f"p{cage}"]
    return []
