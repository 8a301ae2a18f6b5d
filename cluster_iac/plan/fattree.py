"""Fat-tree sizing: how many leaves, spines and cores a fabric needs, and how they are cabled;
and how many host ports one leaf port carries under breakout (breakout_legs).

Pure arithmetic over switch radixes, so the rules can be checked against NVIDIA's published
DGX SuperPOD tables without building a graph. The rules are the ones fabric designers use:

- A leaf splits its radix between node-facing downlinks and spine-facing uplinks in the
  requested oversubscription (1:1: half and half; QM9700: 32 down, 32 up).
- Rail-optimized: NIC ``i`` of every node of a scalable unit (SU) goes to that SU's rail
  leaf ``i``, so one SU has one leaf per rail; plain: every NIC of a node goes to one leaf.
- A fabric is built for whole SUs: the last SU gets all its leaves and uplinks even when it
  is not full, so adding its nodes later changes no cable (DGX SuperPOD RA, "Network Fabrics").
- Uplinks are spread evenly: every leaf reaches every spine of its group with the same number
  of links, so the spine count divides a leaf's uplink count; the smallest such count that
  has enough spine ports is chosen (3 SUs of QM9700: 768 uplinks need 12 spines, 16 divides
  32, so 16 spines with 2 links from each leaf, as in NVIDIA's table).
- A fabric may be planned for more SUs than it has (``planned_sus``): spines and cores are
  sized for the planned SUs, leaves and cables are built for the SUs there are, so adding an
  SU later adds its leaves and their cables and moves no existing cable.
- When one spine layer cannot reach every leaf, a third tier is added: SUs (or groups of
  them) become pods with their own spines, spine ``j`` of every pod connects to core group
  ``j``, spines are non-blocking (as many uplinks as downlinks), and the core group size
  divides a spine's uplink count in the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any


class FabricSizeError(ValueError):
    """The nodes cannot be connected with these switches in the allowed tiers."""


class PlannedSizeError(FabricSizeError):
    """The nodes fill more scalable units than the fabric is planned for."""


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class FatTree:
    """The sized fabric: counts and cabling pattern, before any switch is named."""

    design: str  # 'rail-optimized' | 'plain' | 'single-switch'
    tiers: int
    rails: int  # leaves one SU has per rail slot (rail-optimized: NICs per node; else 1)
    nics_per_node: int
    su_nodes: int
    sus: int
    leaves_per_su: int
    nodes_per_leaf: int  # rail-optimized: nodes a rail leaf serves; plain: nodes on one leaf
    leaf_down: int  # ports (split cages: one each) a leaf reserves for nodes (a full SU)
    leaf_up: int  # uplinks per leaf
    sus_per_pod: int  # 3 tiers: SUs under one set of spines; 2 tiers: all of them
    spines_per_pod: int
    pods: int
    leaf_spine_links: int  # links from each leaf to each spine of its pod
    spine_up: int  # uplinks per spine (3 tiers)
    cores_per_group: int
    spine_core_links: int  # links from each spine to each core of its group
    planned_sus: int = 0  # SUs the upper tiers are sized for (0: as many as are built)

    @property
    def planned_spines(self) -> int:
        """Spines of the planned fabric (names are as wide as its count)."""
        planned_pods = math.ceil(max(self.sus, self.planned_sus) / self.sus_per_pod)
        return planned_pods * self.spines_per_pod if self.tiers >= 2 else 0

    @property
    def leaves(self) -> int:
        return self.sus * self.leaves_per_su

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod if self.tiers >= 2 else 0

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_group if self.tiers == 3 else 0

    @property
    def leaf_spine_cables(self) -> int:
        return self.leaves * self.leaf_up if self.tiers >= 2 else 0

    @property
    def spine_core_cables(self) -> int:
        return self.spines * self.spine_up if self.tiers == 3 else 0


def parse_ratio(text: str) -> Fraction:
    """'2:1' -> 2 (downlink bandwidth per unit of uplink bandwidth)."""
    down, up = (Fraction(part) for part in text.split(":"))
    return down / up


def smallest_divisor_at_least(n: int, floor: int) -> int | None:
    """The smallest divisor of ``n`` that is >= ``floor`` (None when floor > n)."""
    for d in range(max(1, floor), n + 1):
        if n % d == 0:
            return d
    return None


def size_fat_tree(nodes: int, nics_per_node: int, leaf_ports: int, spine_ports: int,
                  core_ports: int, oversubscription: Fraction, design: str,
                  su_nodes: int | None = None, tiers: int | None = None,
                  planned_sus: int | None = None, node_ports: int | None = None,
                  legs: int = 1) -> FatTree:
    """Size a fabric for ``nodes`` hosts of up to ``nics_per_node`` fabric ports each
    (``node_ports`` in all, when hosts differ; default every host's the most); its upper
    tiers for ``planned_sus`` scalable units when given. ``legs``: host ports one leaf port
    carries (port breakout: 2 for 400G hosts on an 800G cage split in two); the leaf's ports
    are counted as cages, and a split cage carries as much as an uplink cage, so the ratio of
    downlink to uplink cages is the bandwidth ratio."""
    if nodes <= 0 or nics_per_node <= 0:
        raise FabricSizeError("the fabric has no node ports to connect")
    ports = node_ports if node_ports is not None else nodes * nics_per_node
    if tiers in (None, 1) and su_nodes is None and planned_sus is None \
            and math.ceil(ports / legs) <= leaf_ports:
        # Everything fits on one switch: no uplinks, no spine tier (the seed guide's single
        # 40-port HDR switch for 8 nodes). Counted port by port: a storage fabric's servers
        # with two ports beside clients with one fit where twice the hosts would not.
        return _single_switch(nodes, nics_per_node, math.ceil(ports / legs))
    if tiers == 1:
        split = f" ({legs} to a port)" if legs > 1 else ""
        raise FabricSizeError(f"{ports} node ports{split} do not fit one {leaf_ports}-port "
                              f"switch")
    # Downlinks a leaf may carry at this ratio: down / (leaf_ports - down) <= oversubscription.
    down_cap = math.floor(leaf_ports * oversubscription / (1 + oversubscription))
    if design == "rail-optimized":
        rails, per_node_ports = nics_per_node, 1
    else:
        rails, per_node_ports = 1, nics_per_node
    nodes_cap = down_cap * legs // per_node_ports
    if nodes_cap == 0:
        raise FabricSizeError(f"a {leaf_ports}-port leaf at {_ratio(oversubscription)} has "
                              f"{down_cap} downlinks, fewer than one node's {per_node_ports}")
    su = su_nodes or nodes_cap
    leaves_per_rail = math.ceil(su / nodes_cap)
    nodes_per_leaf = math.ceil(su / leaves_per_rail)
    leaf_down = math.ceil(nodes_per_leaf * per_node_ports / legs)
    leaf_up = math.ceil(leaf_down / oversubscription)
    built = math.ceil(nodes / su)
    if planned_sus is not None and planned_sus < built:
        raise PlannedSizeError(f"{nodes} nodes fill {built} scalable units of {su} but the "
                               f"fabric is planned for {planned_sus}")
    sus = planned_sus or built
    leaves_per_su = rails * leaves_per_rail
    leaves = sus * leaves_per_su
    base = dict(design=design, rails=rails, nics_per_node=nics_per_node, su_nodes=su, sus=sus,
                leaves_per_su=leaves_per_su, nodes_per_leaf=nodes_per_leaf,
                leaf_down=leaf_down, leaf_up=leaf_up)
    if tiers in (None, 2):
        spines = _group_size(leaf_up, leaves * leaf_up, spine_ports)
        if spines is not None:
            return replace(FatTree(tiers=2, sus_per_pod=sus, spines_per_pod=spines, pods=1,
                                   leaf_spine_links=leaf_up // spines, spine_up=0,
                                   cores_per_group=0, spine_core_links=0,
                                   **base), sus=built, planned_sus=sus)  # type: ignore[arg-type]
        if tiers == 2:
            raise FabricSizeError(f"{leaves} leaves with {leaf_up} uplinks each need more "
                                  f"than one tier of {spine_ports}-port spines")
    tree = _three_tiers(base, leaves_per_su, leaf_up, spine_ports, core_ports)
    # the pods the built SUs fill; the core tier stays sized for the planned ones
    return replace(tree, sus=built, pods=math.ceil(built / tree.sus_per_pod), planned_sus=sus)


def _three_tiers(base: dict[str, object], leaves_per_su: int, leaf_up: int, spine_ports: int,
                 core_ports: int) -> FatTree:
    """Pods of as few SUs as the core tier allows; spines non-blocking."""
    sus = int(base["sus"])  # type: ignore[call-overload]
    spine_down_cap = spine_ports // 2
    for sus_per_pod in range(1, sus + 1):
        pod_leaves = sus_per_pod * leaves_per_su
        spines = _group_size(leaf_up, pod_leaves * leaf_up, spine_down_cap)
        if spines is None:
            break  # larger pods need even more spine ports per leaf
        spine_up = pod_leaves * leaf_up // spines
        pods = math.ceil(sus / sus_per_pod)
        cores = _group_size(spine_up, pods * spine_up, core_ports)
        if cores is not None:
            return FatTree(tiers=3, sus_per_pod=sus_per_pod, spines_per_pod=spines, pods=pods,
                           leaf_spine_links=leaf_up // spines, spine_up=spine_up,
                           cores_per_group=cores, spine_core_links=spine_up // cores,
                           **base)  # type: ignore[arg-type]
    raise FabricSizeError(f"{sus} scalable units need more than three tiers of "
                          f"{spine_ports}-port switches; use higher-radix switches")


def _group_size(links_per_member: int, total_links: int, ports: int) -> int | None:
    """Switches in the group above: enough ports for ``total_links``, and a divisor of
    ``links_per_member`` so each member reaches each of them with the same number of links."""
    return smallest_divisor_at_least(links_per_member, math.ceil(total_links / ports))


def _single_switch(nodes: int, nics_per_node: int, ports: int) -> FatTree:
    return FatTree(design="single-switch", tiers=1, rails=1, nics_per_node=nics_per_node,
                   su_nodes=nodes, sus=1, leaves_per_su=1, nodes_per_leaf=nodes,
                   leaf_down=ports, leaf_up=0, sus_per_pod=1, spines_per_pod=0,
                   pods=1, leaf_spine_links=0, spine_up=0, cores_per_group=0,
                   spine_core_links=0)


def _ratio(value: Fraction) -> str:
    return f"{value.numerator}:{value.denominator}"


def breakout_legs(leaf: Any, speeds: set[int]) -> int:
    """Host ports one leaf port carries: the catalog's split of the leaf's port into ports of
    the hosts' rate, when all host ports run at one rate below the leaf's and the catalog
    lists that split (an SN5600's 800G cage into 2 x 400G); else 1, a port a host port.
    Ethernet only: an InfiniBand switch's split ports would need its subnet manager's port
    numbering of them, which the topology file (plan/subnet.py) does not model; a split that
    would carry more than the port (legs x rate over its rate) is not used."""
    if len(speeds) != 1 or leaf.link != "ethernet":
        return 1
    (speed,) = speeds
    return next((split.ports for split in leaf.breakout
                 if split.speed_gbps == speed < leaf.port_speed_gbps
                 and split.ports * speed <= leaf.port_speed_gbps), 1)
