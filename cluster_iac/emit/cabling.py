"""Cabling plan for crews and purchasing: every cable with both ends, a bill of materials.

Formats the rows of plan.cables (compile/plan_cabling.py); computes nothing about a cable.
The cables' labels are not a file of the tree: `cluster-iac labels` prints them from
cables.csv (cli/labels.py; their text is plan/labels.py's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.emit.base import render_template
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.csv import (
    Cells,
    Joined,
    Keyed,
    Runs,
    RunStops,
    by_value,
    csv_chunks,
    csv_text,
    table_cells,
    table_stops,
)
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables, Device

CABLE_COLUMNS = ("cable_id", "network", "a_row", "a_rack", "a_u", "a_device", "a_port",
                 "b_row", "b_rack", "b_u", "b_device", "b_port", "speed_gbps", "medium",
                 "netbox_type", "transceivers", "estimated_m", "length_m")


def render(plan: Plan) -> dict[str, str]:
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """The files, the large one (cables.csv) as Chunks (written piece by piece)."""
    cables = plan.cables
    stops = table_stops(cables)
    bom = bom_rows(cables, stops, {name: f.breakout_legs for name, f in plan.fabrics.items()
                                   if f.breakout_legs > 1}, cage_ports(plan))
    # the columns cables.csv and NetBox's cables print, checked once (table_cells keeps them
    # with the table); a cable's id is its head and its A port (plan.cables.id_head)
    shared = {name: table_cells(cables, name) for name in ("id_head", "a_port", "b_port")}
    return {
        "cabling/cables.csv": csv_chunks(CABLE_COLUMNS, _cable_columns(cables, shared, stops)),
        "cabling/bom.csv": csv_text(("item", "type", "speed_gbps", "length_m", "quantity"), bom),
        "cabling/bom.md": render_template("cabling/bom.md.j2",
                                          **_bom_context(plan, len(cables), bom)),
    }


def _bom_context(plan: Plan, total: int, bom: list[list[str]]) -> dict[str, object]:
    names = {m.key: m.name for m in cable_catalog().media}
    splitters = {(m.key, str(speed)): part for m in cable_catalog().media
                 for speed, part in m.splitters.items()}
    parts = {(m.key, str(speed), item): part for m in cable_catalog().media
             for speed, items in m.modules.items() for item, part in items.items()}
    rows = [{"item": item, "speed": speed if speed != "0" else "-",
             "name": splitters.get((key, speed), f"{names[key]}, splitter")
             if item == SPLITTER else parts.get((key, speed, item), names[key]),
             "length": length or "-", "quantity": quantity}
            for item, key, speed, length, quantity in bom]
    optics = sum(int(r["quantity"]) for r in rows if r["item"].startswith(TRANSCEIVER))
    return {"cluster": plan.cluster.name, "total": total, "optics": optics > 0,
            "optics_total": optics, "rows": rows}


def _cable_columns(c: Cables, shared: dict[str, Cells], stops: RunStops
                   ) -> list[Sequence[object] | Keyed | Runs | Joined]:
    """Each end's row, rack, U and device written once per device; the network, the line
    rate with the medium (its NetBox type and transceivers), and the length once per run
    (the cable table holds a few thousand runs of each)."""
    media = {m.key: (m.key, m.netbox_type, m.transceivers) for m in cable_catalog().media}
    ends = _Ends(c)
    return [Joined(shared["id_head"], shared["a_port"]), stops.runs("network"),
            Keyed(c.a_device, ends, 4), shared["a_port"], Keyed(c.b_device, ends, 4),
            shared["b_port"],
            stops.runs("speed_gbps", "medium", width=4,
                       cells=lambda speed, medium: (speed, *media[medium])),
            by_value(c.estimated_m), stops.runs("length_m")]


def _starts(stops: list[int]) -> list[int]:
    return [0, *stops[:-1]] if stops else []


# A device's (row, rack, U, name), the cells of a cable end
_END_CELLS = itemgetter(*map(Device._fields.index, ("row", "rack", "u", "name")))


class _Ends(dict[str, tuple[str, str, "int | None", str]]):
    """Device name -> (row, rack, U, name) of a cable end; empty for a device with no place."""

    def __init__(self, c: Cables) -> None:
        super().__init__(zip(c.devices, map(_END_CELLS, c.devices.values()), strict=True))

    def __missing__(self, name: str) -> tuple[str, str, int | None, str]:
        return ("", "", None, name)


SPLITTER = "splitter cable"  # the BOM's item for a split switch port's copper cable
TRANSCEIVER = "transceiver"  # the BOM's item for an optical link end's module (see _optic)


def cage_ports(plan: Plan) -> dict[tuple[str, str], int]:
    """(network, device model) -> ports one physical cage of that device carries there, for
    the models with more than one (switches under network '', any network): QM9700's
    twin-port OSFP cages, DGX H100's compute ports two a cage (catalog ``cage_ports``)."""
    out = {("", key): m.cage_ports for key, m in plan.catalog.switches.items()
           if m.cage_ports > 1}
    out.update(((nic.role, name), nic.cage_ports) for name, nt in plan.node_types.items()
               for nic in nt.nics if nic.cage_ports > 1)
    return out


