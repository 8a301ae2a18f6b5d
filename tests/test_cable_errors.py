"""A design that cannot be cabled is a located error, wherever the cable table is made: in
`validate`, and in `render` on one process or in the forked worker on two, with the output
folder left as it was."""

from __future__ import annotations

import importlib
import os
import pickle
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac import compile as compile_passes
from cluster_iac.base.errors import CompileError
from cluster_iac.cli.main import main
from cluster_iac.load.loader import load_spec_file
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Links
from cluster_iac.render import PipelineError, build
from cluster_iac.spec import ClusterSpec
from tests.conftest import ROOT

# the module (the package's name plan_cabling is the pass itself)
plan_cabling = importlib.import_module("cluster_iac.compile.plan_cabling")
CASES = sorted((Path(__file__).parent / "data" / "invalid" / "cabling").glob("*.yaml"))
MINIMAL = ROOT / "examples" / "minimal.yaml"
SEED = ROOT / "examples" / "seed-64gpu-h100.yaml"  # its first link: mds1 ib0 to a leaf


def _expected(case: Path) -> tuple[str, int]:
    """The code and spec line its '# expect: CODE dotted.path' header names."""
    code, dotted = re.match(r"# expect: (\S+) (\S+)", case.read_text()).groups()  # type: ignore[union-attr]
    path = tuple(int(p) if p.isdigit() else p for p in dotted.split("."))
    _data, source = load_spec_file(case)
    assert source.has(path), f"{dotted} is not written in {case.name}"
    return code, source.locate(path).line


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if "error[" in line]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_validate_locates_a_cable_no_medium_carries(case: Path) -> None:
    code, line = _expected(case)
    result = CliRunner().invoke(main, ["validate", str(case)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = _errors(result.output)
    assert len(errors) == 1 and f"{case}:{line}:" in errors[0] and f"error[{code}]" in errors[0]
    assert "Traceback" not in result.output
    assert result.output.endswith(f"{case}: 1 error(s)\n")  # validate writes nothing anyway


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_render_rejects_it_alike_and_writes_nothing(case: Path, jobs: str,
                                                    tmp_path: Path) -> None:
    """The same diagnostics as validate, and the previous tree untouched, whether the table is
    made in this process (--jobs 1) or in the emitter worker (--jobs 2)."""
    out = tmp_path / "out"
    first = CliRunner().invoke(main, ["render", str(MINIMAL), "-o", str(out)])
    assert first.exit_code == 0, first.output
    before = _tree(out)
    validated = CliRunner().invoke(main, ["validate", str(case)])
    result = CliRunner().invoke(main, ["render", str(case), "-o", str(out), "--jobs", jobs])
    assert result.exit_code == 1, result.output
    assert result.output == validated.output.replace(" error(s)\n", " error(s); nothing written\n")
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_table_is_made_once_by_the_compile(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    """The cable table is the cabling pass's (compile/plan_cabling.py): made once, in this
    process, before the checks, on one process or two; its CompileError is the pipeline's,
    whatever the command."""
    case = next(p for p in CASES if p.stem == "far_racks")  # a link: no cord is at fault
    made_in = tmp_path / "made-in"
    real = plan_cabling.cable_table

    def recorded(plan: Plan, *args: object) -> object:
        with made_in.open("a") as log:
            log.write(f"{os.getpid()}\n")
        return real(plan, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_cabling, "cable_table", recorded)
    raised = []
    for run in (lambda: build(case, emit=False), lambda: build(case, jobs=1),
                lambda: build(case, jobs=2)):
        with pytest.raises(PipelineError) as error:
            run()
        raised.append(error.value.diagnostics)
        assert made_in.read_text().split() == [f"{os.getpid()}"]
        made_in.unlink()
    assert raised[0] == raised[1] == raised[2]
    assert [d.code for d in raised[0] if d.is_error] == ["CABLE-NO-MEDIUM"]


def test_a_cord_no_medium_carries_is_the_tables_error() -> None:
    """A PSU no cord is rated for: validate and render on one process or two report the
    table's diagnostics (the first such cord)."""
    case = next(p for p in CASES if p.stem == "psu_9kw")
    with pytest.raises(PipelineError) as validated:
        build(case, emit=False)
    for jobs in (1, 2):
        with pytest.raises(PipelineError) as rendered:
            build(case, jobs=jobs)
        assert rendered.value.diagnostics == validated.value.diagnostics


def test_a_compile_error_pickles_with_its_diagnostics() -> None:
    case = next(p for p in CASES if p.stem == "psu_9kw")
    with pytest.raises(PipelineError) as raised:
        build(case, emit=False)
    error = CompileError(raised.value.diagnostics)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is CompileError
    assert again.diagnostics == error.diagnostics and str(again) == str(error)


def _doubled(spec: ClusterSpec, plan: Plan) -> Plan:
    """A pass that cables the first link's port twice (no spec does: a builder's mistake)."""
    links = plan.links
    return replace(plan, links=Links(*(column + column[:1] for column in links.columns())))


@pytest.mark.parametrize("command", [["validate"], ["render", "--jobs", "1"],
                                     ["render", "--jobs", "2"]], ids=" ".join)
def test_two_cables_in_one_port_are_a_located_error(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, command: list[str]) -> None:
    passes = compile_passes.PASSES
    at = passes.index(plan_cabling.plan_cabling)
    monkeypatch.setattr(compile_passes, "PASSES", (*passes[:at], _doubled, *passes[at:]))
    out = tmp_path / "out"
    where = ["-o", str(out)] if command[0] == "render" else []
    result = CliRunner().invoke(main, [command[0], str(SEED), *where, *command[1:]])
    assert result.exit_code == 1, result.output
    (error,) = _errors(result.output)
    line = next(i for i, text in enumerate(SEED.read_text().splitlines(), 1)
                if "name: mds," in text)
    assert error.startswith(f"{SEED}:{line}:")
    assert "error[CABLE-DUPLICATE-ID]" in error and "mds1 ib0" in error
    assert not out.exists()
