"""formats/ibnetdiscover.parse on the cases a delivered fabric's discovery brings: a link read
from both ends, a link contradicted by the other end's record (the first read wins), a peer
with no record of its own (a partial discovery), a port cabled to another port of its own
switch, and the located errors; and parse_records (a record at a time) against its oracle
parse_lines (a line at a time): the same topology, in the same order, on these cases, the
examples' fabrics and a 4,000-GPU bench fabric, or None where the text is laid out
otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_iac.emit.subnet_manager import render as render_sm
from cluster_iac.formats.ibnetdiscover import (
    IbEnd,
    IbNode,
    Topology,
    TopologyError,
    parse,
    parse_lines,
    parse_records,
)
from cluster_iac.render import build
from tests.benchmarks import bench_commands, bench_scale
from tests.conftest import example_build

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


def _alike(text: str) -> Topology:
    """parse_lines' topology of ``text``, which parse_records reads the same, each dict in
    the same order; and parse's."""
    plain, records = parse_lines(text), parse_records(text)
    assert records is not None
    for field in ("nodes", "links", "port_guids"):
        assert list(getattr(records, field).items()) == list(getattr(plain, field).items())
    assert parse(text) == plain
    return plain


FLUSH = DISCOVERY.replace("  [1](5)", "[1](5)")  # every line where ibnetdiscover prints it


@pytest.mark.parametrize("text", [
    FLUSH,
    FLUSH.rstrip("\n"),  # no line break at the end
    FLUSH.replace("caguid=0x4\n", ""),  # a record without its GUID line: the last one read
    FLUSH.replace("\n\nvendid", "\n\n# a comment\n  \nvendid"),  # comments, blanks between
    FLUSH.replace('[1](5)\t\t# "h1 ib0" lid 2 4xNDR', '[1][ext 3](5)\t"H-1"[1](5)'),
    "", "# only a comment\n"])
def test_records_read_as_lines_do(text: str) -> None:
    _alike(text)


@pytest.mark.parametrize("text", [
    DISCOVERY,  # a port line indented
    FLUSH.replace("\n", "\r\n"),  # another line break
    FLUSH.replace("\n\nvendid=0x2c9\ndevid=0x1021", "\nvendid=0x2c9\ndevid=0x1021"),
    FLUSH.replace('[2]\t"H-9"[1]', '[2]\t"H-9"[1]\n# a comment in the record'),
    FLUSH.replace("Ca\t1", "vendid=0x1\nCa\t1"),
])
def test_a_text_laid_out_otherwise_is_read_line_by_line(text: str) -> None:
    assert parse_records(text) is None
    assert parse(text) == parse_lines(text)


@pytest.mark.parametrize("text", [
    '[1]\t"S-1"[1]\n', 'Ca\t1 "H-1"\n[1]\t"S-1"[1]\n\n[2]\t"S-1"[2]\n',
    'Ca\t1 "H-1"\n[x]\t"S-1"[1]\n', 'Ca\t1 "H-1"\n[1]\t"S-1"[1]\nnot a line\n'])
def test_a_line_not_in_the_format_is_left_to_the_lines(text: str) -> None:
    assert parse_records(text) is None


@pytest.mark.parametrize("example", ["seed-64gpu-h100", "dgx-h100-superpod-4su",
                                     "gb200-nvl72", "mixed-a100-h100"])
def test_the_examples_fabrics_read_alike(example: str) -> None:
    """Each exported topology, and it as the real ibnetdiscover prints it
    (bench_commands.discovery: ID lines, lid and speed tails)."""
    for path, text in render_sm(example_build(example).plan).items():
        if path.endswith("topology.ibnetdiscover"):
            _alike(text)
            _alike(bench_commands.discovery(text))


def test_a_bench_fabric_reads_alike(tmp_path: Path) -> None:
    spec = tmp_path / "bench.yaml"
    spec.write_text(bench_scale.spec_yaml(4000))
    text = render_sm(build(spec, emit=False).plan)["opensm/compute/topology.ibnetdiscover"]
    assert len(_alike(bench_commands.discovery(text)).links) > 2000
