"""Compute and storage fabrics: fat trees sized by plan/fattree.py, wired port by port."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain, groupby, repeat
from operator import add
from typing import Any, NamedTuple

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.hostlist import HostlistError, expand
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.plan import FabricPlan, Plan
from cluster_iac.plan.fattree import (
    FabricSizeError,
    FatTree,
    PlannedSizeError,
    parse_ratio,
    size_fat_tree,
)
from cluster_iac.plan.model import Switch
from cluster_iac.plan.physical import LinkBuilder
from cluster_iac.plan.wiring import FabricWiring
from cluster_iac.spec import ClusterSpec

# Switch-name prefix per fabric: what a technician reads on the label.
PREFIX = {"compute": {"infiniband": "ib", "roce": "eth"}, "storage": {"infiniband": "sib",
                                                                     "ethernet": "seth"}}
NIC_ROLE = {"compute": "compute", "storage": "storage"}


class _Endpoint(NamedTuple):
    """A host that plugs into the fabric with ``nics`` ports at ``speed_gbps`` (a named
    tuple: 12,500 of them at 100,000 GPUs, made 4x faster than a frozen dataclass)."""

    hostname: str
    rack: str
    nics: int
    speed_gbps: int
    link: str


# Switch port names, made once: a 100,000-GPU fabric names half a million of them. (The
# largest catalog switch has 144 ports; the fabric is sized within each switch's radix.)
PORT_NAMES = tuple(f"p{i}" for i in range(4097))


def split_port_names(ports: int, legs: int) -> tuple[str, ...]:
    """A leaf's host-facing port names when each of its ``ports`` cages is split into
    ``legs``: the n-th host port (from 1) is leg s of cage p, 'p<p>s<s>' (an 800G cage's two
    400G legs are p1s1 and p1s2, as the splitter cable's two ends are labelled)."""
    return ("p0", *(f"p{cage}s{leg}" for cage in range(1, ports + 1)
                    for leg in range(1, legs + 1)))


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


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(eq=False, repr=False)
class _Wiring:
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


def build_fabric(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each configured fabric: its cables, its wiring tables and its summary."""
    wirings, fabrics = dict(plan.fabric_wiring), dict(plan.fabrics)
    switches = list(plan.switches)
    links = plan.links
    problems: list[Diagnostic] = []
    for network in ("compute", "storage"):
        config = getattr(plan.settings.fabric, network)
        if config is None:
            continue
        path: SpecPath = ("fabric", network)
        try:
            wiring, summary = _build_one(plan, network, config, path)
        except CompileError as error:
            problems += error.diagnostics
            continue
        wirings[network] = wiring.freeze()
        fabrics[network] = summary
        switches += wiring.switches
        links += wiring.cables.freeze()
    if problems:
        raise CompileError(problems)
    return replace(plan, fabric_wiring=wirings, fabrics=fabrics, switches=tuple(switches),
                   links=links)


def _build_one(plan: Plan, network: str, config: Any, path: SpecPath) -> tuple[_Wiring, FabricPlan]:
    models = _switch_models(plan, config)
    leaf = models["leaf"]
    endpoints = _endpoints(plan, network, config, leaf, path)
    if plan.lock.exists:
        endpoints = locked_order(plan.lock, network, endpoints)
    design = getattr(config, "design", "plain")
    ratio = parse_ratio(config.oversubscription)
    tiers = getattr(config, "tiers", "auto")
    legs = breakout_legs(leaf, {e.speed_gbps for e in endpoints if e.rack != RESERVED})
    try:
        tree = size_fat_tree(len(endpoints), max(e.nics for e in endpoints), leaf.ports,
                             models["spine"].ports, models["core"].ports, ratio, design,
                             su_nodes=getattr(config, "scalable_unit_nodes", None),
                             tiers=None if tiers == "auto" else int(tiers),
                             planned_sus=getattr(config, "planned_scalable_units", None),
                             node_ports=sum(e.nics for e in endpoints), legs=legs)
    except PlannedSizeError as error:
        raise CompileError([Diagnostic("FABRIC-PLANNED", f"fabric.{network}: {error}",
                                       (*path, "planned_scalable_units"))]) from None
    except FabricSizeError as error:
        raise CompileError([Diagnostic("FABRIC-SIZE", f"fabric.{network}: {error}",
                                       (*path, "leaf_switch"))]) from None
    technology = config.technology
    wiring = _Wiring(network, PREFIX[network][technology],
                     "infiniband" if technology == "infiniband" else "ethernet", tree.design)
    if legs > 1:
        wiring.leaf_ports = split_port_names(leaf.ports, legs)
    names = _name_switches(tree, wiring.prefix, _locked_widths(plan.lock, wiring.prefix))
    leaf_racks = _wire_nodes(wiring, tree, endpoints, names["leaf"], leaf.port_speed_gbps)
    # cages the hosts' legs take on each leaf (a split cage is one port)
    host_cages = sum(-(-wiring.next_port[name] // legs) for name in names["leaf"])
    if plan.lock.exists:
        _drop_reserved(wiring, endpoints)
        _check_locked(plan.lock, wiring)
    _wire_uplinks(wiring, tree, names, models)
    racks = _switch_racks(plan, config, names, leaf_racks, path)
    # Upper tiers first, leaves last: a new scalable unit appends its leaves (power cords and
    # rack units follow this order).
    for tier in ("core", "spine", "leaf"):
        tier_names = names.get(tier, [])
        model_key = _model_key(config, tier)
        # the tier's switches differ in name and rack only: the fields after the rack, the
        # catalog's figures, looked up once per tier (4,100 switches at 100,000 GPUs)
        fixed = Switch.figures(plan.catalog.switches[model_key], (*path, f"{tier}_switch"))
        wiring.switches += [Switch(name, model_key, network, tier, _rack(plan, name, racks),
                                   *fixed) for name in tier_names]
    return wiring, _summary(wiring, tree, network, technology, leaf.port_speed_gbps, path,
                            legs, host_cages)


def _rack(plan: Plan, name: str, racks: dict[str, str]) -> str:
    """The switch's rack: the lock's (place_devices checks it still exists), or the one the
    fabric's racks give it in turn."""
    entry = plan.lock.get("place", "", name) if plan.lock.exists else None
    return entry.value[0] if entry is not None else racks[name]


def locked_order(lock: Any, network: str, endpoints: list[_Endpoint]) -> list[_Endpoint]:
    """The hosts in the fabric positions the lock records (a host's leaf and ports follow
    from its position); a retired host's position is held by a stand-in of no bandwidth
    that takes its ports, and each new host takes the first free position, in order."""
    held = {e.key[2]: e for e in lock.of_kind("fabric", network)}
    present = {end.hostname for end in endpoints}
    slots: dict[int, _Endpoint] = {}
    for end in endpoints:
        entry = held.get(end.hostname)
        if entry is not None and entry.value[0] not in slots:
            slots[entry.value[0]] = end
    link = endpoints[0].link
    for name, entry in held.items():
        if name not in present and entry.value[0] not in slots:
            slots[entry.value[0]] = _Endpoint(name, RESERVED, entry.value[1], 0, link)
    placed = set(map(id, slots.values()))
    new = iter([end for end in endpoints if id(end) not in placed])
    ordered: list[_Endpoint] = []
    for slot in range(max(slots, default=-1) + 1):
        taken = slots.get(slot) or next(new, None)
        if taken is not None:
            ordered.append(taken)
    return ordered + list(new)


RESERVED = ""  # the rack of a stand-in that holds a retired host's fabric position


def _drop_reserved(wiring: _Wiring, endpoints: list[_Endpoint]) -> None:
    """The stand-ins' cables and table entries removed, their ports left unused."""
    gone = {end.hostname for end in endpoints if end.rack == RESERVED}
    if not gone:
        return
    columns = wiring.cables.columns
    keep = [i for i, device in enumerate(columns[2]) if device not in gone]
    for column in columns:
        column[:] = [column[i] for i in keep]
    for table in (wiring.tier, wiring.su, wiring.up, wiring.uplinks):
        for name in gone:
            table.pop(name, None)
    wiring.links["node-leaf"] -= sum(end.nics for end in endpoints if end.rack == RESERVED)


def _check_locked(lock: Any, wiring: _Wiring) -> None:
    """A host the lock places whose first cable would land elsewhere (its position's ports
    moved: the leaves' size changed, or a freed position went to a host of other NICs) is
    a conflict, never a silent move."""
    columns = wiring.cables.columns
    first: dict[str, tuple[str, str]] = {}
    for device, switch, port in zip(columns[2], columns[4], columns[5], strict=True):
        first.setdefault(device, (switch, port))
    problems = []
    for entry in lock.of_kind("fabric", wiring.network):
        name = entry.key[2]
        now = first.get(name)
        was = (entry.value[2], entry.value[3])
        if now is not None and now != was and name not in lock.reallocated:
            problems.append(lock.error(
                entry, "LOCK-CONFLICT", f"{name}'s first {wiring.network} fabric cable would "
                f"move from {was[0]} {was[1]} to {now[0]} {now[1]}", lock.way_out(name)))
    if problems:
        raise CompileError(problems)


def _model_key(config: Any, tier: str) -> str:
    leaf = config.leaf_switch
    spine = getattr(config, "spine_switch", None) or leaf
    core = getattr(config, "core_switch", None) or spine
    return {"leaf": leaf, "spine": spine, "core": core}[tier]


def _switch_models(plan: Plan, config: Any) -> dict[str, Any]:
    """Catalog entries of each tier (check_references has already rejected unknown models)."""
    return {tier: plan.catalog.switches[_model_key(config, tier)]
            for tier in ("leaf", "spine", "core")}


def _endpoints(plan: Plan, network: str, config: Any, leaf: Any,
               path: SpecPath) -> list[_Endpoint]:
    """Hosts with NICs of the fabric's role, in plan order; a NIC of the wrong link layer
    (an Ethernet port on an InfiniBand fabric) is an error, not a silent omission."""
    role = NIC_ROLE[network]
    want = "infiniband" if config.technology == "infiniband" else "ethernet"
    found: list[_Endpoint] = []
    problems: list[Diagnostic] = []
    # Compute nodes last, so that adding some takes the next leaf ports and moves no server
    # (a storage fabric serves both); otherwise in spec order.
    # node type -> (NICs, Gb/s, link layer), or None without NICs of the role or with NICs
    # of the wrong link layer (reported once per type)
    ports: dict[str, tuple[int, int, str] | None] = {}
    for node in sorted(plan.nodes, key=lambda n: n.role == "compute"):
        if node.node_type not in ports:
            ports[node.node_type] = _ports(plan, node.node_type, role, want, leaf, problems,
                                           network, config.technology, path)
        found_ports = ports[node.node_type]
        if found_ports is not None:
            found.append(_Endpoint(node.hostname, node.rack, *found_ports))
    if problems:
        raise CompileError(problems)
    if not found:
        raise CompileError([Diagnostic("FABRIC-EMPTY", f"fabric.{network} is configured but "
                                       f"no node has {role} NICs", path)])
    return found


def _ports(plan: Plan, type_name: str, role: str, want: str, leaf: Any,
           problems: list[Diagnostic], network: str, technology: str,
           path: SpecPath) -> tuple[int, int, str] | None:
    """A node type's (NICs, Gb/s, link layer) on the fabric, or None."""
    node_type = plan.node_types[type_name]
    nics = node_type.nics_of(role)
    if not nics:
        return None
    link = plan.catalog.nics[nics[0].model].link
    if link != want:
        problems.append(Diagnostic(
            "FABRIC-LINK-LAYER", f"node type '{type_name}' has {link} {role} NICs "
            f"({nics[0].model}) but fabric.{network} is {technology}",
            (*path, "technology"),
            hint=f"give node type '{type_name}' {want} {role} NICs, or change "
                 f"the fabric's technology"))
        return None
    speed = min(min(n.speed_gbps for n in nics), leaf.port_speed_gbps)
    return node_type.nic_count(role), speed, link


def _name_switches(tree: FatTree, prefix: str,
                   widths: dict[str, int] | None = None) -> dict[str, list[str]]:
    """Leaves by SU and rail (rail-optimized) or by number; spines and cores by number. The
    numbers are as wide as the planned fabric needs, or as ``widths`` (_locked_widths) says
    for a family of names the lock already holds: a tenth leaf added to nine named
    'leaf-1'...'leaf-9' is 'leaf-10', and the nine keep their names."""
    widths = widths or {}
    names: dict[str, list[str]] = {"leaf": []}
    su_w = widths.get("su", len(str(max(tree.sus, tree.planned_sus))))
    leaf_w = widths.get("leaf", len(str(max(tree.sus, tree.planned_sus) * tree.leaves_per_su)))
    per_rail = tree.leaves_per_su // tree.rails
    for su in range(1, tree.sus + 1):
        for rail in range(1, tree.rails + 1):
            for j in range(1, per_rail + 1):
                if tree.design == "rail-optimized":
                    suffix = f"-{j}" if per_rail > 1 else ""
                    names["leaf"].append(f"{prefix}-leaf-su{su:0{su_w}d}-r{rail}{suffix}")
                else:
                    index = (su - 1) * tree.leaves_per_su + j
                    names["leaf"].append(f"{prefix}-leaf-{index:0{leaf_w}d}")
    for tier, count, planned in (("spine", tree.spines, tree.planned_spines),
                                 ("core", tree.cores, tree.cores)):
        if count:
            width = widths.get(tier, len(str(planned)))
            names[tier] = [f"{prefix}-{tier}-{i:0{width}d}" for i in range(1, count + 1)]
    return names


def _locked_widths(lock: Any, prefix: str) -> dict[str, int]:
    """How wide the numbers of the fabric's switch names are in the lock ('su', 'leaf',
    'spine', 'core'): the shortest number of each family (a width pads to at least that
    many digits, so 'leaf-10' beside 'leaf-1' says 1). Empty without a lock."""
    if not lock.exists:
        return {}
    family = re.compile(rf"{re.escape(prefix)}-(?:leaf-su(?P<su>\d+)-r\d+(?:-\d+)?|"
                        rf"leaf-(?P<leaf>\d+)|spine-(?P<spine>\d+)|core-(?P<core>\d+))")
    widths: dict[str, int] = {}
    for entry in lock.of_kind("place", ""):
        name = entry.key[2]
        if not name.startswith(prefix):
            continue
        found = family.fullmatch(name)
        if found is not None:
            kind, digits = next((k, v) for k, v in found.groupdict().items() if v is not None)
            widths[kind] = min(widths.get(kind, len(digits)), len(digits))
    return widths


def _wire_nodes(wiring: _Wiring, tree: FatTree, endpoints: list[_Endpoint],
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


def _leaf_group(k: int, end: _Endpoint, tree: FatTree,
                rail_optimized: bool) -> tuple[int, int, int, int]:
    """(scalable unit from 0, first leaf, NICs, Gb/s) of the k-th host: consecutive hosts
    alike in all four are cabled as one block (a rail leaf's 72 hosts at 100,000 GPUs)."""
    su, pos = divmod(k, tree.su_nodes)
    if rail_optimized:  # its leaf on rail 1; the others follow every per_rail leaves
        return su, su * tree.leaves_per_su + pos // tree.nodes_per_leaf, end.nics, end.speed_gbps
    return su, k // tree.nodes_per_leaf, end.nics, end.speed_gbps


def _take_ports(wiring: _Wiring, lowers: int, uppers: tuple[str, ...], per: int,
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


def _wire_uplinks(wiring: _Wiring, tree: FatTree, names: dict[str, list[str]],
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


def _connect(wiring: _Wiring, lowers: list[str], uppers_of: Callable[[int], list[str]],
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


def _connect_sets(wiring: _Wiring, lowers: list[str], ups: list[tuple[str, ...]], links: int,
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


def _connect_blocks(wiring: _Wiring, lowers: list[str], uppers_of: Callable[[int], list[str]],
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


def _switch_racks(plan: Plan, config: Any, names: dict[str, list[str]],
                  leaf_racks: dict[str, str], path: SpecPath) -> dict[str, str]:
    """The rack of each switch: each tier dealt round-robin over the spec's fabric racks, so a
    new scalable unit's leaves move no spine or core; or beside the nodes."""
    ordered = [n for tier in ("leaf", "spine", "core") for n in names.get(tier, [])]
    if config.racks:
        try:
            racks = expand(config.racks)
        except HostlistError as error:
            raise CompileError([Diagnostic("SPEC-HOSTLIST", f"fabric racks: {error}",
                                           (*path, "racks"))]) from None
        known = {r.name for r in plan.racks}
        unknown = [r for r in racks if r not in known]
        if unknown:
            raise CompileError([Diagnostic(
                "SPEC-UNKNOWN-RACK", f"fabric rack '{unknown[0]}' is not a rack of any row",
                (*path, "racks"), hint=did_you_mean(unknown[0], sorted(known)))])
        return {name: racks[i % len(racks)] for tier_names in names.values()
                for i, name in enumerate(tier_names)}
    first_leaf_rack = leaf_racks[names["leaf"][0]]
    return {name: leaf_racks.get(name, first_leaf_rack) for name in ordered}


def _summary(wiring: _Wiring, tree: FatTree, network: str, technology: str, speed: int,
             path: SpecPath, legs: int, host_cages: int) -> FabricPlan:
    bandwidth: dict[str, tuple[int, int]] = {}
    # switch -> {cable tier -> Gb/s}, counting each cable at both of its ends
    per_switch = wiring.gbps
    for tier, below, above in (("leaf", "node-leaf", "leaf-spine"),
                               ("spine", "leaf-spine", "spine-core")):
        if tree.tiers <= (1 if tier == "leaf" else 2):
            continue
        busiest = (0, 1)
        for name, of_tier in wiring.tier.items():
            if of_tier != tier:
                continue
            sums = per_switch.get(name, {})
            down, up = sums.get(below, 0), sums.get(above, 0)
            if up and down * busiest[1] > busiest[0] * up:
                busiest = (down, up)
        bandwidth[tier] = busiest
    # switch ports in use: both ends of each switch-to-switch cable, and the leaves' host
    # ports (split cages counted once)
    used = 2 * sum(wiring.links.values()) - wiring.links.get("node-leaf", 0)
    if legs > 1:
        used += host_cages - wiring.links.get("node-leaf", 0)
    ports = sum(sw.ports for sw in wiring.switches)
    counts = {tier: sum(1 for sw in wiring.switches if sw.tier == tier)
              for tier in ("leaf", "spine", "core")}
    return FabricPlan(network=network, technology=technology, design=tree.design,
                      tiers=tree.tiers, link_speed_gbps=speed,
                      scalable_unit_nodes=tree.su_nodes, scalable_units=tree.sus,
                      switch_counts={t: n for t, n in counts.items() if n},
                      link_counts=dict(wiring.links), tier_bandwidth_gbps=bandwidth,
                      spare_ports=ports - used, spec_path=path, breakout_legs=legs)
