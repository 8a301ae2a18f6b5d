"""The build_fabric pass: compute and storage fabrics, fat trees sized by plan/fattree.py and
wired port by port by compile/fabric_cables.py. Here: the hosts each fabric serves (and the
positions the lock holds for them), its switches' names, models and racks, and its summary."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.hostlist import HostlistError, expand
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.compile.fabric_cables import (
    Endpoint,
    Wiring,
    split_port_names,
    wire_nodes,
    wire_uplinks,
)
from cluster_iac.compile.fabric_links import keep_links
from cluster_iac.plan import FabricPlan, Plan
from cluster_iac.plan.fattree import (
    FabricSizeError,
    FatTree,
    PlannedSizeError,
    breakout_legs,
    parse_ratio,
    size_fat_tree,
)
from cluster_iac.plan.model import Switch
from cluster_iac.plan.wiring import LinkMove
from cluster_iac.spec import ClusterSpec

# Switch-name prefix per fabric: what a technician reads on the label.
PREFIX = {"compute": {"infiniband": "ib", "roce": "eth"}, "storage": {"infiniband": "sib",
                                                                     "ethernet": "seth"}}
NIC_ROLE = {"compute": "compute", "storage": "storage"}


def build_fabric(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each configured fabric: its cables, its wiring tables and its summary."""
    wirings, fabrics = dict(plan.fabric_wiring), dict(plan.fabrics)
    switches = list(plan.switches)
    links = plan.links
    moves: list[LinkMove] = []
    problems: list[Diagnostic] = []
    for network in ("compute", "storage"):
        config = getattr(plan.settings.fabric, network)
        if config is None:
            continue
        path: SpecPath = ("fabric", network)
        try:
            wiring, summary, moved = _build_one(plan, network, config, path)
        except CompileError as error:
            problems += error.diagnostics
            continue
        wirings[network] = wiring.freeze()
        fabrics[network] = summary
        switches += wiring.switches
        links += wiring.cables.freeze()
        moves += moved
    if problems:
        raise CompileError(problems)
    return replace(plan, fabric_wiring=wirings, fabrics=fabrics, switches=tuple(switches),
                   links=links, link_moves=tuple(moves))


def _build_one(plan: Plan, network: str, config: Any,
               path: SpecPath) -> tuple[Wiring, FabricPlan, list[LinkMove]]:
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
    wiring = Wiring(network, PREFIX[network][technology],
                     "infiniband" if technology == "infiniband" else "ethernet", tree.design)
    if legs > 1:
        wiring.leaf_ports = split_port_names(leaf.ports, legs)
    names = _name_switches(tree, wiring.prefix, _locked_widths(plan.lock, wiring.prefix))
    leaf_racks = wire_nodes(wiring, tree, endpoints, names["leaf"], leaf.port_speed_gbps)
    # cages the hosts' legs take on each leaf (a split cage is one port)
    cages = {name: -(-wiring.next_port[name] // legs) for name in names["leaf"]}
    host_cages = sum(cages.values())
    if plan.lock.exists:
        _drop_reserved(wiring, endpoints)
        _check_locked(plan.lock, wiring)
    start = len(wiring.cables.columns[0])
    wire_uplinks(wiring, tree, names, models)
    # the uplinks on the ports the lock holds for them, where the design keeps them
    moves = keep_links(plan.lock, wiring, start, {
        name: models[tier].ports for tier, tier_names in names.items() for name in tier_names},
        cages)
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
                            legs, host_cages), moves


def _rack(plan: Plan, name: str, racks: dict[str, str]) -> str:
    """The switch's rack: the lock's (place_devices checks it still exists), or the one the
    fabric's racks give it in turn."""
    entry = plan.lock.get("place", "", name) if plan.lock.exists else None
    return entry.value[0] if entry is not None else racks[name]


def locked_order(lock: Any, network: str, endpoints: list[Endpoint]) -> list[Endpoint]:
    """The hosts in the fabric positions the lock records (a host's leaf and ports follow
    from its position); a retired host's position is held by a stand-in of no bandwidth
    that takes its ports, and each new host takes the first free position, in order."""
    held = {e.key[2]: e for e in lock.of_kind("fabric", network)}
    present = {end.hostname for end in endpoints}
    slots: dict[int, Endpoint] = {}
    for end in endpoints:
        entry = held.get(end.hostname)
        if entry is not None and entry.value[0] not in slots:
            slots[entry.value[0]] = end
    link = endpoints[0].link
    for name, entry in held.items():
        if name not in present and entry.value[0] not in slots:
            slots[entry.value[0]] = Endpoint(name, RESERVED, entry.value[1], 0, link)
    placed = set(map(id, slots.values()))
    new = iter([end for end in endpoints if id(end) not in placed])
    ordered: list[Endpoint] = []
    for slot in range(max(slots, default=-1) + 1):
        taken = slots.get(slot) or next(new, None)
        if taken is not None:
            ordered.append(taken)
    return ordered + list(new)


RESERVED = ""  # the rack of a stand-in that holds a retired host's fabric position


def _drop_reserved(wiring: Wiring, endpoints: list[Endpoint]) -> None:
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


def _check_locked(lock: Any, wiring: Wiring) -> None:
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
               path: SpecPath) -> list[Endpoint]:
    """Hosts with NICs of the fabric's role, in plan order; a NIC of the wrong link layer
    (an Ethernet port on an InfiniBand fabric) is an error, not a silent omission."""
    role = NIC_ROLE[network]
    want = "infiniband" if config.technology == "infiniband" else "ethernet"
    found: list[Endpoint] = []
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
            found.append(Endpoint(node.hostname, node.rack, *found_ports))
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


def _summary(wiring: Wiring, tree: FatTree, network: str, technology: str, speed: int,
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
