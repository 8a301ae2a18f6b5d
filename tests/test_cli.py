"""CLI: exit codes, nothing written on error, render --check, atomic writes, python -m."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cluster_iac.cli import main
from cluster_iac.writer import MANIFEST
from tests.conftest import ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and modification time (ns)."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    """A copy of the minimal example that a test may edit."""
    copy = tmp_path / "cluster.yaml"
    shutil.copy(MINIMAL, copy)
    return copy


def test_validate_ok(spec: Path) -> None:
    result = _cli("validate", spec)
    assert result.exit_code == 0, result.output
    assert f"{spec}: ok (3 nodes, 16 GPUs, 1 racks," in result.output


def test_render_writes_the_tree_and_a_manifest(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 0, result.output
    listed = (out / MANIFEST).read_text().splitlines()
    assert "slurm/slurm.conf" in listed and "slurm/gres.conf" in listed
    assert sorted(listed) == sorted(p for p in _tree(out) if p != MANIFEST)
    assert f"{out}: {len(listed)} files, {len(listed)} changed" in result.output


def test_second_render_changes_nothing(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    before = _tree(out)
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 0 and " 0 changed " in result.output
    assert _tree(out) == before


def test_error_writes_nothing_into_a_new_folder(spec: Path, tmp_path: Path) -> None:
    spec.write_text(spec.read_text().replace("count: 2", "count: two"))
    out = tmp_path / "out"
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1
    assert f"{spec}: 1 error(s); nothing written" in result.output
    assert not out.exists()


def test_error_leaves_an_existing_output_unchanged(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _cli("render", spec, "-o", out).exit_code == 0
    before = _tree(out)
    spec.write_text(spec.read_text().replace("node_type: gpu,", "node_type: gpuu,"))
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1
    assert "error[SPEC-UNKNOWN-REF] unknown node type 'gpuu'" in result.output
    assert _tree(out) == before


def test_check_is_clean_right_after_render(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    result = _cli("render", spec, "-o", out, "--check")
    assert result.exit_code == 0, result.output
    assert f"{out}: up to date" in result.output


def test_check_prints_a_diff_and_fails_after_a_spec_change(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    before = _tree(out)
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
    result = _cli("render", spec, "-o", out, "--check")
    assert result.exit_code == 1
    assert "--- a/slurm/slurm.conf\n+++ b/slurm/slurm.conf\n" in result.output
    assert "\n-NodeName=gpu[01-02] " in result.output
    assert "\n+NodeName=gpu01 " in result.output
    assert f"{out}: stale; run 'cluster-iac render {spec} -o {out}'" in result.output
    assert _tree(out) == before  # --check writes nothing


def test_check_notices_a_deleted_and_an_extra_file(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    (out / "slurm" / "gres.conf").unlink()
    result = _cli("render", spec, "-o", out, "--check")
    assert result.exit_code == 1
    assert "--- /dev/null\n+++ b/slurm/gres.conf\n" in result.output


def test_check_of_a_missing_folder_is_stale(spec: Path, tmp_path: Path) -> None:
    result = _cli("render", spec, "-o", tmp_path / "never", "--check")
    assert result.exit_code == 1
    assert not (tmp_path / "never").exists()


def test_render_removes_files_it_no_longer_makes(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    manifest = out / MANIFEST
    manifest.write_text(manifest.read_text() + "slurm/old.conf\n")
    (out / "slurm" / "old.conf").write_text("stale\n")
    (out / "notes.txt").write_text("the user's own file\n")
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert not (out / "slurm" / "old.conf").exists()
    assert (out / "notes.txt").exists()


def test_refused_write_is_an_error_and_writes_no_file(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "slurm").write_text("a file where the slurm folder must go\n")
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1
    assert f"{out / 'slurm'}: error[IO-WRITE] cannot write output:" in result.output
    # Staged files are only renamed into place once all are written: no half tree.
    assert sorted(p.name for p in out.rglob("*")) == ["slurm"]


@pytest.mark.parametrize("args", [
    ["render", "{spec}"],                           # -o missing
    ["render", "-o", "{tmp}/out"],                  # SPEC missing
    ["validate", "{spec}", "--frobnicate"],
    ["frobnicate"],
    ["render", "{spec}", "-o", "{spec}"],           # -o is a file
    ["validate", "{tmp}"],                          # SPEC is a folder
])
def test_usage_errors_exit_2(args: list[str], spec: Path, tmp_path: Path) -> None:
    before = _tree(tmp_path)
    result = _cli(*(a.format(spec=spec, tmp=tmp_path) for a in args))
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output
    assert _tree(tmp_path) == before


def test_missing_spec_file_is_a_located_error(tmp_path: Path) -> None:
    result = _cli("validate", tmp_path / "absent.yaml")
    assert result.exit_code == 1
    assert "error[IO-READ] cannot read spec: No such file or directory" in result.output


def test_schema_prints_json() -> None:
    result = _cli("schema")
    assert result.exit_code == 0
    assert result.output.startswith("{\n") and '"ClusterSpec"' in result.output


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "cluster_iac", "--help"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    for command in ("validate", "render", "schema"):
        assert f"  {command} " in run.stdout
    run = subprocess.run([sys.executable, "-m", "cluster_iac", "render", str(MINIMAL)],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 2 and "Missing option '-o'" in run.stderr


def test_rendered_files_are_readable_by_others(spec: Path, tmp_path: Path) -> None:
    """Temp files are 0600; the rendered ones get the umask's mode (0644 under umask 022)."""
    old = os.umask(0o022)
    try:
        out = tmp_path / "out"
        assert _cli("render", spec, "-o", out).exit_code == 0
        plan = tmp_path / "plan.yaml"
        assert _cli("plan", spec, "-o", plan).exit_code == 0
    finally:
        os.umask(old)
    modes = {p.stat().st_mode & 0o777 for p in [*out.rglob("*"), plan] if p.is_file()}
    assert modes == {0o644}
    (out / "slurm" / "slurm.conf").chmod(0o640)
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert (out / "slurm" / "slurm.conf").stat().st_mode & 0o777 == 0o640  # mode kept


