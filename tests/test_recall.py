"""A render, render --check or `changes` over a tree already current prints from the cache's
known outcome without compiling (write/recall.py, write/outcome.py), and prints exactly what
the full path prints: each example run with the cache cold (emptied: the plain path) and
warm, the same standard output, standard error, exit status and files; an entry cut short
or garbled is no entry."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import cluster_iac.render
from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.source import SourceMap
from cluster_iac.cli.main import main
from cluster_iac.write.outcome import Outcome
from cluster_iac.write.scan import CACHE_ENV
from tests.conftest import ROOT

EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))

Run = tuple[int, str, str, dict[str, bytes]]


class Compiled(Exception):
    """Raised where the spec would have been compiled."""


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def _spec(tmp_path: Path, example: str) -> Path:
    """The example and its lock, copied into a folder of the test's."""
    folder = tmp_path / "work"
    folder.mkdir()
    spec = folder / example
    shutil.copy(ROOT / "examples" / example, spec)
    shutil.copy((ROOT / "examples" / example).with_suffix(".lock"), spec.with_suffix(".lock"))
    return spec


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(args: list[str], folder: Path) -> Run:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr, _files(folder)


@pytest.fixture()
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each compile of the run noted (it still runs)."""
    noted: list[str] = []
    real = cluster_iac.render.compile_plan

    def compile_plan(*args: object, **kwargs: object) -> object:
        noted.append("compiled")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cluster_iac.render, "compile_plan", compile_plan)
    yield noted


def _cold_and_warm(args: list[str], folder: Path, cache: Path,
                   compiles: list[str]) -> tuple[Run, Run]:
    """``args`` run with the cache emptied (the plain path: it compiles), then again with
    the cache as that run left it."""
    shutil.rmtree(cache, ignore_errors=True)
    compiles.clear()
    cold = _run(args, folder)
    assert compiles, "the cold run compiled"
    compiles.clear()
    warm = _run(args, folder)
    return cold, warm


COMMANDS = (
    ["render", "{spec}", "-o", "{out}"],
    ["render", "{spec}", "-o", "{out}", "--check"],
    ["changes", "{spec}", "-o", "{out}"],
)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_prints_the_same_cold_and_warm(
        example: str, tmp_path: Path, cache: Path, compiles: list[str]) -> None:
    spec = _spec(tmp_path, example)
    out = spec.parent / "out"
    assert _run(["render", str(spec), "-o", str(out)], spec.parent)[0] == 0
    for command in COMMANDS:
        args = [a.format(spec=spec, out=out) for a in command]
        cold, warm = _cold_and_warm(args, spec.parent, cache, compiles)
        assert warm == cold, args
        assert cold[0] == 0
        assert compiles == [], f"{args}: the warm run compiled"


FORMATS = (
    ["render", "{spec}", "-o", "{out}", "--format", "json"],
    ["render", "{spec}", "-o", "{out}", "--check", "--format", "sarif"],
    ["render", "{spec}", "-o", "{out}", "--format", "json", "--output-findings", "{doc}"],
    ["changes", "{spec}", "-o", "{out}", "--format", "json", "--release", "23.11"],
    ["render", "{rel}", "-o", "{out}"],  # the spec named otherwise: its findings' file too
)


def test_findings_print_the_same_in_every_format(
        tmp_path: Path, cache: Path, compiles: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The minimal example has a warning and an info, each cited with its line and caret."""
    spec = _spec(tmp_path, "minimal.yaml")
    out = spec.parent / "out"
    assert _run(["render", str(spec), "-o", str(out)], spec.parent)[0] == 0
    monkeypatch.chdir(spec.parent)
    for command in FORMATS:
        args = [a.format(spec=spec, out=out, doc=tmp_path / "work" / "doc.json",
                         rel="./minimal.yaml") for a in command]
        cold, warm = _cold_and_warm(args, spec.parent, cache, compiles)
        assert warm == cold, args
        assert "POWER-FEED-ASSUMED" in cold[1] + cold[2] + str(cold[3].get("doc.json"))
        assert compiles == [], f"{args}: the warm run compiled"


