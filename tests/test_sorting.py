"""natural_sorted orders names exactly as sorting by natural_key does, on its fast path (one
digit run per name) and off it."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.sorting import natural_key, natural_sorted

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