def test_a_refused_write_leaves_the_previous_render_as_it_was(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _cli("render", spec, "-o", out).exit_code == 0
    shutil.rmtree(out / "slurm")
    (out / "slurm").write_text("a file where the slurm folder must go\n")
    before = _tree(out)
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))  # changes ansible/ too
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1 and "error[IO-WRITE]" in result.output
    assert _tree(out) == before
    assert not [p for p in out.rglob("*.tmp")]


def test_a_tampered_manifest_cannot_delete_files_outside_the_output(spec: Path,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    manifest = out / MANIFEST
    manifest.write_text(manifest.read_text() + f"{victim}\n../victim.txt\nslurm/../../victim.txt\n")
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize("damage", ["latin1", "crlf"])
def test_a_damaged_output_file_is_stale_and_rewritten(spec: Path, tmp_path: Path,
                                                      damage: str) -> None:
    """Byte-identical means bytes: a non-UTF-8 file, or the same text with CRLF line ends
    (an editor on Windows), is stale."""
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    good = (out / "slurm" / "slurm.conf").read_bytes()
    bad = b"caf\xe9\n" if damage == "latin1" else good.replace(b"\n", b"\r\n")
    (out / "slurm" / "slurm.conf").write_bytes(bad)
    check = _cli("render", spec, "-o", out, "--check")
    assert check.exit_code == 1 and "+++ b/slurm/slurm.conf" in check.output
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert (out / "slurm" / "slurm.conf").read_bytes() == good


def test_plan_to_a_refused_path_is_an_error_not_a_traceback(spec: Path) -> None:
    result = _cli("plan", spec, "-o", spec / "plan.yaml")  # the spec is a file, not a folder
    assert result.exit_code == 1
    assert f"{spec}: error[IO-WRITE] cannot write output:" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_strict_turns_a_warning_into_an_error_and_writes_nothing(spec: Path,
                                                                 tmp_path: Path) -> None:
    # The minimal example has no compute fabric: an info finding the policy raises to a warning.
    spec.write_text(spec.read_text() + "\npolicy:\n  levels: {FABRIC-NONE: warning}\n")
    out = tmp_path / "out"
    relaxed = _cli("validate", spec)
    assert relaxed.exit_code == 0 and "warning[FABRIC-NONE]" in relaxed.output
    strict = _cli("render", spec, "-o", out, "--strict")
    assert strict.exit_code == 1 and "error[FABRIC-NONE]" in strict.output
    assert f"{spec}: 1 error(s); nothing written" in strict.output
    assert not out.exists()
