"""Partitions of some nodes, through the CLI: a hostlist of node names or the first nodes of a
group, beside whole node groups; slurm.conf lists exactly those nodes, folded; names no group
makes, counts past a group's size and nodes that run no jobs are located errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cluster_iac.cli.main import main
from tests.conftest import ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _spec(tmp_path: Path, partitions: str) -> Path:
    """The minimal example grown to six GPU nodes over three racks, with these partition lines
    after its 'gpu' partition of the whole group."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(MINIMAL, spec)
    text = spec.read_text()
    text = text.replace('count: 2, hostname: "gpu##", racks: r01',
                        'count: 6, hostname: "gpu##", racks: "r[01-03]", per_rack: 2')
    text = text.replace("{names: r01, pdu", '{names: "r[01-03]", pdu')
    assert "count: 6" in text and "r[01-03]\", pdu" in text
    spec.write_text(text + partitions)
    return spec


def _partition_lines(folder: Path) -> dict[str, str]:
    """PartitionName -> its Nodes= value, from the rendered slurm.conf."""
    conf = (folder / "slurm" / "slurm.conf").read_text()
    return dict(re.findall(r"^PartitionName=(\S+) Nodes=(\S+)", conf, re.MULTILINE))


def test_hostlist_and_count_partitions_list_exactly_their_nodes(tmp_path: Path) -> None:
    spec = _spec(tmp_path, '    - {name: debug, nodes: "gpu[01-02]"}\n'
                           '    - {name: small, nodes: [{group: gpu, count: 3}, "gpu06"]}\n'
                           '    - {name: tail, nodes: {group: gpu, count: 1}}\n')
    out = tmp_path / "out"
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 0, result.output
    assert _partition_lines(out) == {"gpu": "gpu[01-06]", "debug": "gpu[01-02]",
                                     "small": "gpu[01-03,06]", "tail": "gpu01"}


def test_a_hostlist_partition_is_in_the_clusters_order_of_nodes(tmp_path: Path) -> None:
    """'gpu05,gpu02' is the nodes gpu02 and gpu05: the order written does not reorder them."""
    spec = _spec(tmp_path, '    - {name: pair, nodes: "gpu05,gpu02"}\n')
    out = tmp_path / "out"
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert _partition_lines(out)["pair"] == "gpu[02,05]"


def _errors(spec: Path) -> list[str]:
    result = _cli("validate", spec)
    assert result.exit_code == 1, result.output
    return [line for line in result.output.splitlines() if ": error[" in line or "hint:" in line]


def test_a_hostlist_naming_a_node_no_group_makes_is_located_with_a_suggestion(
        tmp_path: Path) -> None:
    spec = _spec(tmp_path, '    - {name: debug, nodes: "gpu[01-02],gpu07,gpu09"}\n')
    lines = _errors(spec)
    line = len(spec.read_text().splitlines())
    assert lines == [
        f"{spec}:{line}:28: error[SPEC-UNKNOWN-REF] unknown node 'gpu07' (and 1 more no node "
        "group makes)",
        "      = hint: did you mean 'gpu06'?"]


def test_a_count_above_the_groups_size_is_located(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "    - {name: small, nodes: [{group: gpu, count: 7}]}\n")
    lines = _errors(spec)
    line = len(spec.read_text().splitlines())
    assert lines == [
        f"{spec}:{line}:49: error[SPEC-PARTITION-COUNT] partition 'small' takes 7 nodes of "
        "node group 'gpu', which has 6",
        "      = hint: take at most 6, or the whole group by naming it in node_groups"]


@pytest.mark.parametrize(("entry", "code", "message"), [
    ('nodes: "head1"', "SPEC-PARTITION-ROLE",
     "partition 'p' lists node 'head1', whose role is 'controller'; only compute nodes run jobs"),
    ("nodes: {group: head, count: 1}", "SPEC-PARTITION-ROLE",
     "partition 'p' lists node group 'head', whose role is 'controller'; only compute nodes "
     "run jobs"),
    ("nodes: {group: gpus, count: 1}", "SPEC-UNKNOWN-REF", "unknown node group 'gpus'"),
    ('nodes: "gpu[05-"', "SPEC-HOSTLIST", "bad node list: 'gpu[05-' is not a name with ranges "
     "in brackets"),
    ("nodes: []", "CONSISTENCY-PARTITION-EMPTY", "partition 'p' names no nodes"),
    ('nodes: "gpu[0000001-9999999]"', "SPEC-LIMIT", "the partitions up to this one list "
     "10,000,005 nodes; the limit is"),  # counted from the range, never expanded
])
def test_partition_nodes_that_cannot_be_are_errors(tmp_path: Path, entry: str, code: str,
                                                    message: str) -> None:
    spec = _spec(tmp_path, f"    - {{name: p, {entry}}}\n")
    lines = [line for line in _errors(spec) if "error[" in line]
    assert len(lines) == 1
    assert f"error[{code}] {message}" in lines[0]


def test_the_examples_whole_group_form_is_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = tmp_path / "cluster.yaml"
    shutil.copy(MINIMAL, spec)
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert _partition_lines(out) == {"gpu": "gpu[01-02]"}
