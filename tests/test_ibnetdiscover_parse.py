"""formats/ibnetdiscover.parse on the cases a delivered fabric's discovery brings: a link read
from both ends, a link contradicted by the other end's record (the first read wins), a peer
with no record of its own (a partial discovery), a port cabled to another port of its own
switch, and the located errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster_iac.formats.ibnetdiscover import (
    IbEnd,
    IbNode,
    Topology,
    TopologyError,
    _parse_records,
    parse,
    parse_lines,
    topology_text,
)
from cluster_iac.plan.subnet import infiniband_fabrics, topology
from cluster_iac.render import build
from tests.benchmarks import bench_commands, bench_scale
from tests.conftest import EXAMPLES

DISCOVERY = """\
# Topology file: generated on Tue Jun  5 14:15:10 2018

vendid=0x2c9
devid=0xbd36
sysimgguid=0x2c903000a0a0e
switchguid=0x2c903000a0a0e(2c903000a0a0e)
Switch\t4 "S-1"\t\t# "MF0;leaf:MQM9700/U1" enhanced port 0 lid 1 lmc 0
[1]\t"H-1"[1](5)\t\t# "h1 ib0" lid 2 4xNDR
[2]\t"H-9"[1]\t\t# "ghost ib0" lid 3 4xNDR
[3]\t"S-1"[4]\t\t# "MF0;leaf:MQM9700/U1" lid 1 4xNDR
[4]\t"S-1"[3]\t\t# "MF0;leaf:MQM9700/U1" lid 1 4xNDR

vendid=0x2c9
devid=0x1021
caguid=0x4
Ca\t1 "H-1"\t\t# "h1 ib0"
  [1](5) \t"S-1"[2]\t\t# lid 2 lmc 0 "MF0;leaf:MQM9700/U1" lid 1 4xNDR
"""


def test_links_nodes_and_port_guids_in_the_order_read() -> None:
    topology = parse(DISCOVERY)
    s1, h1, h9 = (lambda port: IbEnd("S-1", port)), IbEnd("H-1", 1), IbEnd("H-9", 1)
    # H-1's record says it is on S-1 port 2: S-1's record, read first, holds
    assert list(topology.links.items()) == [(s1(1), h1), (h1, s1(1)), (s1(2), h9), (h9, s1(2)),
                                            (s1(3), s1(4)), (s1(4), s1(3))]
    assert list(topology.nodes.values()) == [
        IbNode("Switch", "S-1", 0x2C903000A0A0E, 4, "MF0;leaf:MQM9700/U1"),
        IbNode("Ca", "H-1", 4, 1, "h1 ib0"),
        IbNode("", "H-9", 0, 0, "")]  # no record of its own
    assert topology.port_guids == {h1: 5}
    assert list(topology.pairs()) == [(h1, s1(1)), (h9, s1(2)), (s1(3), s1(4))]


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('[1]\t"S-1"[1]\n', 1, "a port line outside a node record"),
    ('Ca\t1 "H-1"\n[1]\t"S-1"[1]\n\n[2]\t"S-1"[2]\n', 4, "a port line outside a node record"),
    ('Ca\t1 "H-1"\n[x]\t"S-1"[1]\n', 2, "not a line of ibnetdiscover's format: '[x]\\t\"S-1\"[1]'"),
])
def test_a_line_not_in_the_format_is_located(text: str, line: int, reason: str) -> None:
    with pytest.raises(TopologyError) as caught:
        parse(text)
    assert (caught.value.line, caught.value.reason) == (line, reason)


def _same(one: Topology, other: Topology) -> bool:
    """One topology: nodes, links and port GUIDs, each in the order read."""
    return (list(one.nodes.items()) == list(other.nodes.items())
            and list(one.links.items()) == list(other.links.items())
            and list(one.port_guids.items()) == list(other.port_guids.items()))


def test_record_by_record_as_line_by_line(tmp_path: Path) -> None:
    """parse reads a text as ibnetdiscover prints it record by record (_parse_records), and
    makes what parse_lines makes of it: every example's InfiniBand fabric and a 2,000-GPU
    bench spec's, as exported and as the real ibnetdiscover prints them (bench_commands),
    and with a cable read differently from its two ends; any other text it leaves to
    parse_lines (None)."""
    spec = tmp_path / "bench.yaml"
    spec.write_text(bench_scale.spec_yaml(2000))
    texts = []
    for path in [*EXAMPLES, spec]:
        plan = build(path, emit=False).plan
        for network in infiniband_fabrics(plan):
            exported = topology_text(topology(plan, network), ["a header"])
            texts += [exported, bench_commands.discovery(exported)]
    head, last = texts[-1].rstrip("\n").rsplit("\n", 1)  # an adapter's record: another port
    contradicted = head + "\n" + re.sub(r'"\[(\d+)\]', lambda m: f'"[{int(m[1]) % 30 + 1}]',
                                        last, count=1) + "\n"
    assert contradicted != texts[-1]
    for text in [*texts, contradicted]:
        quick = _parse_records(text)
        assert quick is not None and _same(quick, parse_lines(text))
    assert len(texts) >= 10
    for text in (DISCOVERY, texts[0].replace("\n\n", "\n \n", 1), texts[0][:-1],
                 texts[0].replace("\n[", "\n[1][ext 1]\t\"S-x\"[1]\n[", 1),
                 texts[0] + "# a comment\n", texts[0].replace("]\t", "]x\t", 1)):
        assert _parse_records(text) is None
        try:
            plain = parse_lines(text)
        except TopologyError as refused:
            with pytest.raises(TopologyError) as caught:
                parse(text)
            assert caught.value.args == refused.args
        else:
            assert _same(parse(text), plain)
