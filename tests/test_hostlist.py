"""Hostlist folding: our fast path gives exactly what ClusterShell's own parser gives."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from ClusterShell.NodeSet import NodeSet
from hypothesis import given
from hypothesis import strategies as st

from cluster_iac.base.hostlist import HostlistError, expand, fold

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


EXPRESSIONS = st.lists(st.one_of(NAMES.filter(bool), st.sampled_from(
    ["r[1-3]", "r[01-03]", "a[1-2]b", "x[1,3-4]", "n0", "n00", "n" + "9" * 30, "", " "])),
    max_size=6)


@given(EXPRESSIONS)
def test_expand_is_clustershell_expand(parts: list[str]) -> None:
    """Plain names skip ClusterShell; the result is what its parser gives, in written order."""
    expression = ",".join(parts)

    def parsed() -> list[str]:
        NodeSet(expression)  # the whole expression must parse (a trailing ',' does not)
        return list(dict.fromkeys(name for part in parts for name in NodeSet(part)))

    _assert_expands_as_clustershell(expression, parsed)


def _assert_expands_as_clustershell(expression: str, parsed: Callable[[], list[str]]) -> None:
    """expand(expression) is what ``parsed`` (ClusterShell's reading) gives, or refused when
    ClusterShell refuses it."""
    try:
        expected: list[str] | None = parsed()
    except Exception:  # noqa: BLE001 - ClusterShell refuses it: so must we
        expected = None
    if expected is None:
        with pytest.raises(HostlistError):
            expand(expression)
    else:
        assert expand(expression) == expected


@given(st.sets(st.integers(0, 2_000), min_size=1, max_size=60), st.integers(1, 6),
       st.sampled_from(["g", "r1-n", "gpu", "", "x."]), st.sampled_from(["", "a", "-b"]))
def test_fold_of_one_pattern_and_width_is_clustershell_fold(
        numbers: set[int], width: int, prefix: str, suffix: str) -> None:
    """The names of one pattern whose indices have one width fold outside ClusterShell."""
    names = [f"{prefix}{n:0{width}d}{suffix}" for n in numbers if len(str(n)) <= width]
    if names:
        assert fold(names + names[:3]) == _clustershell(names)


# One range in brackets, its ends written with and without leading zeros (ClusterShell refuses
# a padded end of another width than its start, and an end before its start).
INDEX = st.builds(lambda n, zeros: "0" * zeros + str(n), st.integers(0, 1_200), st.integers(0, 3))


@given(st.from_regex(r"[a-c._-]{0,3}", fullmatch=True), INDEX, st.one_of(st.none(), INDEX),
       st.from_regex(r"[a-c._-]{0,2}", fullmatch=True))
def test_expand_of_one_range_is_clustershell_expand(prefix: str, first: str,
                                                    last: str | None, suffix: str) -> None:
    """'r[1-3125]' and its kin are expanded outside ClusterShell, as its parser does."""
    expression = f"{prefix}[{first}{'' if last is None else '-' + last}]{suffix}"
    _assert_expands_as_clustershell(expression, lambda: list(NodeSet(expression)))


def test_expand_of_one_range_keeps_padding_and_order() -> None:
    assert expand("r[1-3]") == ["r1", "r2", "r3"]
    assert expand("gpu[008-011]a") == ["gpu008a", "gpu009a", "gpu010a", "gpu011a"]
    assert expand(" n[7] ") == ["n7"]
    assert expand("r[9-10]") == ["r9", "r10"]
    with pytest.raises(HostlistError):
        expand("r[01-100]")  # a padded start and an end of another width: ClusterShell refuses
