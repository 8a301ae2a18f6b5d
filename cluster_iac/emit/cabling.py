"""Cabling plan for crews and purchasing: every cable with both ends, labels, a bill of materials.

Formats the rows of plan.cables (compile/plan_cabling.py); computes nothing about a cable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import add

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.emit.base import render_template
from cluster_iac.emit.formats import CHUNK, csv_columns, csv_text, plain_column, text_of
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables

CABLE_COLUMNS = ("cable_id", "network", "a_row", "a_rack", "a_u", "a_device", "a_port",
                 "b_row", "b_rack", "b_u", "b_device", "b_port", "speed_gbps", "medium",
                 "netbox_type", "transceivers", "estimated_m", "length_m")


def render(plan: Plan) -> dict[str, str]:
    cables = plan.cables
    bom = bom_rows(cables)
    return {
        "cabling/cables.csv": csv_columns(CABLE_COLUMNS, _cable_columns(cables)),
        "cabling/labels.csv": _labels_csv(cables),
        "cabling/bom.csv": csv_text(("item", "type", "speed_gbps", "length_m", "quantity"), bom),
        "cabling/bom.md": render_template("cabling/bom.md.j2",
                                          **_bom_context(plan, len(cables), bom)),
    }


def _bom_context(plan: Plan, total: int, bom: list[list[str]]) -> dict[str, object]:
    names = {m.key: m.name for m in cable_catalog().media}
    rows = [{"item": item, "name": names[key], "speed": speed if speed != "0" else "-",
             "length": length or "-", "quantity": quantity}
            for item, key, speed, length, quantity in bom]
    optics = sum(int(r["quantity"]) for r in rows if r["item"] == "transceiver")
    return {"cluster": plan.cluster.name, "total": total, "optics": optics > 0,
            "optics_total": optics, "rows": rows}


def _cable_columns(c: Cables) -> list[Sequence[str]]:
    netbox = {m.key: m.netbox_type for m in cable_catalog().media}
    return [c.cable_id, c.network, c.a_row, c.a_rack, text_of(c.a_u), c.a_device, c.a_port,
            c.b_row, c.b_rack, text_of(c.b_u), c.b_device, c.b_port, text_of(c.speed_gbps),
            c.medium, list(map(netbox.__getitem__, c.medium)), text_of(c.transceivers),
            text_of(c.estimated_m), text_of(c.length_m)]


def _where(racks: Sequence[str], units: Sequence[int | None], devices: Sequence[str],
           ports: Sequence[str]) -> list[str]:
    """'rack.U09 device:port' (no .U for 0U and unplaced devices) for every cable end; a
    device has one place, so each device's text is made once and the ports joined to it."""
    place = {device: f"{rack}.U{u:02d} {device}:" if u else f"{rack} {device}:"
             for device, rack, u in set(zip(devices, racks, units, strict=True))}
    if len(place) != len(set(devices)):
        raise ValueError("a device is placed in two racks or at two heights")
    return list(map(add, map(place.__getitem__, devices), ports))


LABEL_COLUMNS = ("cable_id", "end", "label")


def _labels_csv(c: Cables) -> str:
    """labels.csv: two lines a cable, written straight from the parts when the cable ids and
    both ends' texts are plain CSV cells (then so are the labels made of them, which start
    with the id); else cell by cell through csv_columns."""
    a = _where(c.a_rack, c.a_u, c.a_device, c.a_port)
    b = _where(c.b_rack, c.b_u, c.b_device, c.b_port)
    if not (plain_column(c.cable_id) and plain_column(a) and plain_column(b)):
        return csv_columns(LABEL_COLUMNS, _label_columns(c))
    chunks = [",".join(LABEL_COLUMNS)]
    pair = "{0},A,{0} {1} > {2}\n{0},B,{0} {2} > {1}".format
    for s in range(0, len(c), CHUNK):
        chunks.append("\n".join(map(pair, c.cable_id[s:s + CHUNK], a[s:s + CHUNK],
                                    b[s:s + CHUNK])))
    return "\n".join(chunks) + "\n"


def _label_columns(c: Cables) -> list[Sequence[str]]:
    """TIA-606 style labels for both ends, A then B of each cable: the cable id, then near
    end > far end."""
    a = _where(c.a_rack, c.a_u, c.a_device, c.a_port)
    b = _where(c.b_rack, c.b_u, c.b_device, c.b_port)
    ids = [cable_id for cable_id in c.cable_id for _ in (0, 1)]
    labels = [label for cable_id, a_end, b_end in zip(c.cable_id, a, b, strict=True)
              for label in (f"{cable_id} {a_end} > {b_end}", f"{cable_id} {b_end} > {a_end}")]
    return [ids, ("A", "B") * len(c), labels]


def bom_rows(c: Cables) -> list[list[str]]:
    """Cables by medium and length, and transceivers by speed (two per optical link)."""
    cable_count = Counter(zip(c.medium, c.speed_gbps, c.length_m, strict=True))
    optics: Counter[tuple[str, int]] = Counter()
    for (key, speed, _length), n in cable_count.items():
        per_cable = cable_catalog().medium(key).transceivers
        if per_cable:
            optics[(key, speed)] += per_cable * n
    rows = [["cable", key, str(speed), f"{length:g}", str(n)]
            for (key, speed, length), n in sorted(cable_count.items())]
    rows += [["transceiver", key, str(speed), "", str(n)]
             for (key, speed), n in sorted(optics.items())]
    return rows
