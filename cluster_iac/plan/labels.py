"""A cable's two labels (TIA-606 style, one at each end), spelled here and nowhere else: the
text of an end and of a label, and the labels of the plan's cable table (the plain version,
which `cluster-iac labels` over a rendered tree's cables.csv is held to, tests/test_labels.py).
"""

from __future__ import annotations

from cluster_iac.plan.physical import Cables

LABEL_COLUMNS = ("cable_id", "end", "label")
"""The columns of the labels file: a cable's id, its end (A or B) and the label's text."""


def place(rack: str, u: int | None, device: str) -> str:
    """A cable end's text before its port: 'rack.U09 device:'; 'rack device:' for a 0U or
    unplaced device (no U), ' device:' for an end with no rack."""
    return f"{rack}.U{u:02d} {device}:" if u else f"{rack} {device}:"


def label_texts(cable_id: str, a_end: str, b_end: str) -> tuple[str, str]:
    """The labels of a cable's A end and B end, each the cable id, then the near end > the far
    end (an end is its place and its port: 'r1.U01 g00001:ib0')."""
    return f"{cable_id} {a_end} > {b_end}", f"{cable_id} {b_end} > {a_end}"


def label_columns(c: Cables) -> list[list[str]]:
    """The labels of every cable of the table, A then B of each cable, as the columns of
    LABEL_COLUMNS: a cable id is its head and its A port; an end's place is its device's rack
    and U, none for a name the table has no device for."""
    ids: list[str] = []
    ends: list[str] = []
    labels: list[str] = []
    for i in range(len(c)):
        cable_id = c.id_head[i] + c.a_port[i]
        a_end = _place_of(c, c.a_device[i]) + c.a_port[i]
        b_end = _place_of(c, c.b_device[i]) + c.b_port[i]
        ids += [cable_id, cable_id]
        ends += ["A", "B"]
        labels += label_texts(cable_id, a_end, b_end)
    return [ids, ends, labels]


def _place_of(c: Cables, name: str) -> str:
    d = c.devices.get(name)
    return place(d.rack, d.u, name) if d else place("", None, name)
