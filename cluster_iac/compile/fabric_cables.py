"""A fabric's cables laid port by port: hosts to their leaves (rail by rail when
rail-optimized, split cages under breakout), then leaves to spines and spines to cores,
each switch taking its next free ports; and the tables of plan/wiring.py (each device's
tier, scalable unit, rail and the switches above it) filled as the cables are laid.
compile/build_fabric.py sizes the tree and calls these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain, groupby, repeat
from operator import add
from typing import Any, NamedTuple

from cluster_iac.plan.fattree import FatTree
from cluster_iac.plan.model import Switch
from cluster_iac.plan.physical import LinkBuilder
from cluster_iac.plan.wiring import FabricWiring

# Switch port names, made once: a 100,000-GPU fabric names half a million of them. (The
# largest catalog switch has 144 ports; the fabric is sized within each switch's radix.)
PORT_NAMES = tuple(f"p{i}" for i in range(4097))


def split_port_names(ports: int, legs: int) -> tuple[str, ...]:
    """A leaf's host-facing port names when each of its ``ports`` cages is split into
    ``legs``: the n-th host port (from 1) is leg s of cage p, 'p<p>s<s>' (an 800G cage's two
    400G legs are p1s1 and p1s2, as the splitter cable's two ends are labelled)."""
    return ("p0", *(f"p{cage}s{leg}" for cage in range(1, ports + 1)
                    for leg in range(1, legs + 1)))


class Endpoint(NamedTuple):
    """A host that plugs into the fabric with ``nics`` ports at ``speed_gbps`` (a named
    tuple: 12,500 of them at 100,000 GPUs, made 4x faster than a frozen dataclass)."""

    hostname: str
    rack: str
    nics: int
    speed_gbps: int
    link: str


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(eq=False, repr=False)
class Wiring:
    """A fabric being wired: its cables (links), switches, the next free port of each switch,
    and the tables of plan/wiring.py (who is cabled to whom) filled as the cables are laid."""

    network: str
    prefix: str
    link: str
    design: str
    # the leaves' host-facing port names (split ports under breakout)
    leaf_ports: tuple[str, ...] = PORT_NAMES
    cables: LinkBuilder = field(default_factory=LinkBuilder)
    switches: list[Switch] = field(default_factory=list)
    next_port: dict[str, int] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=lambda: {"node-leaf": 0})
    # FabricWiring's tables: device -> tier, scalable unit, rail, the switches above it, and
    # (Gb/s, cables to each) of its uplinks
    tier: dict[str, str] = field(default_factory=dict)
    su: dict[str, int] = field(default_factory=dict)
    rail: dict[str, int] = field(default_factory=dict)
    up: dict[str, tuple[str, ...]] = field(default_factory=dict)
    uplinks: dict[str, tuple[int, int]] = field(default_factory=dict)
    # switch -> cable tier -> Gb/s of its cables of that tier, summed as they are laid
    gbps: dict[str, dict[str, int]] = field(default_factory=dict)

    def add_gbps(self, switch: str, tier: str, gbps: int) -> None:
        sums = self.gbps.setdefault(switch, {})
        sums[tier] = sums.get(tier, 0) + gbps

    def freeze(self) -> FabricWiring:
        return FabricWiring(self.network, self.link, self.design, self.tier, self.su,
                            self.rail, self.up, self.uplinks)


