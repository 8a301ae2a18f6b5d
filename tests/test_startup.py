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
