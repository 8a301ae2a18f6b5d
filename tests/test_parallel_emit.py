"""Rendering on two processes: the same files as one process, written into the same tree, and
a failing worker writes nothing."""

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
    ours, theirs = split(costs, emit.TOGETHER)
    assert sorted(ours + theirs) == sorted(emit.EMITTERS)
    assert ours and theirs and theirs == emit.worker_families()
    heaviest = max(max(costs.values()), *(sum(costs[f] for f in g) for g in emit.TOGETHER))
    assert abs(sum(costs[f] for f in ours) - sum(costs[f] for f in theirs)) <= heaviest
    for group in emit.TOGETHER:
        assert set(group) <= set(ours) or set(group) <= set(theirs)


def test_a_group_goes_to_one_share() -> None:
    costs = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0}
    assert split(costs) == (["a", "d"], ["b", "c"])
    assert split(costs, [("a", "b")]) == (["a", "b"], ["c", "d"])
    assert split(costs, [("d", "c")]) == (["a", "b"], ["c", "d"])


def _worker_family() -> str:
    return emit.worker_families()[0]


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


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("example", [MINIMAL, ROOT / "examples" / "dgx-h100-superpod-4su.yaml"],
                         ids=["minimal", "superpod"])
def test_two_processes_write_the_same_tree(example: Path, tmp_path: Path) -> None:
    """Each process writes its own families into the staging folder: the tree, manifest
    included, is the one a single process writes."""
    trees = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = CliRunner().invoke(main, ["render", str(example), "-o", str(out),
                                           "--jobs", jobs])
        assert result.exit_code == 0, result.output
        trees.append(_tree(out))
    assert trees[0] == trees[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out1", "out2"]


def test_a_worker_failing_after_writing_leaves_the_previous_tree(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The worker's last family fails after its others were written into the staging folder:
    the error is raised, the previous tree stays whole and the staging folder goes."""
    out = tmp_path / "out"
    first = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(out), "--jobs", "1"])
    assert first.exit_code == 0, first.output
    before = _tree(out)
    theirs = [family for family in emit.EMITTERS if family in emit.worker_families()]
    assert len(theirs) >= 2  # the worker renders (and writes) others before the last
    last = theirs[-1]

    def broken(plan: Plan) -> dict[str, str]:
        raise ValueError("refused after the worker's other families were written")

    monkeypatch.setitem(emit.EMITTERS, last, broken)
    changed = tmp_path / "changed.yaml"  # a spec whose render would change the tree
    changed.write_text(MINIMAL.read_text().replace("count: 2,", "count: 1,"))
    result = CliRunner().invoke(main, ["render", str(changed), "-o", str(out), "--jobs", "2"])
    assert isinstance(result.exception, ValueError)
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["changed.yaml", "out"]


def test_jobs_1_renders_in_one_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parent = os.getpid()

    def here_only(plan: Plan) -> dict[str, str]:
        assert os.getpid() == parent
        return {}

    monkeypatch.setitem(emit.EMITTERS, _worker_family(), here_only)
    result = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(tmp_path / "o"),
                                       "--jobs", "1"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("threshold, forks", [(None, False), (1, True)])
def test_the_default_forks_only_for_a_large_plan(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path, threshold: int | None,
                                                  forks: bool) -> None:
    """Without --jobs, a plan under cli.PARALLEL_NODES (minimal.yaml: 3 nodes) renders in one
    process; with the threshold lowered to 1 node, the same plan forks (two CPUs given)."""
    from cluster_iac import cli
    from cluster_iac.emit import parallel

    if threshold is not None:
        monkeypatch.setattr(cli, "PARALLEL_NODES", threshold)
    monkeypatch.setattr(parallel, "available_cpus", lambda: 2)
    parent = os.getpid()
    seen: list[bool] = []
    family = _worker_family()
    real = emit.EMITTERS[family]

    def where(plan: Plan) -> dict[str, str]:
        if os.getpid() != parent:  # the worker: tell the parent through the rendered file
            return {"forked": "yes\n", **real(plan)}
        seen.append(True)
        return real(plan)

    monkeypatch.setitem(emit.EMITTERS, family, where)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "forked").exists() == forks
    assert bool(seen) != forks