def wire_nodes(wiring: Wiring, tree: FatTree, endpoints: list[Endpoint],
                leaves: list[str], leaf_speed: int) -> dict[str, str]:
    """Node-to-leaf cables; returns each leaf's default rack (its first node's)."""
    rail_optimized = tree.design == "rail-optimized"
    per_rail = tree.leaves_per_su // tree.rails
    tiers, sus = wiring.tier, wiring.su
    for name in leaves:
        wiring.next_port[name] = 0
    for index, leaf in enumerate(leaves):
        tiers[leaf] = "leaf"
        sus[leaf] = index // tree.leaves_per_su + 1
        if rail_optimized:
            wiring.rail[leaf] = (index % tree.leaves_per_su) // per_rail + 1
    port_name = "ib" if wiring.link == "infiniband" else "rdma"
    if wiring.network == "storage":
        port_name = "stor"
    nic_ports = [f"{port_name}{nic}" for nic in range(max(e.nics for e in endpoints))]
    columns = wiring.cables.columns
    added = len(columns[0])
    a_device, a_port, speeds = columns[2], columns[3], columns[6]
    up, uplinks = wiring.up, wiring.uplinks
    kinds: dict[tuple[int, int], tuple[int, int]] = {}  # one (Gb/s, cables) tuple per kind
    for name in leaves:
        wiring.gbps[name] = {"node-leaf": 0}
    # each leaf's rack: its first cable's host's (a block's first host is the first to reach
    # each of the block's leaves)
    first_rack: dict[str, str] = {}
    for (su, group, nics, speed), block in groupby(
            enumerate(endpoints), lambda at: _leaf_group(at[0], at[1], tree, rail_optimized)):
        ends = [end for _, end in block]
        hosts = [end.hostname for end in ends]
        if rail_optimized:  # NIC i to rail i's leaf: distinct leaves, each its next port
            mine, per = tuple(leaves[group:group + nics * per_rail:per_rail]), 1
        else:  # every NIC to the node's leaf, on its next ports
            mine, per = (leaves[group],), nics
        tiers.update(dict.fromkeys(hosts, "node"))
        sus.update(dict.fromkeys(hosts, su + 1))
        a_device += chain.from_iterable(map(repeat, hosts, repeat(nics)))
        a_port += nic_ports[:nics] * len(hosts)
        speeds += [speed] * (nics * len(hosts))
        _take_ports(wiring, len(hosts), mine, per, wiring.leaf_ports)
        up.update(dict.fromkeys(hosts, mine))  # one (immutable) tuple for the block
        uplinks.update(dict.fromkeys(hosts, kinds.setdefault((speed, per), (speed, per))))
        for leaf in mine:  # the block's cables to each of its leaves, at the block's rate
            first_rack.setdefault(leaf, ends[0].rack)
            wiring.gbps[leaf]["node-leaf"] += len(hosts) * per * speed
    added = len(a_device) - added
    for column, value in ((0, wiring.network), (1, "node-leaf"), (7, wiring.link)):
        columns[column].extend([value] * added)
    wiring.links["node-leaf"] = wiring.links.get("node-leaf", 0) + added
    return first_rack


def _leaf_group(k: int, end: Endpoint, tree: FatTree,
                rail_optimized: bool) -> tuple[int, int, int, int]:
    """(scalable unit from 0, first leaf, NICs, Gb/s) of the k-th host: consecutive hosts
    alike in all four are cabled as one block (a rail leaf's 72 hosts at 100,000 GPUs)."""
    su, pos = divmod(k, tree.su_nodes)
    if rail_optimized:  # its leaf on rail 1; the others follow every per_rail leaves
        return su, su * tree.leaves_per_su + pos // tree.nodes_per_leaf, end.nics, end.speed_gbps
    return su, k // tree.nodes_per_leaf, end.nics, end.speed_gbps


def _take_ports(wiring: Wiring, lowers: int, uppers: tuple[str, ...], per: int,
                port_names: tuple[str, ...] = PORT_NAMES) -> None:
    """The B ends of ``lowers`` devices' cables, one device after another: each cabled
    ``per`` times to each of ``uppers`` (distinct switches), on each switch's next free
    ports. A block at a time, not a device at a time: at 100,000 GPUs the fabric pass took
    0.17-0.23 s CPU cabling device by device, 0.13-0.14 so."""
    b_device, b_port = wiring.cables.columns[4:6]
    next_port = wiring.next_port
    starts = list(map(next_port.__getitem__, uppers))
    b_device += (uppers if per == 1 else [name for name in uppers for _ in range(per)]) * lowers
    if per == 1 and len(set(starts)) == 1:  # the usual case: each device one port number
        first = starts[0] + 1
        b_port += chain.from_iterable(map(repeat, port_names[first:first + lowers],
                                          repeat(len(uppers))))
    else:
        for lower in range(lowers):
            for start in starts:
                first = start + lower * per + 1
                b_port += port_names[first:first + per]
    next_port.update(zip(uppers, map(add, starts, repeat(lowers * per)), strict=True))


