"""Rendering on two processes: the same files as one process, and a failing worker writes
nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac import emit
from cluster_iac.cli import main
from cluster_iac.emit.parallel import EmitWorkerError, split
from cluster_iac.plan import Plan
from cluster_iac.render import build
from tests.conftest import EXAMPLE_IDS, EXAMPLES, ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_two_processes_render_the_same_files(example: Path) -> None:
    serial = build(example, jobs=1)
    parallel = build(example, jobs=2)
    assert list(parallel.files) == list(serial.files)  # the same paths, in the same order
    assert parallel.files == serial.files
    assert serial.workers == ()
    assert len(parallel.workers) == 1 and parallel.workers[0].peak_rss_kib > 0


def test_the_split_gives_every_family_once() -> None:
    costs = {family: emit.COST.get(family, 0.01) for family in emit.EMITTERS}
    ours, theirs = split(costs)
    assert sorted(ours + theirs) == sorted(emit.EMITTERS)
    assert ours and theirs
    assert abs(sum(costs[f] for f in ours) - sum(costs[f] for f in theirs)) <= max(costs.values())


def _worker_family() -> str:
    return split({family: emit.COST.get(family, 0.01) for family in emit.EMITTERS})[1][0]


def test_an_emitter_error_in_the_worker_is_raised_as_it_was(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(plan: Plan) -> dict[str, str]:
        raise ValueError(f"refused in process {os.getpid()}")

    monkeypatch.setitem(emit.EMITTERS, _worker_family(), broken)
    with pytest.raises(ValueError, match="refused in process") as raised:
        build(MINIMAL, jobs=2)
    assert str(os.getpid()) not in str(raised.value)  # it was raised in the worker


def test_a_worker_that_dies_writes_nothing(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    parent = os.getpid()

    def dies(plan: Plan) -> dict[str, str]:
        if os.getpid() != parent:
            os._exit(3)  # as if killed: no files sent
        return {}

    monkeypatch.setitem(emit.EMITTERS, _worker_family(), dies)
    with pytest.raises(EmitWorkerError, match="status 3"):
        build(MINIMAL, jobs=2)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(out), "--jobs", "2"])
    assert result.exit_code == 1
    assert "error[EMIT-WORKER]" in result.output and "nothing written" in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_jobs_1_renders_in_one_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parent = os.getpid()

    def here_only(plan: Plan) -> dict[str, str]:
        assert os.getpid() == parent
        return {}

    monkeypatch.setitem(emit.EMITTERS, _worker_family(), here_only)
    result = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(tmp_path / "o"),
                                       "--jobs", "1"])
    assert result.exit_code == 0, result.output
