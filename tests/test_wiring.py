"""The fabric wiring tables (plan/wiring.py): the links' fabric, as networkx would see it."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.plan.wiring import DisjointSets, FabricWiring
from tests.conftest import example_build

FABRICS = [("dgx-h100-superpod-4su", "compute"), ("dgx-h100-superpod-4su", "storage"),
           ("gb200-nvl72", "compute"), ("mixed-a100-h100", "compute")]


def _wiring(name: str, network: str) -> FabricWiring:
    return example_build(name).plan.fabric_wiring[network]


@pytest.mark.parametrize(("name", "network"), FABRICS)
def test_uplinks_are_the_links(name: str, network: str) -> None:
    """Every device's switches above it, and the cables to each, are the planned links."""
    plan = example_build(name).plan
    wiring = plan.fabric_wiring[network]
    links = plan.links
    cabled: dict[str, dict[str, int]] = {}
    for net, a, b in zip(links.network, links.a_device, links.b_device, strict=True):
        if net == network:
            cabled.setdefault(a, {})
            cabled[a][b] = cabled[a].get(b, 0) + 1
    assert cabled == {lower: dict.fromkeys(uppers, wiring.uplinks[lower][1])
                      for lower, uppers in wiring.up.items()}
    speeds = {(a, s) for net, a, s in zip(links.network, links.a_device, links.speed_gbps,
                                          strict=True) if net == network}
    assert speeds == {(lower, wiring.uplinks[lower][0]) for lower in wiring.up}
    assert set(wiring.tier) == set(cabled) | {b for ups in cabled.values() for b in ups}


@pytest.mark.parametrize(("name", "network"), FABRICS)
def test_reach_is_networkx_connected_component(name: str, network: str) -> None:
    wiring = _wiring(name, network)
    first = next(wiring.hosts())
    assert wiring.reach(first) == nx.node_connected_component(wiring.graph, first)
    assert wiring.reach(first) == set(wiring.tier)  # the built fabric is one piece


def test_reach_when_a_leaf_loses_its_uplinks() -> None:
    """SU 1's rail leaves unplugged from the spines: its nodes reach each other only."""
    wiring = _wiring("dgx-h100-superpod-4su", "compute")
    su1_leaves = {leaf for leaf, su in wiring.su.items()
                  if su == 1 and wiring.tier[leaf] == "leaf"}
    cut = replace(wiring, up={name: () if name in su1_leaves else switches
                              for name, switches in wiring.up.items()})
    su1 = {name for name, su in wiring.su.items() if su == 1}
    first = next(wiring.hosts())
    assert wiring.su[first] == 1
    assert cut.reach(first) == su1 == nx.node_connected_component(cut.graph, first)
    spine = next(name for name, tier in wiring.tier.items() if tier == "spine")
    assert cut.reach(spine) == set(wiring.tier) - su1


def test_graph_is_built_once_and_only_when_asked() -> None:
    wiring = _wiring("gb200-nvl72", "compute")
    fresh = replace(wiring)
    assert "graph" not in vars(fresh)
    assert fresh.graph is fresh.graph
    assert set(fresh.graph) == set(wiring.tier)
    host = next(wiring.hosts())
    assert fresh.graph.nodes[host] == {"kind": "node", "su": wiring.su[host]}


@given(st.lists(st.lists(st.sampled_from("abcdefghijkl"), max_size=4), max_size=12))
def test_disjoint_sets_are_networkx_components(unions: list[list[str]]) -> None:
    """Each union joins its names; the sets are the connected components of the graph whose
    edges join each union's names in a chain."""
    parts = DisjointSets()
    graph = nx.Graph()
    for names in unions:
        parts.union(*names)
        graph.add_nodes_from(names)
        nx.add_path(graph, names)
    sets: dict[str, set[str]] = {}
    for name in parts.parent:
        sets.setdefault(parts.find(name), set()).add(name)
    assert sorted(map(sorted, sets.values())) == sorted(map(sorted, nx.connected_components(graph)))
    assert all(parts.size[root] == len(members) for root, members in sets.items())