def wire_uplinks(wiring: Wiring, tree: FatTree, names: dict[str, list[str]],
                  models: dict[str, Any]) -> None:
    """Leaf-spine and spine-core cables, spread evenly; uplinks take each switch's top ports."""
    if tree.tiers < 2:
        return
    spines, cores = names["spine"], names.get("core", [])
    for tier, tier_names in (("spine", spines), ("core", cores)):
        for name in tier_names:
            wiring.next_port[name] = 0
            wiring.tier[name] = tier
    leaves_per_pod = tree.sus_per_pod * tree.leaves_per_su
    per_pod = tree.spines_per_pod
    _connect(wiring, names["leaf"],
             lambda i: spines[i // leaves_per_pod * per_pod:(i // leaves_per_pod + 1) * per_pod],
             tree.leaf_spine_links, models["leaf"].ports - tree.leaf_up,
             min(models["leaf"].port_speed_gbps, models["spine"].port_speed_gbps), "leaf-spine")
    if tree.tiers < 3:
        return
    per_group = tree.cores_per_group
    # spine j of every pod -> core group j
    _connect(wiring, spines,
             lambda i: cores[i % per_pod * per_group:(i % per_pod + 1) * per_group],
             tree.spine_core_links, models["spine"].ports - tree.spine_up,
             min(models["spine"].port_speed_gbps, models["core"].port_speed_gbps), "spine-core")


def _connect(wiring: Wiring, lowers: list[str], uppers_of: Callable[[int], list[str]],
             links: int, first_port: int, speed: int, tier: str) -> None:
    """Cable each lower switch to each of its upper switches ``links`` times, from its
    ``first_port``+1 on; upper switches take their ports in order. Column by column, and the
    lower switches alike in their upper ones as one block: a 100,000-GPU fabric has 200,000
    uplinks."""
    columns = wiring.cables.columns
    next_port = wiring.next_port
    before = dict(next_port)
    if not _connect_sets(wiring, lowers, [tuple(uppers_of(i)) for i in range(len(lowers))],
                         links, first_port, speed, tier):
        _connect_blocks(wiring, lowers, uppers_of, links, first_port, speed, tier)
    # each upper switch's Gb/s of this tier: the ports it gave, at the tier's rate
    lower_set = set(lowers)
    for name, used in next_port.items():
        if name not in lower_set and used != before.get(name, 0):
            wiring.add_gbps(name, tier, (used - before.get(name, 0)) * speed)
    added = len(columns[2]) - len(columns[0])
    for column, value in ((0, wiring.network), (1, tier), (6, speed), (7, wiring.link)):
        columns[column].extend([value] * added)


def _connect_sets(wiring: Wiring, lowers: list[str], ups: list[tuple[str, ...]], links: int,
                  first_port: int, speed: int, tier: str) -> bool:
    """_connect for lowers whose sets of uppers are disjoint (a pod's spines, a core group),
    each set's switches at one next port: all columns at once, each lower's ports on a set
    counted per set. A fat tree's uplinks are so (1,566 spines to 18 core groups at 100,000
    GPUs: block by block, one spine a block, it took 0.03 s). False, having done nothing,
    for any other shape."""
    next_port = wiring.next_port
    sets = {t: t for t in ups}  # each distinct set once, one tuple for all its lowers
    flat = list(chain.from_iterable(sets))
    if len(flat) != len(set(flat)) or not set(flat).isdisjoint(lowers) or any(
            len({next_port[u] for u in t}) > 1 for t in sets):
        return False
    ups = list(map(sets.__getitem__, ups))
    sizes = [len(t) * links for t in ups]
    columns = wiring.cables.columns
    columns[2].extend(chain.from_iterable(map(repeat, lowers, sizes)))
    columns[3].extend(chain.from_iterable(
        PORT_NAMES[first_port + 1:first_port + 1 + n] for n in sizes))
    each = {t: t if links == 1 else tuple(u for u in t for _ in range(links)) for t in sets}
    columns[4].extend(chain.from_iterable(map(each.__getitem__, ups)))
    cabled = dict.fromkeys(sets, 0)  # lowers cabled to each set so far
    start = {t: next_port[t[0]] for t in sets if t}
    b_port = columns[5]
    for t in ups:  # the k-th lower of a set takes its switches' ports start + k * links + 1...
        if t:
            first = start[t] + cabled[t] * links + 1
            b_port += PORT_NAMES[first:first + links] * len(t)
            cabled[t] += 1
    next_port.update(zip(lowers, map(first_port.__add__, sizes), strict=True))
    for name, n in zip(lowers, sizes, strict=True):
        wiring.add_gbps(name, tier, n * speed)
    for t, k in cabled.items():
        next_port.update(dict.fromkeys(t, start[t] + k * links if t else 0))
    wiring.up.update(zip(lowers, ups, strict=True))
    wiring.uplinks.update(dict.fromkeys(lowers, (speed, links)))
    wiring.links[tier] = wiring.links.get(tier, 0) + sum(sizes)
    return True


def _connect_blocks(wiring: Wiring, lowers: list[str], uppers_of: Callable[[int], list[str]],
                    links: int, first_port: int, speed: int, tier: str) -> None:
    """_connect block by block: the lowers alike in their uppers, consecutive, as one."""
    columns = wiring.cables.columns
    a_device, a_port = columns[2:4]
    next_port, up, uplinks = wiring.next_port, wiring.up, wiring.uplinks
    kind = (speed, links)
    for uppers, block in groupby(range(len(lowers)), lambda index: tuple(uppers_of(index))):
        names = [lowers[index] for index in block]
        n = len(uppers) * links
        a_device += chain.from_iterable(map(repeat, names, repeat(n)))
        a_port += PORT_NAMES[first_port + 1:first_port + 1 + n] * len(names)
        next_port.update(dict.fromkeys(names, first_port + n))
        for name in names:
            wiring.add_gbps(name, tier, n * speed)
        _take_ports(wiring, len(names), uppers, links)
        up.update(dict.fromkeys(names, uppers))
        uplinks.update(dict.fromkeys(names, kind))
        wiring.links[tier] = wiring.links.get(tier, 0) + n * len(names)

