"""Real consumer: the pre-commit tool runs the hooks of .pre-commit-hooks.yaml on a scratch git
repository, through `git commit` as a user meets them: a commit with a stale rendered tree (or
an invalid spec) is refused, a fresh one goes in.

Two ways, both with the real pre-commit (the '[test]' extra):
- as published: `repo:` is this checkout (its files as they are now, committed into a scratch
  copy, since pre-commit clones a `rev:`), `language: python`, so pre-commit pip-installs
  cluster-iac and its dependencies into its own environment. That needs a package index; where
  none answers, the test skips outside CI and fails under CI=true.
- offline: `repo: local` with `language: system` running the installed cluster-iac, each hook's
  id, entry and settings read from .pre-commit-hooks.yaml (only `language` differs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import ROOT

pytestmark = pytest.mark.real

HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
# What pip needs to build and install the package (pyproject's hatch build settings).
PACKAGE = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "cluster_iac", "templates",
           "schemas"]
ARGS = {"cluster-iac-validate": ["cluster.yaml"],
        "cluster-iac-render-check": ["cluster.yaml", "-o", "rendered"]}


def _pre_commit() -> list[str]:
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("pre-commit is missing: install the '[test]' extras")
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    return [sys.executable, "-m", "pre_commit"]


def _env(tmp: Path) -> dict[str, str]:
    """pre-commit's cache in the test's folder (so the hook environment is built from this
    checkout, not an old one); git without the user's or the system's configuration; the
    running interpreter's bin folder first on PATH (the installed cluster-iac)."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PRE_COMMIT_HOME", "GIT_DIR"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({
        "PRE_COMMIT_HOME": str(tmp / "pre-commit-cache"),
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def _run(args: list[str | Path], cwd: Path, env: dict[str, str],
         ok: bool = True) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=900)
    if ok:
        assert run.returncode == 0, f"{args}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    return _run(["git", *args], cwd, env).stdout.strip()


def _hook_repository(tmp: Path, env: dict[str, str]) -> tuple[Path, str]:
    """This checkout's package files as they are now, committed in a repository of their own;
    returns it and the commit."""
    repo = tmp / "hooks-repo"
    repo.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PACKAGE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=skip)
        else:
            shutil.copy2(source, repo / name)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "-m", "the checkout as it is")
    return repo, _git(repo, env, "rev-parse", "HEAD")


def _scratch(tmp: Path, env: dict[str, str], config: Mapping[str, object]) -> Path:
    """A git repository with a spec, its rendered tree and the config, hooks installed."""
    from click.testing import CliRunner

    from cluster_iac.cli.main import main

    work = tmp / "scratch"
    work.mkdir()
    _git(work, env, "init", "-q")
    shutil.copy(ROOT / "examples" / "minimal.yaml", work / "cluster.yaml")
    rendered = CliRunner().invoke(main, ["render", str(work / "cluster.yaml"), "-o",
                                         str(work / "rendered")])
    assert rendered.exit_code == 0, rendered.output
    # JSON is YAML: pre-commit reads the config the serializer wrote
    (work / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2) + "\n")
    _run([*_pre_commit(), "install"], work, env)
    return work


def _commit(work: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    _git(work, env, "add", "-A")
    return _run(["git", "commit", "-q", "-m", message], work, env, ok=False)


def _walk_through(work: Path, env: dict[str, str]) -> None:
    """Fresh tree: commit goes in. Spec changed, tree not rendered again: refused by
    render --check alone. Rendered again: goes in. An invalid spec: refused by validate."""
    first = _commit(work, env, "a spec and its fresh tree")
    assert first.returncode == 0, first.stdout + first.stderr
    assert _passed(first.stdout + first.stderr) == {"validate": True, "check": True}

    spec = work / "cluster.yaml"
    spec.write_text(spec.read_text().replace("name: tiny", "name: small", 1))
    stale = _commit(work, env, "renamed, tree not rendered")
    log = stale.stdout + stale.stderr
    assert stale.returncode != 0, log
    assert _passed(log) == {"validate": True, "check": False}, log
    assert "rendered: stale; run 'cluster-iac render" in log
    assert _git(work, env, "rev-list", "--count", "HEAD") == "1"  # nothing committed

    assert _run([*_cli(), "render", "cluster.yaml", "-o", "rendered"], work, env).returncode == 0
    fresh = _commit(work, env, "renamed, tree rendered")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert _git(work, env, "rev-list", "--count", "HEAD") == "2"

    spec.write_text(spec.read_text() + "bogus_key: 1\n")
    invalid = _commit(work, env, "a misspelt key")
    log = invalid.stdout + invalid.stderr
    assert invalid.returncode != 0 and _passed(log)["validate"] is False, log
    assert "error[SPEC-UNKNOWN-KEY]" in log


def _cli() -> list[str]:
    return [sys.executable, "-m", "cluster_iac"]


def _passed(log: str) -> dict[str, bool]:
    """pre-commit's 'name....Passed' / 'name....Failed' line of each hook."""
    result = {}
    for line in log.splitlines():
        for key, name in (("validate", "cluster-iac validate."),
                          ("check", "cluster-iac render --check.")):
            if line.startswith(name) and line.rstrip().endswith(("Passed", "Failed")):
                result[key] = line.rstrip().endswith("Passed")
    return result


def _shipped_hooks() -> list[dict[str, object]]:
    hooks = YAML(typ="safe").load(HOOKS_FILE.read_text())
    assert sorted(h["id"] for h in hooks) == sorted(ARGS)
    return list(hooks)


def test_hooks_as_published_refuse_a_stale_tree(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo, commit = _hook_repository(tmp_path, env)
    assert all(h["language"] == "python" for h in _shipped_hooks())
    config = {"repos": [{"repo": str(repo), "rev": commit, "hooks": [
        {"id": hook, "args": args} for hook, args in ARGS.items()]}]}
    work = _scratch(tmp_path, env, config)
    # pre-commit pip-installs the hook repository on first use; do it now, to tell a missing
    # package index (skip outside CI) from a failing hook
    install = _run([*_pre_commit(), "install-hooks"], work, env, ok=False)
    if install.returncode != 0:
        message = f"pre-commit could not install the hooks:\n{install.stdout[-2000:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message + "\n(no package index? the offline test covers the hooks)")
    _walk_through(work, env)


def test_hooks_offline_as_local_system_hooks_refuse_a_stale_tree(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert shutil.which("cluster-iac", path=env["PATH"]), "cluster-iac is not installed"
    hooks = [{**hook, "language": "system", "args": ARGS[str(hook["id"])]}
             for hook in _shipped_hooks()]
    work = _scratch(tmp_path, env, {"repos": [{"repo": "local", "hooks": hooks}]})
    _walk_through(work, env)
