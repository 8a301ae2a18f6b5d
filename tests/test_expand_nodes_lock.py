"""Nodes the lock does not hold go to the first of their group's racks with room: the pass
keeps a cursor over the racks (room only falls) instead of searching them from the first for
every such node, which took racks x nodes steps (12,500 x 3,125 at 100,000 GPUs when a lock
holds none of the nodes). The plain search is the oracle."""

from __future__ import annotations

import random

import pytest

from cluster_iac.compile.expand_nodes import _group_nodes, _locked_racks
from cluster_iac.plan.kept import Entry, Lock
from cluster_iac.spec.nodes import NodeGroup


def _plain(nodes: list, held: dict[str, str], racks: list[str], per_rack: int) -> list[str]:
    """The racks as the plain search places them: each unheld node in the first rack with
    room, or its own rack when none has room."""
    room = dict.fromkeys(racks, per_rack)
    for rack in held.values():
        room[rack] -= 1
    out = []
    for node in nodes:
        rack = held.get(node.hostname)
        if rack is None:
            rack = next((r for r in racks if room[r] > 0), node.rack)
            room[rack] -= 1
        out.append(rack)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_unheld_nodes_fill_the_first_racks_with_room(seed: int) -> None:
    draw = random.Random(seed)
    racks = [f"r{i}" for i in range(1, draw.randint(2, 9))]
    per_rack = draw.randint(1, 4)
    count = draw.randint(1, len(racks) * per_rack)
    group = NodeGroup(name="gpu", node_type="dgx", count=count, hostname="g###",
                      racks=f"r[1-{len(racks)}]", per_rack=per_rack)
    nodes = _group_nodes(group, 0, racks, per_rack)
    # the lock holds some nodes, each in a rack with room left (as a consistent lock does)
    room = dict.fromkeys(racks, per_rack)
    held: dict[str, str] = {}
    for node in draw.sample(nodes, draw.randint(0, count)):
        rack = draw.choice([r for r in racks if room[r] > 0])
        room[rack] -= 1
        held[node.hostname] = rack
    lock = Lock(text="held", groups={("place", ""): {
        name: Entry(("place", "", name), (rack, 1), line)
        for line, (name, rack) in enumerate(held.items(), 1)}})
    placed, problems = _locked_racks(lock, nodes, group, racks, per_rack)
    assert problems == []
    assert [node.rack for node in placed] == _plain(nodes, held, racks, per_rack)
    assert [node.hostname for node in placed] == [node.hostname for node in nodes]
