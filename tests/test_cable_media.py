"""Media chosen for many lengths at once (bisection of a step function, compile/cable_media.py
Choices.add) are what choosing each length alone picks, and a length no medium carries is
refused as choosing it alone would: the first in cable order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.compile.cable_media import Choices, NoMedium, choose_medium

KINDS = [("infiniband", 400, 0.0), ("infiniband", 800, 0.0), ("infiniband", 1600, 0.0),
         ("ethernet", 1, 0.0), ("ethernet", 100, 0.0), ("ethernet", 400, 0.0),
         ("power", 0, 2000.0), ("power", 0, 3300.0), ("power", 0, 99999.0)]
# every stocked length and its neighbours within the 1e-9 tolerance, and anything else
LENGTHS = st.one_of(st.floats(0.0, 400.0), st.sampled_from(sorted(
    {length + shift for medium in cable_catalog().media for length in medium.stocked_m
     for shift in (-2e-9, -1e-9, 0.0, 1e-9, 2e-9, 0.01)})))


@settings(deadline=None, max_examples=300)
@given(st.sampled_from(KINDS), st.lists(LENGTHS, max_size=40))
def test_choices_added_together_are_each_chosen_alone(kind: tuple[str, int, float],
                                                      lengths: list[float]) -> None:
    catalog = cable_catalog()
    link, speed, psu_w = kind
    table = Choices(catalog, link, speed, psu_w)
    alone = []
    for length in lengths:
        try:
            medium, stocked = choose_medium(catalog, link, speed, psu_w, length)
        except NoMedium as exc:
            with pytest.raises(NoMedium) as refused:
                table.add(lengths)
            assert refused.value.estimated_m == exc.estimated_m == length
            return
        alone.append((medium.key, stocked, medium.transceivers))
    table.add(lengths)
    assert [table[length] for length in lengths] == alone
    assert len(table) == len(set(lengths))  # all chosen by add, none on first use
