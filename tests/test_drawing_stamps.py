"""svg.Canvas.stamp: a rack face or a one-line's rack drawn once per key (its place and
figures) with marks in place of its names, then filled with each rack's names; against the
plain writer (svg.TreeCanvas, which draws every one), on the benchmark's specs and on
hostile names and texts."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import pytest

from cluster_iac.emit import drawings
from cluster_iac.formats import svg

HOSTILE = 'a<b>&"c"\t\nd\r'


def test_stamped_drawings_are_the_plain_writers_on_bench_specs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's specs (tests/benchmarks/bench_scale.py: rows of compute racks, a row
    of network racks) at 2,048 and 4,096 GPUs: every drawing's bytes as the plain writer
    draws them, one store of templates for the render, and the racks stamped: twice the
    racks make few more templates (a rack face's place on its sheet is in its key)."""
    from cluster_iac.compile import compile_plan
    from cluster_iac.load.loader import load_spec_text
    from cluster_iac.spec.parse import parse_spec
    from tests.benchmarks.bench_scale import spec_yaml

    stamp = svg.Canvas.stamp
    counts = []
    for gpus in (2048, 4096):
        plan = compile_plan(parse_spec(load_spec_text(spec_yaml(gpus))[0]))
        made: list[svg.Stamps] = []

        def counted(self: svg.Canvas, store: svg.Stamps, *args: object,
                    made: list[svg.Stamps] = made) -> None:
            made.append(store)
            stamp(self, store, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(svg.Canvas, "stamp", counted)
        monkeypatch.setattr(svg, "WRITER", svg.Canvas)
        fast = drawings.render(plan)
        monkeypatch.setattr(svg, "WRITER", svg.TreeCanvas)
        assert drawings.render(plan) == fast
        stores = {id(store): store for store in made}
        assert len(stores) == 1  # one store for the render
        store = next(iter(stores.values()))
        assert None not in store.values()
        assert 3 * len(plan.racks) <= len(made)  # each rack's front, rear and power column
        counts.append((len(made), len(store)))
    (stamps, templates), (more_stamps, more_templates) = counts
    assert more_stamps > 1.8 * stamps
    assert more_templates - templates < (more_stamps - stamps) / 4


def _draw(root: svg.Drawing, label: str, names: Sequence[str]) -> None:
    with root.group({"rack": names[0]}):
        root.text(1, 2, f"{names[0]}, rear", css="name")
        root.rect(3, 4, 5, 6, "#fff", {"device": names[1]}, tip=f"{names[1]}: {label}")
        root.text(7, 8, label, data={"device": names[1], "slot": "0"})


@pytest.mark.parametrize("label", ["model", HOSTILE, "\ue0001\ue001", "\ue000", "{0} {}"])
def test_a_stamp_writes_the_plain_writers_bytes(label: str) -> None:
    """Names that need escapes, a drawing's own text that holds a mark or braces: each
    stamp's bytes are the plain writer's. A drawing whose text holds a mark makes no
    template (each one is drawn)."""
    out = []
    for writer in (svg.Canvas, svg.TreeCanvas):
        root = writer(10, 20, "t")
        store: svg.Stamps = {}
        for names in (["r1", "d1"], [HOSTILE, "d2"], ["r3", HOSTILE], ["r4", "{1}"]):
            root.stamp(store, ("face", label), names, partial(_draw, root, label))
        with root.group({"row": "x"}):  # another indentation: another template
            root.stamp(store, ("face", label), ["r5", "d5"], partial(_draw, root, label))
        root.stamp(store, "nothing", ["r6"], lambda named: None)
        out.append(root.svg_text())
        if writer is svg.Canvas:
            assert (None in store.values()) == ("\ue000" in label)
    assert out[0] == out[1]


def _upper(root: svg.Drawing, names: Sequence[str]) -> None:
    root.text(1, 2, names[0].upper())


def test_a_name_not_written_as_it_is_makes_no_template() -> None:
    """A drawing that changes a name (here to upper case) breaks stamp's rule: its first
    names' drawing is not the template's, so that key is drawn each time."""
    out = []
    for writer in (svg.Canvas, svg.TreeCanvas):
        root = writer(10, 20, "t")
        store: svg.Stamps = {}
        for name in ("r1", "r2"):
            root.stamp(store, "upper", [name], partial(_upper, root))
        out.append(root.svg_text())
        if writer is svg.Canvas:
            assert list(store.values()) == [None]
    assert out[0] == out[1]
    assert "R1" in out[0] and "R2" in out[0]
