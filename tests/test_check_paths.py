"""render --check and the render over its own tree in work proportional to what differs
(write/scan.py, write/compare.py TreeCheck), held to the plain way (every file rendered in
memory and every file on disk read: compare.stale_diff, foreign_paths), and --check's plan
held to `cluster-iac changes`'."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.change.change_plan import change_plan
from cluster_iac.cli.main import main
from cluster_iac.render import build, check_against
from cluster_iac.write.compare import RenderedTree, foreign_paths, stale_diff
from cluster_iac.write.manifest import MANIFEST
from cluster_iac.write.scan import RACY_NS, record_file, scan
from tests.conftest import ROOT

EDITED = "slurm/gres.conf"


def _cli(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def rendered(tmp_path: Path) -> tuple[Path, Path]:
    """The minimal example rendered into out/ (its lock written beside it)."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    code, _, err = _cli("render", spec, "-o", tmp_path / "out")
    assert code == 0, err
    return spec, tmp_path / "out"


def _edit_keeping_size_and_mtime(path: Path) -> None:
    """A hand edit the manifest cannot see and the size and mtime do not show: one byte
    changed in place, the modification time put back."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[0] = ord("#") if data[0] != ord("#") else ord(";")
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def _delete(out: Path) -> None:
    (out / "slurm" / "cgroup.conf").unlink()


def _extra(out: Path) -> None:
    (out / "slurm" / "notes.txt").write_text("mine\n")


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "current": lambda out: None,
    "hand-edited": lambda out: _edit_keeping_size_and_mtime(out / EDITED),
    "deleted": _delete,
    "extra": _extra,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_check_says_what_reading_every_file_says(rendered: tuple[Path, Path],
                                                     scenario: str) -> None:
    spec, out = rendered
    SCENARIOS[scenario](out)
    result, checked = check_against(spec, out, jobs=1)
    plain = stale_diff(out, build(spec).files)
    assert checked.diff() == plain
    assert checked.found.foreign == foreign_paths(out)
    assert checked.stale == (scenario != "current")
    assert result.lock is not None and not result.lock.stale
    if scenario == "hand-edited":
        assert f"--- a/{EDITED}\n+++ b/{EDITED}\n" in plain
    if scenario == "extra":
        assert checked.found.foreign == ["slurm/notes.txt"] and plain == ""


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_cli_check_fails_on_every_stale_tree(rendered: tuple[Path, Path],
                                                 scenario: str) -> None:
    spec, out = rendered
    SCENARIOS[scenario](out)
    code, text, err = _cli("render", spec, "-o", out, "--check")
    assert code == (0 if scenario == "current" else 1), err
    if scenario == "extra":
        assert f"{out / 'slurm' / 'notes.txt'}: not written by cluster-iac" in err


def test_a_current_tree_is_confirmed_without_reading_its_files(
        rendered: tuple[Path, Path]) -> None:
    """After a render the stat record holds every file: the check reads none of them (the
    manifest alone), and a hand edit is the one file read again."""
    spec, out = rendered
    assert record_file(out).is_file()
    assert scan(out).hashed == []
    _edit_keeping_size_and_mtime(out / EDITED)
    assert scan(out).hashed == [EDITED]
    time.sleep(RACY_NS / 1e9)
    scan(out)  # the edit older than RACY_NS now: its new SHA-256 recorded (if not already)
    assert scan(out).hashed == []
    code, _, _ = _cli("render", spec, "-o", out, "--check")
    assert code == 1  # the record knows the edited bytes' SHA-256, not the manifest's


def test_without_a_record_every_file_is_read(rendered: tuple[Path, Path]) -> None:
    """A fresh checkout (CI): no record, or one that cannot be read, is only slower."""
    spec, out = rendered
    listed = sorted(p for p in scan(out).digests if p != MANIFEST)
    record_file(out).write_text("{not json")
    assert scan(out).hashed == listed
    record_file(out).unlink()
    _edit_keeping_size_and_mtime(out / EDITED)
    code, text, _ = _cli("render", spec, "-o", out, "--check")
    assert code == 1 and f"+++ b/{EDITED}" in text


def test_an_edit_right_after_the_render_is_seen(rendered: tuple[Path, Path]) -> None:
    """The racy case: an edit within the clock tick of the render's last write (the record
    was taken once that tick had passed, so the edit's ctime is later)."""
    spec, out = rendered
    _cli("render", spec, "-o", out)  # nothing changed: every file linked again, then recorded
    _edit_keeping_size_and_mtime(out / EDITED)
    code, text, _ = _cli("render", spec, "-o", out, "--check")
    assert code == 1 and f"+++ b/{EDITED}" in text


def test_render_check_prints_the_plan_changes_prints(rendered: tuple[Path, Path]) -> None:
    spec, out = rendered
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
    code, plan, err = _cli("changes", spec, "-o", out)
    assert code == 0, err
    assert "- nodes removed: gpu02" in plan and "## Actions for Slurm" in plan
    code, checked, _ = _cli("render", spec, "-o", out, "--check")
    assert code == 1
    assert checked.startswith(plan)
    assert checked[len(plan):].startswith("--- a/")  # then the diff


def test_a_render_rewrites_only_the_files_whose_bytes_changed(
        rendered: tuple[Path, Path]) -> None:
    spec, out = rendered
    before = {p: (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
              for p in out.rglob("*") if p.is_file()}
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
    code, _, err = _cli("render", spec, "-o", out)
    assert code == 0, err
    kept = rewritten = 0
    for path, (data, ino, mtime) in before.items():
        if not path.exists():
            continue
        st = path.stat()
        if path.read_bytes() == data:
            assert (st.st_ino, st.st_mtime_ns) == (ino, mtime), path
            kept += 1
        else:
            assert st.st_ino != ino, path
            rewritten += 1
    assert kept and rewritten
    assert scan(out).hashed == []  # recorded after the swap: the next run reads nothing


def test_the_check_on_two_processes_says_the_same(rendered: tuple[Path, Path]) -> None:
    """The forked worker's sink answers the texts that differ through the pipe."""
    spec, out = rendered
    spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
    _edit_keeping_size_and_mtime(out / EDITED)
    _, one = check_against(spec, out, jobs=1)
    _, two = check_against(spec, out, jobs=2)
    assert two.diff() == one.diff() == stale_diff(out, build(spec).files)
    assert two.differ == one.differ and "slurm/slurm.conf" in two.differ


@pytest.mark.parametrize("scenario", [*SCENARIOS, "node removed"])
def test_the_change_plan_from_the_differing_files_is_the_plain_one(
        rendered: tuple[Path, Path], scenario: str) -> None:
    """`changes` reads only the files render --check found different (Checked.changed): its
    plan is the one from every file of both trees compared."""
    spec, out = rendered
    if scenario == "node removed":
        spec.write_text(spec.read_text().replace("count: 2,", "count: 1,"))
        _edit_keeping_size_and_mtime(out / EDITED)
    else:
        SCENARIOS[scenario](out)
    result, checked = check_against(spec, out, jobs=1)
    assert result.lock is not None
    release = (result.plan.slurm.release.version,)
    old, new = checked.trees()
    fast = change_plan(old, new, result.lock.before,  # type: ignore[arg-type]
                       result.lock.after, release, differ=checked.changed)
    plain = change_plan(dict(RenderedTree(out)), build(spec).files, result.lock.before,
                        result.lock.after, release)
    assert fast == plain
    assert fast.empty == (scenario in ("current", "extra"))
    if scenario == "node removed":
        assert "gpu02" in fast.deltas[0].removed
