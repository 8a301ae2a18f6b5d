"""Fabric diagrams: one scalable unit's tiers, the whole fabric by scalable unit, NVLink domains.

Counts come from the fabric's wiring tables (plan.fabric_wiring: each device's tier, SU and
the switches above it, with the rate and number of cables to each), so a drawing says what
the cabling files list, summed: the cables from a group of devices up to the next tier are
sum(len(up[d]) x uplinks[d].count) over the group, at uplinks[d].rate. Oversubscription is
FabricPlan.oversubscription (a tier's downlink over uplink bandwidth, the busiest switch).
A tier of more than BOXES switches is drawn as one box with its count; the whole fabric
draws at most SU_BOXES scalable units (the rest, cabled alike, as one box): never one line
per cable, so a drawing stays a few hundred objects at any size.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from cluster_iac.formats import svg
from cluster_iac.plan import Plan
from cluster_iac.plan.model import NvlinkDomain
from cluster_iac.plan.wiring import FabricWiring

BOXES = 36
SU_BOXES = 16
DOMAINS = 16
MARGIN = 10
TIER_H = 90
BOX_W, BOX_H = 28, 24
WIDTH = 1100
NAMES = {"node": ("host", "hosts"), "leaf": ("leaf", "leaves"), "spine": ("spine", "spines"),
         "core": ("core", "cores")}


def _count(n: int, tier: str) -> str:
    """'1 leaf', '8 leaves'."""
    return f"{n:,} {NAMES[tier][n != 1]}"
FILL = {"node": svg.COLOURS["compute"], **svg.TIERS["compute"]}


def paths(plan: Plan) -> list[tuple[str, str]]:
    """(path, caption) of each fabric drawing, in order: what report.html embeds."""
    out = []
    for network in sorted(plan.fabric_wiring):
        out.append((f"drawings/fabric-{network}-su.svg",
                    f"{network} fabric: one scalable unit's tiers"))
        out.append((f"drawings/fabric-{network}.svg",
                    f"{network} fabric: scalable units and their uplinks"))
    if any(domain.kind == "rack" for domain in plan.nvlink_domains):
        out.append(("drawings/nvlink.svg", "NVLink domains (rack scale)"))
    return out


def drawings(plan: Plan) -> dict[str, svg.Drawing]:
    """Each fabric drawing by its path."""
    out: dict[str, svg.Drawing] = {}
    for network in sorted(plan.fabric_wiring):
        wiring = plan.fabric_wiring[network]
        out[f"drawings/fabric-{network}-su.svg"] = _unit(plan, network, wiring)
        out[f"drawings/fabric-{network}.svg"] = _whole(plan, network, wiring)
    racks = [domain for domain in plan.nvlink_domains if domain.kind == "rack"]
    if racks:
        out["drawings/nvlink.svg"] = _nvlink(plan, racks)
    return out


def _cables(wiring: FabricWiring, devices: Iterable[str]) -> Counter[int]:
    """Cables from these devices to the tier above, by rate (Gb/s)."""
    found: Counter[int] = Counter()
    for name in devices:
        rate, each = wiring.uplinks.get(name, (0, 0))
        found[rate] += len(wiring.up.get(name, ())) * each
    return found


def _rates(cables: Counter[int]) -> str:
    return ", ".join(f"{n:,} x {rate} Gb/s" for rate, n in sorted(cables.items()) if n)


def _unit(plan: Plan, network: str, wiring: FabricWiring) -> svg.Drawing:
    """SU 1's hosts and leaves and every switch above them, tier by tier, bottom up."""
    fabric = plan.fabrics[network]
    members: dict[str, list[str]] = defaultdict(list)
    for name, tier in wiring.tier.items():
        if tier in ("node", "leaf") and wiring.su.get(name) == 1:
            members[tier].append(name)
    tiers = ["node", "leaf"]
    above = members["leaf"]
    for tier in ("spine", "core"):
        found = list(dict.fromkeys(up for name in above for up in wiring.up.get(name, ())))
        if not found:
            break
        members[tier], above = found, found
        tiers.append(tier)
    height = MARGIN * 2 + 40 + len(tiers) * TIER_H
    root = svg.drawing(WIDTH, height, f"{network} fabric: scalable unit 1")
    root.text(MARGIN, MARGIN + 14,
              f"{network} fabric, scalable unit 1 of {fabric.scalable_units}: {fabric.design}, "
              f"{fabric.technology}, {fabric.tiers} tier(s), {fabric.link_speed_gbps} Gb/s ports",
              size=12, bold=True)
    centre = {}
    for level, tier in enumerate(tiers):
        y = height - MARGIN - (level + 1) * TIER_H + 30
        centre[tier] = y
        _tier(root, tier, members[tier], y, wiring.rail)
    for lower, upper in zip(tiers, tiers[1:], strict=False):
        cables = _cables(wiring, members[lower])
        x = WIDTH // 2
        root.line(x, centre[lower], x, centre[upper] + BOX_H, stroke="#546e7a", width=3)
        label = f"{_rates(cables)} ({lower}-{upper})"
        if lower in fabric.tier_bandwidth_gbps:
            down, up = fabric.tier_bandwidth_gbps[lower]
            ratio = fabric.oversubscription(lower)
            label += f"; oversubscription {ratio:.3g}:1 ({down:,} down / {up:,} up Gb/s)"
        root.text(x + 8, (centre[lower] + centre[upper] + BOX_H) // 2 + 4, label)
    return root


def _tier(root: svg.Drawing, tier: str, names: list[str], y: int, rails: Mapping[str, int]
          ) -> None:
    """One tier's switches (or hosts) as a row of boxes, a rail-optimized leaf marked with its
    rail; more than BOXES as one box."""
    with root.group({"tier": tier, "count": str(len(names))}):
        root.text(MARGIN, y + 16, _count(len(names), tier), bold=True)
        left = MARGIN + 110
        if len(names) > BOXES:
            root.rect(left, y, WIDTH - left - MARGIN, BOX_H, FILL[tier],
                      tip=f"{names[0]} ... {names[-1]}")
            root.text(left + 6, y + 16, f"{names[0]} ... {names[-1]} ({len(names)})")
            return
        step = min(BOX_W + 2, (WIDTH - left - MARGIN) // max(len(names), 1))
        left += (WIDTH - left - MARGIN - step * len(names)) // 2  # centred under the trunk
        for index, name in enumerate(names):
            rail = rails.get(name)
            root.rect(left + index * step, y, step - 2, BOX_H, FILL[tier], {"device": name},
                      tip=f"{name}, rail {rail}" if rail else name)
            if rail:
                root.text(left + index * step + step // 2 - 1, y + 16, f"R{rail}", size=8,
                          anchor="middle")


def _whole(plan: Plan, network: str, wiring: FabricWiring) -> svg.Drawing:
    """Every SU as a box (hosts, leaves) with its cables up; the spine and core tiers."""
    fabric = plan.fabrics[network]
    hosts: Counter[int] = Counter()
    leaves: dict[int, list[str]] = defaultdict(list)
    for name, tier in wiring.tier.items():
        if tier == "node":
            hosts[wiring.su.get(name, 0)] += 1
        elif tier == "leaf":
            leaves[wiring.su.get(name, 0)].append(name)
    units = sorted(set(hosts) | set(leaves))
    shown, rest = units[:SU_BOXES - 1], units[SU_BOXES - 1:]
    if len(rest) == 1:
        shown, rest = units, []
    spines = [n for n, t in wiring.tier.items() if t == "spine"]
    cores = [n for n, t in wiring.tier.items() if t == "core"]
    levels = 1 + bool(spines) + bool(cores)  # SUs, and the tiers above them
    height = MARGIN * 2 + 40 + levels * TIER_H + 40
    root = svg.drawing(WIDTH, height, f"{network} fabric: scalable units")
    root.text(MARGIN, MARGIN + 14,
              f"{network} fabric: {fabric.scalable_units} scalable unit(s) of "
              f"{fabric.scalable_unit_nodes} nodes, {sum(fabric.switch_counts.values())} "
              f"switches, {sum(fabric.link_counts.values()):,} cables", size=12, bold=True)
    base = height - MARGIN - TIER_H
    slots = len(shown) + (1 if rest else 0)
    step = (WIDTH - 2 * MARGIN) // max(slots, 1)
    spine_y, core_y = base - TIER_H - 20, base - 2 * TIER_H - 20
    if spines:
        root.rect(MARGIN, spine_y, WIDTH - 2 * MARGIN, BOX_H, FILL["spine"],
                  {"tier": "spine", "count": str(len(spines))},
                  tip=f"{spines[0]} ... {spines[-1]}")
        root.text(MARGIN + 6, spine_y + 16, _count(len(spines), "spine"), bold=True)
    if cores:
        root.rect(MARGIN, core_y, WIDTH - 2 * MARGIN, BOX_H, FILL["core"],
                  {"tier": "core", "count": str(len(cores))})
        root.text(MARGIN + 6, core_y + 16, _count(len(cores), "core"), bold=True)
        up = _cables(wiring, spines)
        root.line(WIDTH // 2, spine_y, WIDTH // 2, core_y + BOX_H, width=3)
        root.text(WIDTH // 2 + 8, (spine_y + core_y + BOX_H) // 2 + 4,
                  f"{_rates(up)} (spine-core)")
    groups = [([unit], f"SU {unit}") for unit in shown]
    if rest:
        groups.append((rest, f"SU {rest[0]}-{rest[-1]}"))
    for index, (members, label) in enumerate(groups):
        x = MARGIN + index * step
        unit_hosts = sum(hosts[u] for u in members)
        unit_leaves = [name for u in members for name in leaves[u]]
        root.rect(x, base, step - 6, 50, "#e8f5e9",
                  {"su": label, "hosts": str(unit_hosts), "leaves": str(len(unit_leaves))},
                  tip=f"{label}: {unit_hosts} hosts, {len(unit_leaves)} leaves")
        root.text(x + 4, base + 14, label, bold=True, size=9)
        root.text(x + 4, base + 28, _count(unit_hosts, "node"), size=9)
        root.text(x + 4, base + 42, _count(len(unit_leaves), "leaf"), size=9)
        if spines:
            leaf_spine = sum(_cables(wiring, unit_leaves).values())
            middle = x + (step - 6) // 2
            root.line(middle, base, middle, spine_y + BOX_H)
            root.text(middle + 3, base - 20, f"{leaf_spine:,}", size=9, rotate=True)
    if spines:
        root.text(MARGIN, base - 4 - TIER_H // 2 - 20,
                  f"leaf-spine cables per SU at {fabric.link_speed_gbps} Gb/s", size=9,
                  fill="#455a64")
    return root


def _nvlink(plan: Plan, domains: list[NvlinkDomain]) -> svg.Drawing:
    """Each rack-scale NVLink domain: its compute trays and NVLink switch trays."""
    shown = domains[:DOMAINS]
    per_row = 4
    cell_w, cell_h = (WIDTH - 2 * MARGIN) // per_row, 150
    rows = -(-len(shown) // per_row)
    height = MARGIN * 2 + 30 + rows * cell_h + (20 if len(domains) > len(shown) else 0)
    root = svg.drawing(WIDTH, height, "NVLink domains")
    boards = sum(1 for d in plan.nvlink_domains if d.kind == "board")
    root.text(MARGIN, MARGIN + 14,
              f"{len(domains)} rack-scale NVLink domain(s)"
              + (f", {boards} board domain(s)" if boards else ""), size=12, bold=True)
    for index, domain in enumerate(shown):
        x = MARGIN + (index % per_row) * cell_w
        y = MARGIN + 30 + (index // per_row) * cell_h
        with root.group({"domain": domain.name, "gpus": str(domain.gpus)}):
            root.rect(x, y, cell_w - 10, cell_h - 10, "#f1f8e9")
            root.text(x + 6, y + 16, f"{domain.name}: {domain.gpus} GPUs", bold=True)
            root.text(x + 6, y + 30, f"{len(domain.nodes)} compute trays, "
                      f"{len(domain.switch_trays)} NVLink switch trays", size=9)
            root.text(x + 6, y + 43, f"{domain.gpu_bandwidth_gbs:g} GB/s per GPU, "
                      "one direction", size=9)
            for column, names, fill in ((0, domain.nodes, svg.COLOURS["compute"]),
                                        (1, domain.switch_trays, svg.COLOURS["switch:nvlink"])):
                for slot, name in enumerate(names[:20]):
                    root.rect(x + 10 + column * 130 + (slot % 10) * 11,
                              y + 56 + (slot // 10) * 30, 9, 24, fill, {"device": name},
                              tip=name)
    if len(domains) > len(shown):
        root.text(MARGIN, height - MARGIN - 4,
                  f"and {len(domains) - len(shown)} more domains like these", size=10)
    return root
