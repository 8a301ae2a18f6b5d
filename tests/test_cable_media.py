"""Media chosen by bisection of a step function (compile/cable_media.py Choices) are what
trying each medium in turn picks (choose_medium), and a length no medium carries is refused
alike."""

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
def test_choices_by_bisection_are_each_chosen_alone(kind: tuple[str, int, float],
                                                   lengths: list[float]) -> None:
    catalog = cable_catalog()
    link, speed, psu_w = kind
    table = Choices(catalog, link, speed, psu_w)
    for length in lengths:
        try:
            medium, stocked = choose_medium(catalog, link, speed, psu_w, length)
        except NoMedium as exc:
            with pytest.raises(NoMedium) as refused:
                table[length]  # noqa: B018  # the lookup is what raises
            assert refused.value.estimated_m == exc.estimated_m == length
            assert (refused.value.link, refused.value.speed_gbps) == (link, speed)
        else:
            assert table[length] == (medium.key, stocked, medium.transceivers)
