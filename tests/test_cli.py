"""CLI: exit codes, nothing written on error, render --check, atomic writes, python -m."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cluster_iac.cli.main import main
from cluster_iac.write.manifest import MANIFEST
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
    lines = (out / MANIFEST).read_text().splitlines()
    listed = [line.split("  ", 1)[1] for line in lines]  # sha256sum's format: digest, 2 spaces
    assert "slurm/slurm.conf" in listed and "slurm/gres.conf" in listed
    assert sorted(listed) == sorted(p for p in _tree(out) if p != MANIFEST)
    check = subprocess.run(["sha256sum", "-c", "--quiet", MANIFEST], cwd=out)
    assert check.returncode == 0
    assert f"{out}: {len(listed)} files, {len(listed)} changed" in result.output


def test_second_render_changes_nothing(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    before = _tree(out)
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 0 and " 0 changed " in result.output
    assert _tree(out) == before


def test_a_render_that_changes_some_files_keeps_the_others_as_they_were(spec: Path,
                                                                         tmp_path: Path) -> None:
    """The files a render leaves unchanged keep their inode and time, those written in
    pieces as they are made (the cabling and NetBox cable files) as well as the others."""
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    large = ["cabling/cables.csv", "netbox/cables/a/power-001.csv"]
    before = {path: (out / path).stat() for path in [*large, "ansible/inventory.yml"]}
    spec.write_text(spec.read_text().replace("{name: gpu, node_groups: [gpu]}",
                                             "{name: gpu, node_groups: [gpu], max_time: 2:00:00}"))
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 0, result.output
    assert re.search(r": \d+ files, [1-9]\d* changed", result.output), result.output
    for path, stat in before.items():
        now = (out / path).stat()
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns), path


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
    old = hashlib.sha256(b"stale\n").hexdigest()
    manifest.write_text(manifest.read_text() + f"{old}  slurm/old.conf\n")
    (out / "slurm" / "old.conf").write_text("stale\n")
    assert _cli("render", spec, "-o", out).exit_code == 0
    assert not (out / "slurm" / "old.conf").exists()


def test_a_file_the_tool_did_not_write_is_refused_and_kept(spec: Path, tmp_path: Path) -> None:
    """A hand-written report.md, a README, a symlink or an empty folder in the output folder:
    the render writes nothing and says which."""
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    outside = tmp_path / "outside"
    outside.mkdir()
    for make in (lambda: (out / "README.md").write_text("mine\n"),
                 lambda: (out / "empty").mkdir(),
                 lambda: (out / "link").symlink_to(outside)):
        make()
        before = _tree(out)
        spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
        result = _cli("render", spec, "-o", out)
        assert result.exit_code == 1 and "error[IO-FOREIGN] nothing written" in result.output
        assert _tree(out) == before and not list(outside.iterdir())
        spec.write_text(spec.read_text().replace("count: 1,", "count: 2,"))
        for name in ("README.md", "empty", "link"):
            path = out / name
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.exists():
                path.rmdir()


def test_a_hand_written_file_of_an_output_name_is_refused(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("my own report\n")
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1 and "report.md" in result.output
    assert (out / "report.md").read_text() == "my own report\n"


def test_a_hand_edited_manifest_cannot_remove_a_users_file(spec: Path, tmp_path: Path) -> None:
    """A line without the file's digest (or with a wrong one) lists a file the tool did not
    write as it is: it is never removed."""
    out = tmp_path / "out"
    _cli("render", spec, "-o", out)
    (out / "README.md").write_text("mine\n")
    manifest = out / MANIFEST
    for line in ("README.md", f"{'0' * 64}  README.md"):
        manifest.write_text(manifest.read_text() + line + "\n")
        result = _cli("render", spec, "-o", out)
        assert result.exit_code == 1 and "README.md" in result.output
        assert (out / "README.md").read_text() == "mine\n"
        kept = manifest.read_text().splitlines()[:-1]
        manifest.write_text("".join(f"{line}\n" for line in kept))


@pytest.mark.parametrize("folder", ["", "/", "/tmp/../"])
def test_an_empty_or_root_output_is_a_usage_error(spec: Path, folder: str,
                                                  tmp_path: Path) -> None:
    before = _tree(tmp_path)
    result = _cli("render", spec, "-o", folder)
    assert result.exit_code == 2 and "Invalid value for '-o'" in result.output
    assert _tree(tmp_path) == before


def test_a_symlinked_output_folder_is_written_where_it_points(spec: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    assert _cli("render", spec, "-o", tmp_path / "out").exit_code == 0
    assert (tmp_path / "out").is_symlink() and (real / "slurm" / "slurm.conf").is_file()
    assert _cli("render", spec, "-o", tmp_path / "out").exit_code == 0


def test_refused_write_is_an_error_and_writes_no_file(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "slurm").write_text("a file where the slurm folder must go\n")
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1
    assert f"{out}: error[IO-FOREIGN] nothing written:" in result.output
    assert result.output.rstrip().endswith(": slurm")
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


def test_rendered_folders_keep_their_mode(spec: Path, tmp_path: Path) -> None:
    """A new folder gets 0777 less the umask; a folder of the output keeps its mode when the
    tree is rendered again (each folder of the new tree is made with it)."""
    old = os.umask(0o022)
    try:
        out = tmp_path / "out"
        assert _cli("render", spec, "-o", out).exit_code == 0
        folders = [p for p in out.rglob("*") if p.is_dir()]
        assert folders and {p.stat().st_mode & 0o777 for p in folders} == {0o755}
        (out / "slurm").chmod(0o750)
        spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
        assert _cli("render", spec, "-o", out).exit_code == 0
    finally:
        os.umask(old)
    assert (out / "slurm").stat().st_mode & 0o777 == 0o750
    assert {p.stat().st_mode & 0o777 for p in out.rglob("*")
            if p.is_dir() and p.name != "slurm"} == {0o755}


def test_a_refused_write_leaves_the_previous_render_as_it_was(spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _cli("render", spec, "-o", out).exit_code == 0
    shutil.rmtree(out / "slurm")
    (out / "slurm").write_text("a file where the slurm folder must go\n")
    before, lock = _tree(out), (tmp_path / "cluster.lock").read_text()
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))  # changes ansible/ too
    result = _cli("render", spec, "-o", out)
    assert result.exit_code == 1 and "error[IO-FOREIGN]" in result.output
    assert _tree(out) == before
    # the lock the first render wrote, untouched: it is written only with the tree
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.lock", "cluster.yaml", "out"]
    assert (tmp_path / "cluster.lock").read_text() == lock


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
    # The minimal example has no compute fabric: an info finding the policy raises to a warning
    # (its assumed feed, a warning, is left out).
    spec.write_text(spec.read_text() + "\npolicy:\n  levels: {FABRIC-NONE: warning, "
                    "POWER-FEED-ASSUMED: ignore}\n")
    out = tmp_path / "out"
    relaxed = _cli("validate", spec)
    assert relaxed.exit_code == 0 and "warning[FABRIC-NONE]" in relaxed.output
    strict = _cli("render", spec, "-o", out, "--strict")
    assert strict.exit_code == 1 and "error[FABRIC-NONE]" in strict.output
    assert f"{spec}: 1 error(s); nothing written" in strict.output
    assert not out.exists()


def test_only_render_keeps_what_it_built_to_the_exit(spec: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The program (cli/main.py's run) keeps render's build to its os._exit, not freed object
    by object; changes lets its plan go before it reads the trees, so it keeps nothing."""
    from cluster_iac.cli import common
    from cluster_iac.render import Build

    kept: list[object] = []
    monkeypatch.setattr(common, "_kept", kept)
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    assert len(kept) == 1 and isinstance(kept[0], tuple) and isinstance(kept[0][0], Build)
    kept.clear()
    assert runner.invoke(main, ["changes", str(spec), "-o", str(out)]).exit_code == 0
    assert kept == []
