"""Who is cabled to whom in a fabric, as tables; the networkx graph only for graph algorithms.

A fat tree is cabled upward: a host's NICs to leaves, leaves to spines, spines to cores, each
device to every switch above it the same number of times. So the tables say, for each
device, the switches above it (``up``) and the rate and count of its cables to each
(``uplinks``). At 100,000 GPUs that is 17,000 short rows where a graph would hold 225,000
edges, each with its own attribute dict and two adjacency entries; the readers (the topology
tree, inventories, checks, collective estimates) want a device's switches, not paths. What
does want graph algorithms (Lustre's max flow) asks for ``graph``, built once on first use.
The cables themselves are rows of ``plan.cables``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from operator import eq
from typing import Any, NamedTuple

# The cables from a device of a tier to the switches above it.
UPLINK_TIER = {"node": "node-leaf", "leaf": "leaf-spine", "spine": "spine-core"}


class LinkMove(NamedTuple):
    """A switch-to-switch cable the lock held that the design cannot keep where it was
    (compile/fabric_links.py): the lower switch's port, the switch above and its port, as
    the lock's links line held them, and why it moves."""

    fabric: str
    switch: str
    port: str
    peer: str
    peer_port: str
    why: str


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class FabricWiring:
    """One fabric's devices and cables, as the fabric pass laid them out."""

    network: str  # 'compute' | 'storage'
    link: str  # link layer: 'infiniband' | 'ethernet'
    design: str  # 'rail-optimized' | 'plain' | 'single-switch'
    # device -> 'node' (a host) | 'leaf' | 'spine' | 'core': leaves, hosts, spines, cores
    tier: Mapping[str, str]
    su: Mapping[str, int]  # host or leaf -> its scalable unit (from 1)
    rail: Mapping[str, int]  # rail-optimized: leaf -> its rail (from 1)
    # device -> the switches above it that it is cabled to: a host's in NIC order (rail
    # optimized: NIC i on the rail leaf i+1 of its SU), a switch's in port order
    up: Mapping[str, tuple[str, ...]]
    # device -> (Gb/s of each cable up, cables to each switch above)
    uplinks: Mapping[str, tuple[int, int]]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a device of the fabric (a host cabled to it, or a switch)."""
        return name in self.tier

    def hosts(self) -> Iterator[str]:
        """The hosts cabled to the fabric, in the order they were cabled."""
        return (name for name, tier in self.tier.items() if tier == "node")

    def reach(self, start: str) -> set[str]:
        """The devices connected to ``start``, directly or through switches: its connected
        component. A union-find joins the switches only (the switches above one device,
        each distinct set once, and each switch with the first above it); a host is where its
        first switch is. (At 100,000 GPUs: 4,000 switches joined one by one, not 16,500
        devices, and the hosts looked up in a table: 0.08 s CPU became 0.03.)"""
        parts = DisjointSets()
        for uppers in dict.fromkeys(self.up.values()):
            parts.union(*uppers)
        tier, anchor = self.tier, {}  # host -> the switch it hangs from
        for name, uppers in self.up.items():
            if tier.get(name) == "node":
                anchor[name] = uppers[0] if uppers else name
            else:
                parts.union(name, *uppers[:1])
        roots = {name: parts.find(name) for name in list(parts.parent)}
        component = roots.get(anchor.get(start, start), start)
        # each device's component, device by device at C speed
        found = map(roots.get, map(anchor.get, tier, tier), tier)
        return set(compress(tier, map(eq, found, repeat(component))))

    @cached_property
    def graph(self) -> Any:
        """The fabric as a networkx Graph, for graph algorithms: nodes carry kind, tier, su
        and rail; one edge per cabled pair, with tier, speed_gbps, link, links (the cables
        between the pair) and, from a host of a rail-optimized fabric, the NIC's rail."""
        import networkx as nx

        graph = nx.Graph()
        for name, tier in self.tier.items():
            if tier == "node":
                graph.add_node(name, kind="node", su=self.su.get(name))
            else:
                graph.add_node(name, kind="switch", tier=tier, su=self.su.get(name),
                               rail=self.rail.get(name))
        rails = self.design == "rail-optimized"
        for lower, uppers in self.up.items():
            speed, links = self.uplinks[lower]
            tier = self.tier[lower]
            data = {"tier": UPLINK_TIER[tier], "speed_gbps": speed, "link": self.link,
                    "links": links}
            for nic, upper in enumerate(uppers):
                graph.add_edge(lower, upper, **data,
                               **({"rail": nic} if rails and tier == "node" else {}))
        return graph


class DisjointSets:
    """Names joined into sets: a union-find (union by size, path halving). networkx has one,
    but importing any part of networkx loads all of it (about 0.1 s, a third of `validate`'s
    start-up on a small spec), and a fabric check needs only these few lines; the test checks
    them against networkx's connected components."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.size: dict[str, int] = {}

    def find(self, name: str) -> str:
        """The name standing for ``name``'s set (a new set of its own if it had none)."""
        parent = self.parent
        if name not in parent:
            parent[name] = name
            self.size[name] = 1
            return name
        while (up := parent[name]) != name:
            parent[name] = name = parent[up]  # halve the path as it is walked
        return name

    def union(self, *names: str) -> None:
        """Join the sets of ``names`` into one, under the root of the largest."""
        roots = list(dict.fromkeys(map(self.find, names)))
        if len(roots) < 2:
            return
        size, parent = self.size, self.parent
        root = max(roots, key=size.__getitem__)
        for other in roots:
            if other != root:
                parent[other] = root
                size[root] += size[other]
