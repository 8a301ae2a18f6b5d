"""Rendering on two processes: the same files as one process, written into the same tree, and
a failing worker writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac import emit
from cluster_iac.cli.main import main
from cluster_iac.emit import parallel
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


@pytest.mark.parametrize("example", [MINIMAL, ROOT / "examples" / "dgx-h100-superpod-4su.yaml"],
                         ids=["minimal", "superpod"])
def test_every_family_renders_the_same_files_in_the_worker(
        example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever process the split gives a family, its files are the same: with every family
    in the worker, the files are the serial path's."""
    serial = build(example, jobs=1)
    monkeypatch.setattr(parallel, "split", lambda costs, together=(): ([], list(costs)))
    two = build(example, jobs=2)
    assert list(two.files) == list(serial.files)
    assert two.files == serial.files


def _split() -> tuple[list[str], list[str]]:
    costs = parallel.costs()
    return split({family: costs.get(family, 0.01) for family in emit.EMITTERS}, parallel.TOGETHER)


def test_the_split_gives_every_family_once() -> None:
    """Each family once, the families of a TOGETHER group on one side, the two sides within
    one family's cost of each other by the benchmark's measured costs."""
    costs = parallel.costs()
    ours, theirs = _split()
    assert sorted(ours + theirs) == sorted(emit.EMITTERS)
    for group in parallel.TOGETHER:
        assert set(group) <= set(ours) or set(group) <= set(theirs)
    loads = [sum(costs.get(f, 0.01) for f in side) for side in (ours, theirs)]
    assert abs(loads[0] - loads[1]) <= max(costs.values())


def test_every_measured_cost_is_of_a_family() -> None:
    """costs.json (written by the benchmark) names only families of EMITTERS."""
    assert set(parallel.costs()) <= set(emit.EMITTERS)


def test_a_group_goes_to_one_share() -> None:
    costs = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0}
    assert split(costs) == (["a", "d"], ["b", "c"])
    assert split(costs, [("a", "b")]) == (["a", "b"], ["c", "d"])
    assert split(costs, [("d", "c")]) == (["a", "b"], ["c", "d"])


def _worker_family() -> str:
    """The first family the worker renders (it renders its families in EMITTERS' order)."""
    return next(family for family in emit.EMITTERS if family in _split()[1])


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
    theirs = [family for family in emit.EMITTERS if family in _split()[1]]
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
    """Without --jobs, a plan under render.PARALLEL_NODES (minimal.yaml: 3 nodes) renders in
    one process; with the threshold lowered to 1 node, the same plan forks (two CPUs given)."""
    from cluster_iac import render

    if threshold is not None:
        monkeypatch.setattr(render, "PARALLEL_NODES", threshold)
    monkeypatch.setattr(render, "available_cpus", lambda: 2)
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


def _children() -> list[str]:
    pid = os.getpid()
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def test_the_workers_plan_has_the_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker is forked once the checks have passed: its families see the plan with its
    findings, as one process does, and make the serial path's files."""
    theirs = _split()[1]
    for family in theirs:
        real = emit.EMITTERS[family]

        def recording(plan: Plan, real: emit.Emitter = real, family: str = family
                      ) -> dict[str, str]:
            return {**real(plan), f"findings-seen-by-{family}": f"{len(plan.findings)}\n"}

        monkeypatch.setitem(emit.EMITTERS, family, recording)
    serial, two = build(MINIMAL, jobs=1), build(MINIMAL, jobs=2)  # one finding
    assert serial.findings, "the example must have findings for this test to mean anything"
    for family in theirs:
        assert two.files.pop(f"findings-seen-by-{family}") == f"{len(serial.findings)}\n"
        assert serial.files.pop(f"findings-seen-by-{family}") == f"{len(serial.findings)}\n"
    assert two.files == serial.files


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_design_the_checks_reject_writes_nothing(tmp_path: Path, jobs: str) -> None:
    """The checks fail: no worker is forked, the output folder is never made, and the
    messages and exit code are those of validate."""
    case = ROOT / "tests" / "data" / "invalid" / "checks" / "fabric_2to1.yaml"
    out = tmp_path / "deep" / "out"
    before = _children()
    validated = CliRunner().invoke(main, ["validate", str(case)])
    result = CliRunner().invoke(main, ["render", str(case), "-o", str(out), "--jobs", jobs])
    assert validated.exit_code == result.exit_code == 1
    assert result.output == validated.output.replace(" error(s)\n", " error(s); nothing written\n")
    assert "nothing written" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert _children() == before


def test_a_refused_output_folder_stops_the_worker(tmp_path: Path) -> None:
    """The output folder holds a file the tool did not write: refused before any family is
    rendered; no worker is left behind, and the folder is left as it was."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    before = _children()
    result = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(out), "--jobs", "2"])
    assert result.exit_code == 1
    assert "error[IO-FOREIGN]" in result.output and "notes.txt" in result.output
    assert _tree(out) == {"notes.txt": b"mine\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert _children() == before
