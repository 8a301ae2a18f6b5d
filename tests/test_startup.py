"""What `cluster-iac validate` loads: not the emitters, nor the template engine (they load only
when rendering), nor the Lustre planning and the busbw model when the spec has no Lustre and
its policy asks for no busbw figure, so its start-up pays for none of them. Import-graph
assertions, not timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cluster_iac.write.scan import CACHE_ENV
from tests.conftest import ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"
SUPERPOD = ROOT / "examples" / "dgx-h100-superpod-4su.yaml"  # Lustre; min_allreduce_busbw_gbs

LOADED = """
import json, sys
from cluster_iac.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _modules_loaded_by(*args: str) -> set[str]:
    """The modules a fresh interpreter holds after running the CLI with ``args``."""
    result = subprocess.run([sys.executable, "-c", LOADED, *args], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout.splitlines()[-1]))


def _rendering_modules(modules: set[str]) -> set[str]:
    return {m for m in modules
            if m == "jinja2" or m.startswith(("jinja2.", "cluster_iac.emit"))}


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_validate_and_plan_load_no_emitter_and_no_template_engine(command: str) -> None:
    modules = _modules_loaded_by(command, str(MINIMAL))
    assert "cluster_iac.checks" in modules  # it did run the whole pipeline
    assert _rendering_modules(modules) == set()


def test_render_loads_them(tmp_path: Path) -> None:
    """The same probe sees them when they are used: the assertion above can fail."""
    modules = _modules_loaded_by("render", str(MINIMAL), "-o", str(tmp_path / "out"))
    assert {"jinja2", "cluster_iac.emit", "cluster_iac.emit.slurm"} <= modules


def _on_demand_modules(modules: set[str]) -> set[str]:
    """Lustre's planning (compile/plan_lustre.py, its servers and bandwidth, plan/lustre.py)
    and the NCCL busbw model (plan/collectives)."""
    return {m for m in modules
            if m.startswith(("cluster_iac.plan.collectives", "cluster_iac.plan.lustre",
                             "cluster_iac.compile.plan_lustre",
                             "cluster_iac.compile.lustre_servers"))}


def test_validate_without_lustre_or_busbw_policy_loads_neither() -> None:
    modules = _modules_loaded_by("validate", str(MINIMAL))
    assert "cluster_iac.checks.lustre" in modules  # the Lustre checks ran (and found nothing)
    assert _on_demand_modules(modules) == set()


def test_validate_with_lustre_and_busbw_policy_loads_them() -> None:
    modules = _modules_loaded_by("validate", str(SUPERPOD))
    assert {"cluster_iac.compile.plan_lustre", "cluster_iac.compile.lustre_servers",
            "cluster_iac.plan.lustre", "cluster_iac.plan.lustre_bandwidth",
            "cluster_iac.plan.collectives"} <= _on_demand_modules(modules)


MIXED = ROOT / "examples" / "mixed-a100-h100.yaml"  # a fabric (its connectivity is checked)


@pytest.mark.parametrize("spec", [MINIMAL, MIXED])
def test_validate_without_a_graph_algorithm_loads_no_networkx(spec: Path) -> None:
    modules = _modules_loaded_by("validate", str(spec))
    assert "cluster_iac.checks.fabric" in modules
    assert {m for m in modules if m.split(".")[0] == "networkx"} == set()


def test_validate_with_lustre_loads_networkx() -> None:
    """Lustre's bandwidth is a max flow over the fabric: the probe sees networkx then."""
    assert "networkx" in _modules_loaded_by("validate", str(SUPERPOD))


def _pipeline_modules(modules: set[str]) -> set[str]:
    """The pipeline: the spec models (and pydantic), the compile passes, the checks, the
    orchestrator and the emitters."""
    return {m for m in modules
            if m.split(".")[0] in ("pydantic", "pydantic_core", "jinja2")
            or m.startswith(("cluster_iac.spec", "cluster_iac.compile", "cluster_iac.checks",
                             "cluster_iac.emit", "cluster_iac.catalog"))
            or m == "cluster_iac.render"}


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("validate", "--help"),
                                  ("render", "--help")])
def test_the_program_and_its_help_load_no_command_and_no_pipeline(args: tuple[str, ...]) -> None:
    """cli/main.py imports a command's module only when it runs: the group's --help lists
    every command from COMMANDS; validate --help and render --help load their own module, not
    the pipeline (-j's help names PARALLEL_NODES from base/processes.py)."""
    modules = _modules_loaded_by(*args)
    assert _pipeline_modules(modules) == set()
    commands = {m for m in modules if m.startswith("cluster_iac.cli.")} - {
        "cluster_iac.cli.main", "cluster_iac.cli.common", "cluster_iac.cli.console"}
    assert commands == ({"cluster_iac.cli.render", "cluster_iac.cli.changes"}
                        if args[0] in ("validate", "render") else set())


def test_a_render_over_a_current_folder_loads_no_pipeline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """render and render --check over what the spec's inputs with their lock were last
    rendered to answer from write/recall.py: no spec model, compile pass, check or emitter is
    loaded; the same probe sees them on a render that compiles (the assertion can fail)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    spec, out = tmp_path / MINIMAL.name, tmp_path / "out"
    spec.write_bytes(MINIMAL.read_bytes())
    spec.with_suffix(".lock").write_bytes(MINIMAL.with_suffix(".lock").read_bytes())
    first = _modules_loaded_by("render", str(spec), "-o", str(out))
    assert {"cluster_iac.render", "cluster_iac.spec", "pydantic"} <= _pipeline_modules(first)
    assert _pipeline_modules(_modules_loaded_by("render", str(spec), "-o", str(out))) == set()
    again = _modules_loaded_by("render", str(spec), "-o", str(out), "--check")
    assert _pipeline_modules(again) == set()
    # changes loads the Slurm catalog (catalog/__init__.py: spec/hardware.py's models), not
    # the rest of the spec (spec/__init__.py loads ClusterSpec on first use) nor the pipeline
    changes = _modules_loaded_by("changes", str(spec), "-o", str(out))
    assert "cluster_iac.change.change_plan" in changes
    assert {m for m in _pipeline_modules(changes) if m.startswith("cluster_iac.spec")} == {
        "cluster_iac.spec", "cluster_iac.spec.base", "cluster_iac.spec.hardware",
        "cluster_iac.spec.limits", "cluster_iac.spec.rack_layout", "cluster_iac.spec.strings"}
    assert {m for m in _pipeline_modules(changes)
            if not m.startswith(("cluster_iac.spec", "cluster_iac.catalog", "pydantic"))} == set()



@pytest.mark.parametrize(("args", "absent"), [
    (("explain",), ("cluster_iac.checks", "cluster_iac.spec", "pydantic")),
    (("catalog", "gpus"), ("cluster_iac.checks", "cluster_iac.spec.cluster")),
])
def test_explain_and_catalog_load_only_what_they_read(args: tuple[str, ...],
                                                      absent: tuple[str, ...]) -> None:
    """explain without a code reads codes.yaml, catalog the built-in catalog (cli/guide.py):
    neither loads the checks, nor explain the spec models."""
    assert {m for m in _modules_loaded_by(*args) if m.startswith(absent)} == set()


def test_explain_of_a_code_loads_the_checks() -> None:
    """It prints the docstrings of the checks that report the code (the assertion above can
    fail)."""
    assert "cluster_iac.checks" in _modules_loaded_by("explain", "POWER-OUTLET")