def test_strict_errors_are_the_same_cold_and_warm(
        tmp_path: Path, cache: Path, compiles: list[str]) -> None:
    """Under --strict the minimal example's warning is an error: exit 1, nothing written,
    whatever the cache holds of the same spec without --strict."""
    spec = _spec(tmp_path, "minimal.yaml")
    out = spec.parent / "out"
    assert _run(["render", str(spec), "-o", str(out)], spec.parent)[0] == 0
    for check in ([], ["--check"]):
        args = ["render", str(spec), "-o", str(out), "--strict", *check]
        cold, warm = _cold_and_warm(args, spec.parent, cache, compiles)
        assert warm == cold and cold[0] == 1 and "error[POWER-FEED-ASSUMED]" in cold[2]
        _run(["render", str(spec), "-o", str(out)], spec.parent)  # the cache knows it
        compiles.clear()
        assert _run(args, spec.parent) == cold
        assert compiles, "an error is never taken from the cache"


@pytest.mark.parametrize("spoil", ["cut", "garbage", "first line only", "empty"])
def test_a_spoilt_entry_is_no_entry(spoil: str, tmp_path: Path, cache: Path,
                                    compiles: list[str]) -> None:
    spec = _spec(tmp_path, "minimal.yaml")
    out = spec.parent / "out"
    args = ["render", str(spec), "-o", str(out), "--check"]
    assert _run(["render", str(spec), "-o", str(out)], spec.parent)[0] == 0
    cold, _ = _cold_and_warm(args, spec.parent, cache, compiles)
    for entry in (cache / "renders").iterdir():
        text = entry.read_text()
        first, _, rest = text.partition("\n")
        entry.write_text({"cut": text[:len(first) + 1 + len(rest) // 2],
                          "garbage": f"{first}\n{'0' * 64} {{\"findings\": 1}}\n",
                          "first line only": first + "\n", "empty": ""}[spoil])
    compiles.clear()
    assert _run(args, spec.parent) == cold
    assert compiles, "a spoilt entry falls back to the full path"


def test_a_stale_lock_is_not_taken_from_the_cache(tmp_path: Path, cache: Path,
                                                  compiles: list[str]) -> None:
    """A lock gone since is another key: compiled, the lock made again (and, with
    --check, said missing)."""
    spec = _spec(tmp_path, "minimal.yaml")
    out = spec.parent / "out"
    assert _run(["render", str(spec), "-o", str(out)], spec.parent)[0] == 0
    spec.with_suffix(".lock").unlink()
    cold, warm = _cold_and_warm(["render", str(spec), "-o", str(out), "--check"],
                                spec.parent, cache, compiles)
    assert cold == warm and cold[0] == 1 and compiles


def test_an_outcome_comes_back_as_it_was_kept() -> None:
    source = SourceMap("a.yaml", ["a:", "  b: 1"])
    source._values.update({(): (0, 0), ("a",): (1, 2), ("a", "b"): (1, 5)})
    source._keys.update({("a",): (0, 0), ("a", "b"): (1, 2)})
    finding = Diagnostic("X-Y", "m", ("a", "b", 3), Severity.WARNING, "h",
                         details={"limit": 1.5, "unit": "kW"}, decided_by=(("a",),))
    kept = Outcome.of((finding,), source, nodes=1, gpus=8, racks=1, release="23.11",
                      moves=False)
    assert kept is not None
    back = Outcome.parse(kept.text())
    assert back == kept and back.findings[0].details == finding.details
    replay = back.source("b.yaml", b"a:\n  b: 1\n")
    for path in [("a", "b", 3), ("a", "b"), ("a",), ("c",)]:
        assert replay.locate(path) == source.locate(path).__class__(
            "b.yaml", *[getattr(source.locate(path), f) for f in ("line", "column")])
        assert replay.has(path) == source.has(path)
    # a detail JSON cannot bring back as it was (a tuple), or a finding of the lock: none kept
    assert Outcome.of((Diagnostic("X", "m", details={"t": (1, 2)}),), source, nodes=1, gpus=1,
                      racks=1, release="x", moves=False) is None
    assert Outcome.of((Diagnostic("X", "m", file="c.lock"),), source, nodes=1, gpus=1,
                      racks=1, release="x", moves=False) is None