def bom_rows(c: Cables, stops: RunStops | None = None,
             splits: dict[str, int] | None = None,
             cages: dict[tuple[str, str], int] | None = None) -> list[list[str]]:
    """Cables by medium and length, and transceivers by speed, counted per run of cables
    alike in all three (a few tens of thousands of runs).

    An optical link has a module at each end, one per cage (_optics): a device whose cages
    carry k ports (``cages``, see cage_ports) takes ceil(n / k) k-port modules for its n
    links of one medium and rate, so a QM9700 leaf's 32 optical host links take 16 twin-port
    transceivers and a DGX H100's 8 compute links 4 (its flat-top cages); single-port cages
    one module per link, as before. ``splits``: the fabrics whose leaves' host ports are
    split (port breakout), with the legs per switch port; their host cables are bought per
    split port (_split_items)."""
    ends = (stops or RunStops(c)).of("network", "tier", "medium", "speed_gbps", "length_m")
    cable_count: Counter[tuple[str, int, float]] = Counter()
    split_runs: list[tuple[int, int]] = []
    ends_at: dict[tuple[str, str, int], Counter[str]] = {}
    optics: Counter[tuple[str, str, int]] = Counter()
    per_end = {m.key: m.transceivers // 2 for m in cable_catalog().media}  # modules an end
    caged = _Caged(c, cages or {})
    for start, stop in zip(_starts(ends), ends, strict=True):
        if splits and c.tier[start] == "node-leaf" and c.network[start] in splits:
            split_runs.append((start, stop))
            continue
        key, speed = c.medium[start], c.speed_gbps[start]
        cable_count[(key, speed, c.length_m[start])] += stop - start
        if not per_end[key]:
            continue
        # an end at single-port cages only: a module a link; else the ends by device
        # (counted in C by Counter), for _optics to put in cages
        network = c.network[start]
        here = caged[network]
        for side in (c.a_device[start:stop], c.b_device[start:stop]):
            if not here or here.keys().isdisjoint(side):
                optics[(TRANSCEIVER, key, speed)] += (stop - start) * per_end[key]
            else:
                ends_at.setdefault((network, key, speed), Counter()).update(side)
    for (network, key, speed), devices in ends_at.items():
        _optics(devices, caged[network], key, speed, per_end[key], optics)
    splitters: Counter[tuple[str, int, float]] = Counter()
    if split_runs:
        _split_items(c, split_runs, cable_count, splitters, optics)
    rows = [["cable", key, str(speed), f"{length:g}", str(n)]
            for (key, speed, length), n in sorted(cable_count.items())]
    rows += [[SPLITTER, key, str(speed), f"{length:g}", str(n)]
             for (key, speed, length), n in sorted(splitters.items())]
    rows += [[item, key, str(speed), "", str(n)]
             for (item, key, speed), n in sorted(optics.items())]
    return rows


class _Caged(dict[str, dict[str, tuple[int, str]]]):
    """network -> {device: (ports a cage, BOM item of its module)} of the devices whose
    cages carry several ports there (a switch's on every network), made per network on
    first use from the devices of the caged models (found in one pass over the devices)."""

    def __init__(self, c: Cables, cages: dict[tuple[str, str], int]) -> None:
        super().__init__()
        self.cages = cages
        self.of: dict[tuple[bool, str], list[str]] = {}
        models = {model for _network, model in cages}
        for name, d in c.devices.items() if cages else ():
            if d.model in models:
                self.of.setdefault((d.kind == "switch", d.model), []).append(name)

    def __missing__(self, network: str) -> dict[str, tuple[int, str]]:
        found: dict[str, tuple[int, str]] = {}
        for (net, model), k in self.cages.items():
            if net in ("", network):
                found.update(zip(self.of.get((not net, model), ()),
                                 repeat((k, _optic(k, "node" if net else "switch")))))
        self[network] = found
        return found


def _optics(devices: Counter[str], caged: dict[str, tuple[int, str]], key: str, speed: int,
            per_end: int, optics: Counter[tuple[str, str, int]]) -> None:
    """The modules at the link ends ``devices`` counts (device -> optical links of medium
    ``key`` at ``speed`` on one network), device by device: ceil(links / k) modules of k
    ports where the device's cages carry k ports (links of one medium share cages; a cage
    takes one plug, so links of another medium or rate fill cages of their own)."""
    single = (1, TRANSCEIVER)
    found: Counter[str] = Counter()
    for name, links in devices.items():
        k, item = caged.get(name, single)
        found[item] += -(-links // k)
    for item, n in found.items():
        optics[(item, key, speed)] += n * per_end


def _optic(ports: int, kind: str) -> str:
    """The BOM's item for a module of ``ports`` ports at a device of ``kind``: 'transceiver'
    for a single-port one; 'transceiver, twin-port' in a switch's twin-port cage (NVIDIA
    MMA4Z00-NS/MMS4X00-NS, finned top) and 'transceiver, twin-port, flat top' in a host's
    (the DGX H100's cages: the -FLT parts, the cage's riding heat sink cooling them)."""
    if ports == 1:
        return TRANSCEIVER
    name = TRANSCEIVER + (", twin-port" if ports == 2 else f", {ports}-port")
    return name if kind == "switch" else name + ", flat top"


def _split_items(c: Cables, split_runs: list[tuple[int, int]],
                 cables: Counter[tuple[str, int, float]],
                 splitters: Counter[tuple[str, int, float]],
                 optics: Counter[tuple[str, str, int]]) -> None:
    """What the legs of split switch ports ('p5s1', 'p5s2': cage p5) are bought as, cage by
    cage, in the medium the cable table gives all legs of a cage (compile/cable_media.py
    cage_media: its longest leg's): a copper splitter cable of the catalog's part (one for
    the cage's legs, of the longest leg's length), or by optics one twin-port transceiver in
    the cage at the cage's rate, and per leg one fiber of its own length and one transceiver
    at the host."""
    cages: dict[tuple[str, str], list[int]] = {}
    for start, stop in split_runs:
        for i in range(start, stop):
            cages.setdefault((c.b_device[i], c.b_port[i].rpartition("s")[0]), []).append(i)
    for legs in cages.values():
        key, speed = c.medium[legs[0]], c.speed_gbps[legs[0]]
        if cable_catalog().medium(key).transceivers:
            for i in legs:
                cables[(key, speed, c.length_m[i])] += 1
            optics[(TRANSCEIVER, key, speed)] += len(legs)
            optics[(TRANSCEIVER, key, speed * len(legs))] += 1
        else:
            splitters[(key, speed, max(c.length_m[i] for i in legs))] += 1
