"""reconcile/as_planned.py against its oracle, infiniband.match's loop (as_planned made to
answer None): the same matching (each cable found, in order, with its ends as discovered,
A end first; no stray) for every example's InfiniBand fabric as planned and a 2,000-GPU
bench spec's, also read back from its ibnetdiscover text; and no answer, leaving it to the
loop, where a cable is miswired, missing, or a link is extra."""

from __future__ import annotations

from pathlib import Path

import pytest

import cluster_iac.reconcile.infiniband as infiniband
from cluster_iac.formats.ibnetdiscover import Topology, parse, topology_text
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import infiniband_fabrics, topology
from cluster_iac.reconcile.as_planned import as_planned
from cluster_iac.render import build
from tests.benchmarks import bench_scale
from tests.conftest import EXAMPLES


def _plans(tmp_path: Path) -> list[Plan]:
    spec = tmp_path / "bench.yaml"
    spec.write_text(bench_scale.spec_yaml(2000))
    return [build(path, emit=False).plan for path in [*EXAMPLES, spec]]


def _both(plan: Plan, network: str, top: Topology,
          monkeypatch: pytest.MonkeyPatch) -> tuple[infiniband.Matching, infiniband.Matching]:
    quick = infiniband.match(plan, network, top)
    with monkeypatch.context() as patched:
        patched.setattr(infiniband, "as_planned", lambda *args: None)
        plain = infiniband.match(plan, network, top)
    return quick, plain


def _same(one: infiniband.Matching, other: infiniband.Matching) -> bool:
    return (list(one.found.items()) == list(other.found.items()) and one.strays == other.strays
            and list(one.by_end.items()) == list(other.by_end.items()))


def test_every_fabric_as_planned_is_matched_as_the_loop_matches_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fabrics = 0
    for plan in _plans(tmp_path):
        for network in infiniband_fabrics(plan):
            for top in (topology(plan, network), parse(topology_text(topology(plan, network)))):
                quick, plain = _both(plan, network, top, monkeypatch)
                assert _same(quick, plain)
                assert len(quick.found) == len(quick.cables) > 0 and not quick.strays
                fabrics += 1
    assert fabrics >= 10


def test_a_fabric_that_differs_is_left_to_the_loop(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plans(tmp_path)[-1]
    top = topology(plan, "compute")
    hosts = [(a, b) for a, b in top.pairs() if top.nodes[a.node_id].kind == "Ca"]
    uplink = next((a, b) for a, b in top.pairs() if top.nodes[a.node_id].kind == "Switch"
                  and top.nodes[b.node_id].kind == "Switch")
    (h1, s1), (h2, s2) = hosts[0], hosts[7]
    top.links.update({h1: s2, s2: h1, h2: s1, s1: h2})  # two host cables traded
    del top.links[uplink[0]], top.links[uplink[1]]  # an uplink gone
    answers: list[object] = []

    def told(*args: object) -> object:
        answers.append(as_planned(*args))  # type: ignore[arg-type]
        return answers[-1]

    monkeypatch.setattr(infiniband, "as_planned", told)
    quick, plain = _both(plan, "compute", top, monkeypatch)
    assert _same(quick, plain) and plain.strays
    assert answers == [None]
