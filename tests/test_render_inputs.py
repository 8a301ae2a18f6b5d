"""A folder that holds what its inputs were last rendered to is confirmed without rendering
(write/inputs.py): render --check and a render over it run no emitter; anything else (an
edited, deleted or extra file, another spec, lock or tool) renders and compares as before."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import cluster_iac.render
from cluster_iac.cli.main import main
from cluster_iac.plan.kept import Lock
from cluster_iac.render import build, check_against, render_into
from cluster_iac.write import inputs
from cluster_iac.write.files import text_digest
from cluster_iac.write.manifest import MANIFEST
from cluster_iac.write.scan import scan
from tests.conftest import ROOT
from tests.test_check_paths import SCENARIOS


class Rendered(Exception):
    """Raised where an emitter would have been loaded."""


@pytest.fixture()
def rendered(tmp_path: Path) -> Path:
    """The minimal example rendered into out/ (its lock written), then rendered once more with
    the lock, so the inputs a later run has are the ones remembered."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    for _ in range(2):
        result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "out")])
        assert result.exit_code == 0, result.stderr
    return spec


@pytest.fixture()
def no_emitters(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse() -> None:
        raise Rendered

    monkeypatch.setattr(cluster_iac.render, "_emitters", refuse)
    yield


def test_a_current_tree_is_confirmed_without_rendering(
        rendered: Path, no_emitters: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the emitters nor the lock's text are made again."""
    monkeypatch.setattr(cluster_iac.render, "lock_text", lambda *_: "not the lock")
    out = rendered.parent / "out"
    result, checked = check_against(rendered, out)
    assert not checked.stale and checked.diff() == "" and result.workers == ()
    assert len(checked.rendered) == len(scan(out).listed)
    built, written = render_into(rendered, out)
    assert written.changed == [] and written.files == len(checked.rendered)
    assert built.lock is not None and not built.lock.stale


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "current"])
def test_a_tree_that_differs_is_rendered_and_compared(rendered: Path, no_emitters: None,
                                                      scenario: str) -> None:
    """An edited file (its size and mtime kept), a deleted one, one the manifest does not
    list: the folder is not what the inputs make, so the emitters run (refused here)."""
    out = rendered.parent / "out"
    SCENARIOS[scenario](out)
    with pytest.raises(Rendered):
        check_against(rendered, out)


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "current"])
def test_the_cli_check_still_fails_on_a_stale_tree(rendered: Path, scenario: str) -> None:
    out = rendered.parent / "out"
    SCENARIOS[scenario](out)
    result = CliRunner().invoke(main, ["render", str(rendered), "-o", str(out), "--check"])
    assert result.exit_code == 1
    result = CliRunner().invoke(main, ["render", str(rendered), "-o", str(out), "--check"])
    assert result.exit_code == 1  # the entry the failed check remembered changes nothing


def test_another_tool_renders(rendered: Path, no_emitters: None,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed package file or library version is another key: rendered again."""
    monkeypatch.setattr(inputs, "tool_digest", lambda: "0" * 64)
    with pytest.raises(Rendered):
        check_against(rendered, rendered.parent / "out")


def test_another_spec_renders(rendered: Path, no_emitters: None) -> None:
    rendered.write_text(rendered.read_text() + "# a comment: the same design, other bytes\n")
    with pytest.raises(Rendered):
        check_against(rendered, rendered.parent / "out")


def test_the_key_holds_each_input(rendered: Path) -> None:
    lock = text_digest(rendered.with_suffix(".lock").read_text())
    keys = {inputs.inputs_key(rendered, lock, ("",)), inputs.inputs_key(rendered, None, ("",)),
            inputs.inputs_key(rendered, text_digest(rendered.with_suffix(".lock").read_text()
                                                    + "\n"), ("",)),
            inputs.inputs_key(rendered, lock, ("strict",)),
            inputs.inputs_key(rendered, lock, ("", "gpu01"))}
    assert len(keys) == 5


def test_the_key_names_what_the_tree_was_rendered_to(rendered: Path) -> None:
    """The entry holds the SHA-256 of the manifest the render wrote, and the package's
    files (all of them, bytecode left out) are in the tool's digest."""
    out = rendered.parent / "out"
    lock = rendered.with_suffix(".lock").read_text()
    key = inputs.inputs_key(rendered, text_digest(lock), ("",))
    made = inputs.known(key)
    assert made is not None and made[:2] == (text_digest((out / MANIFEST).read_text()),
                                             text_digest(lock))
    assert made.outcome is not None and made.outcome.nodes == 3  # write/outcome.py
    files = inputs._package_files()
    assert "write/inputs.py" in files and "codes.yaml" in files
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)


