"""Hostlist folding: our fast path gives exactly what ClusterShell's own parser gives."""

from __future__ import annotations

from ClusterShell.NodeSet import NodeSet
from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.hostlist import expand, fold

# Names as specs make them (letters, digits, '-', '.', '_'), and a few ClusterShell reads
# differently (two digit runs, a bracket): those take the parser's path.
NAMES = st.from_regex(r"[a-c]{0,2}[0-9]{0,3}[-._]?[a-b]{0,1}[0-9]{0,2}", fullmatch=True)


def _clustershell(names: list[str]) -> str:
    return str(NodeSet.fromlist(sorted(names)))


@given(st.lists(NAMES.filter(bool), max_size=40))
def test_fold_is_clustershell_fold(names: list[str]) -> None:
    assert fold(names) == _clustershell(names)


def test_fold_keeps_padding_and_mixed_widths() -> None:
    names = ["g00001", "g00002", "g00010", "n9", "n10", "n010", "head", "head1", "su1-r2",
             "su1-r1", "gpu01a", "gpu02a"]
    assert fold(names) == _clustershell(names)
    assert fold(names) == ("g[00001-00002,00010],gpu[01-02]a,head,head1,n[9-10,010],"
                           "su1-r[1-2]")


def test_fold_round_trips_through_expand() -> None:
    names = [f"g{i:05d}" for i in range(1, 12_503)]
    assert fold(names) == "g[00001-12502]"
    assert expand(fold(names)) == names
