"""What `cluster-iac validate` loads: not the emitters, nor the template engine (they load only
when rendering), so its start-up pays for neither. An import-graph assertion, not a timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"

LOADED = """
import json, sys
from cluster_iac.cli import main
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
