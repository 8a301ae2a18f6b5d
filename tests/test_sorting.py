"""natural_key orders names as the textbook natural order does (each part of the name a
number or a text, numbers first), natural_sorted exactly as sorting by natural_key does, and
natural_ranks' places sort each group as (natural_key, name) does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.base.sorting import natural_key, natural_keys, natural_ranks, natural_sorted

NAMES = st.one_of(st.from_regex(r"[a-c-]{0,2}[0-9]{1,3}[a-c-]{0,2}", fullmatch=True),
                  st.text("ab1-0", max_size=6), st.sampled_from(["r1", "r01", "r10", "r2", "1",
                                                                  "01", "a", "", "r1-pdu-a"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(NAMES, max_size=30), st.booleans())
def test_natural_sorted_is_sorted_by_natural_key(names: list[str], one_run: bool) -> None:
    if one_run:  # only names of the fast path
        names = [n for n in names if sum(1 for _ in _runs(n)) == 1 and n.isascii()]
    items = list(enumerate(names))  # equal keys keep their order: the index shows it
    expected = sorted(items, key=lambda item: natural_key(item[1]))
    assert natural_sorted(items, lambda item: item[1]) == expected


def _runs(name: str) -> list[str]:
    return re.findall(r"[0-9]+", name)


def _textbook_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """The natural order spelled out: the non-empty parts, each (0, number) or (1, text)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"([0-9]+)", text) if part)


@settings(max_examples=500, deadline=None)
@given(NAMES, NAMES)
def test_natural_key_orders_as_the_textbook_key(a: str, b: str) -> None:
    ka, kb = natural_key(a), natural_key(b)
    ta, tb = _textbook_key(a), _textbook_key(b)
    assert (ka < kb, ka == kb) == (ta < tb, ta == tb)


def test_natural_key_examples() -> None:
    names = ["r10", "r2", "r1-pdu-b", "1", "", "r1-pdu-a", "r01", "a", "10b", "r1", "mgmt-r2-1",
             "mgmt-r10-1", "mgmt-r2-10"]
    assert sorted(names, key=natural_key) == [
        "", "1", "10b", "a", "mgmt-r2-1", "mgmt-r2-10", "mgmt-r10-1", "r01", "r1", "r1-pdu-a",
        "r1-pdu-b", "r2", "r10"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(NAMES, st.text("a1\n٣-", max_size=8)), max_size=30))
def test_natural_keys_are_natural_key_of_each(names: list[str]) -> None:
    """Made together (one scan for names of up to two digit runs), or name by name."""
    assert natural_keys(names) == [natural_key(name) for name in names]


def test_natural_keys_split_hosts_racks_and_switches_alike() -> None:
    names = ["g00012", "head", "r12", "mgmt-r12-1", "", "7", "r1-pdu-a", "a1b2c3"]
    assert natural_keys(names) == [natural_key(name) for name in names]
    assert natural_keys(names[:5]) == [("g", 12, ""), ("head",), ("r", 12, ""),
                                       ("mgmt-r", 12, "-", 1, ""), ("",)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(NAMES, max_size=12), max_size=5))
def test_natural_ranks_sort_each_group_as_its_natural_keys(groups: list[list[str]]) -> None:
    """Places made once for the names of several groups (shared names, equal keys 'r1' and
    'r01' apart) sort each group as sorting it by (natural_key, name) does."""
    ranks = natural_ranks(name for group in groups for name in group)
    assert sorted(ranks.values()) == list(range(len(ranks)))
    for group in groups:
        names = list(dict.fromkeys(group))
        assert sorted(names, key=ranks.__getitem__) == \
            sorted(names, key=lambda name: (natural_key(name), name))
