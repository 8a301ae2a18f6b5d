"""Real install: build the wheel, pip-install it into a fresh venv, render outside the source tree.

This is the newcomer's path (`pip install .`, not `-e`): templates/ and schemas/ must travel
inside the wheel, and the installed tool must render exactly what the source tree renders.
Slow (it builds a wheel and installs its dependencies), so it lives with the real-consumer tests;
CI runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.real


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None,
         timeout: int = 900) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                         env=env, timeout=timeout)
    assert run.returncode == 0, f"{args}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


def _clean_env() -> dict[str, str]:
    """No PYTHONPATH pointing back into the checkout, no virtualenv leaking in."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    return {k: v for k, v in os.environ.items() if k not in drop}


@cache
def _installed(base: Path) -> Path:
    """Build the wheel and install it into a fresh venv under ``base``; return the venv."""
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, ROOT], cwd=base,
         env=_clean_env())
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    [wheel] = dist.glob("cluster_iac-*.whl")
    _run([env_dir / "bin" / "python", "-m", "pip", "install", wheel], cwd=base, env=_clean_env())
    return env_dir


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _installed(tmp_path_factory.mktemp("wheel"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_wheel_ships_templates_schemas_and_catalog(installed: Path) -> None:
    [wheel] = (installed.parent / "dist").glob("cluster_iac-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*.j2")}
    assert templates and {f"cluster_iac/{t}" for t in templates} <= names
    assert "cluster_iac/schemas/cluster.schema.json" in names
    catalog = {p.name for p in (ROOT / "cluster_iac" / "catalog").glob("*.yaml")}
    assert catalog and {f"cluster_iac/catalog/{c}" for c in catalog} <= names
    assert not any(n.startswith(("tests/", "examples/")) for n in names)


def test_installed_package_reads_its_own_data(installed: Path, tmp_path: Path) -> None:
    code = ("import cluster_iac, cluster_iac.base.resources as r; "
            "print(cluster_iac.__file__); print(r.templates_dir()); print(r.schemas_dir())")
    out = _run([installed / "bin" / "python", "-c", code], cwd=tmp_path, env=_clean_env())
    paths = [Path(line) for line in out.stdout.splitlines()]
    assert all(installed in p.parents for p in paths), paths


def test_installed_schema_command_matches_the_committed_schema(installed: Path,
                                                               tmp_path: Path) -> None:
    out = _run([installed / "bin" / "cluster-iac", "schema"], cwd=tmp_path, env=_clean_env())
    assert out.stdout == (ROOT / "schemas" / "cluster.schema.json").read_text()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_installed_cli_renders_what_the_source_tree_renders(installed: Path, example: Path,
                                                            tmp_path: Path) -> None:
    spec = tmp_path / example.name  # a spec outside the checkout, as a user's would be
    spec.write_bytes(example.read_bytes())
    _run([installed / "bin" / "cluster-iac", "render", spec, "-o", tmp_path / "wheel"],
         cwd=tmp_path, env=_clean_env())
    _run([installed / "bin" / "python", "-m", "cluster_iac", "render", spec, "-o",
          tmp_path / "wheel", "--check"], cwd=tmp_path, env=_clean_env())
    # the source tree's render, in this process (click's CliRunner: the same command; a
    # Python started for it spent ~1.3 s of CPU importing the tool, 7 examples)
    source = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "tree")])
    assert source.exit_code == 0, (source.output, source.exception)
    wheel, tree = _tree(tmp_path / "wheel"), _tree(tmp_path / "tree")
    assert len(tree) > 3 and wheel.keys() == tree.keys()
    assert [p for p in tree if wheel[p] != tree[p]] == []


def test_installed_init_and_explain_work_outside_the_tree(installed: Path, tmp_path: Path) -> None:
    """A newcomer's first commands from the wheel: codes.yaml travels with it, and init's spec
    validates with the installed tool."""
    tool = installed / "bin" / "cluster-iac"
    explained = _run([tool, "explain", "LUSTRE-NID"], cwd=tmp_path, env=_clean_env())
    assert "fabric.storage" in explained.stdout
    spec = tmp_path / "first.yaml"
    _run([tool, "init", "--nodes", "8", "--lustre", "-o", spec], cwd=tmp_path, env=_clean_env())
    checked = _run([tool, "validate", spec], cwd=tmp_path, env=_clean_env())
    assert f"{spec}: ok (" in checked.stdout