def test_a_checkouts_templates_are_in_the_tools_digest(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a source checkout the templates and schemas sit beside the package, not in it: a
    template edited there changes what a render makes, so it changes the tool's digest."""
    templates = tmp_path / "templates"
    (templates / "slurm").mkdir(parents=True)
    (templates / "slurm" / "x.j2").write_text("one\n")
    monkeypatch.setattr(inputs, "templates_dir", lambda: templates)
    assert str(templates) in inputs._roots()
    before = inputs.tool_digest.__wrapped__()
    (templates / "slurm" / "x.j2").write_text("two\n")
    assert inputs.tool_digest.__wrapped__() != before


def test_a_render_that_writes_the_lock_knows_the_next_render_over_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first render writes the lock and remembers what a render over it makes: a render
    into a fresh folder then makes the same tree without making the lock's text again."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    render_into(spec, tmp_path / "first")
    lock = spec.with_suffix(".lock").read_text()

    def refuse(*_: object) -> str:
        raise AssertionError("the lock's text made again")

    monkeypatch.setattr(cluster_iac.render, "lock_text", refuse)
    built, written = render_into(spec, tmp_path / "second")
    assert built.lock is not None and not built.lock.stale
    assert spec.with_suffix(".lock").read_text() == lock
    assert (tmp_path / "second" / MANIFEST).read_text() == \
        (tmp_path / "first" / MANIFEST).read_text()
    assert written.files == len(scan(tmp_path / "first").listed)


def test_a_reallocating_render_leaves_the_next_render_to_make_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--reallocate gives devices new identities each time it is said: the render after it,
    over the lock it wrote, is not taken as known."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    render_into(spec, tmp_path / "first")
    lock = spec.with_suffix(".lock").read_text()
    made: list[str] = []
    real = cluster_iac.render.lock_text

    def counted(plan: Any, old: Lock, spec_name: str) -> str:
        made.append("made")
        return real(plan, old, spec_name)

    monkeypatch.setattr(cluster_iac.render, "lock_text", counted)
    render_into(spec, tmp_path / "second", reallocate=("gpu01",))
    assert spec.with_suffix(".lock").read_text() != lock  # gpu01's identities are new
    render_into(spec, tmp_path / "third")
    assert made == ["made", "made"]


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")))
def test_a_render_over_the_lock_it_wrote_makes_the_same_files_and_lock(
        example: str, tmp_path: Path) -> None:
    """What the remembered key of the next render trusts (write/inputs.py): the lock is kept
    as it is by a render over it, and the files are the ones made without it."""
    spec = tmp_path / example
    shutil.copy(ROOT / "examples" / example, spec)
    first = build(spec)
    assert first.lock is not None and first.lock.before is None
    spec.with_suffix(".lock").write_text(first.lock.after)
    again = build(spec)
    assert again.lock is not None and not again.lock.stale
    assert again.files == first.files


@pytest.mark.parametrize("reallocate", [(), ("gpu01",)])
def test_the_emitters_get_the_plan_without_the_locks_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reallocate: tuple[str, ...]) -> None:
    """render.py lets the lock's entries go once its new text is made from them, before the
    emitters (and their forked worker) run: the files and the lock are those a plan that
    keeps them makes (build), with the lock kept as it is, or changed by --reallocate."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    render_into(spec, tmp_path / "first")
    monkeypatch.setenv("CLUSTER_IAC_CACHE", str(tmp_path / "cache"))  # nothing known
    kept = build(spec, reallocate=reallocate)
    assert kept.plan.lock.groups and kept.lock is not None
    real = cluster_iac.render._emitters()
    seen: list[Lock] = []

    class Emitters:
        @staticmethod
        def render_each(plan: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(plan.lock)
            return real.render_each(plan, *args, **kwargs)

    monkeypatch.setattr(cluster_iac.render, "_emitters", Emitters)
    built, _written = render_into(spec, tmp_path / "second", reallocate=reallocate)
    assert len(seen) == 1 and seen[0].groups == {} and seen[0].text == kept.lock.before
    assert built.lock is not None and built.lock.after == kept.lock.after
    assert built.lock.stale == bool(reallocate)
    assert spec.with_suffix(".lock").read_text() == kept.lock.after
    second = {path: (tmp_path / "second" / path).read_text()
              for path in scan(tmp_path / "second").listed}
    assert second == kept.files
