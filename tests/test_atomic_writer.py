"""The output tree is replaced as a whole: renders killed with SIGKILL during their write phase
leave the whole previous tree or the whole new one, and the next render cleans up after them."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster_iac.render import build
from cluster_iac.writer import with_manifest, write_tree
from tests.conftest import ROOT

MINIMAL = ROOT / "examples" / "minimal.yaml"
KILLS = 25


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _expected(files: dict[str, str]) -> dict[str, bytes]:
    return {path: text.encode() for path, text in with_manifest(files).items()}


@pytest.fixture()
def specs(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    text = MINIMAL.read_text()
    old.write_text(text)
    new.write_text(text.replace("count: 2,", "count: 1,"))  # changes slurm, ansible, report...
    return old, new


def _kill_during_write(spec: Path, out: Path, delay: float) -> int | None:
    """Start a render; once its staging folder appears (the write phase), wait ``delay`` and
    SIGKILL it. Its return code (None when it was killed before it wrote anything)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    render = subprocess.Popen([sys.executable, "-m", "cluster_iac", "render", str(spec), "-o",
                               str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env)
    staging = f".{out.name}.cluster-iac-"
    deadline = time.monotonic() + 120
    while render.poll() is None and time.monotonic() < deadline:
        if any(name.startswith(staging) for name in os.listdir(out.parent)):
            time.sleep(delay)
            break
        time.sleep(0.0005)
    render.send_signal(signal.SIGKILL)
    return render.wait()


def test_sigkill_in_the_write_phase_leaves_a_whole_tree(specs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    old_spec, new_spec = specs
    old_files = build(old_spec).files
    old, new = _expected(old_files), _expected(build(new_spec).files)
    assert old != new
    out = tmp_path / "out"
    rng = random.Random(15)
    outcomes = {"old": 0, "new": 0}
    killed_mid_write = 0
    for _ in range(KILLS):
        write_tree(out, old_files)  # the previous tree again; cleans what a kill left
        assert _tree(out) == old
        code = _kill_during_write(new_spec, out, rng.uniform(0, 0.03))
        tree = _tree(out)
        assert tree in (old, new), sorted(set(tree) ^ set(new))
        outcomes["old" if tree == old else "new"] += 1
        leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]
        killed_mid_write += code == -signal.SIGKILL and bool(leftovers)
    print(f"{KILLS} kills: {outcomes}, {killed_mid_write} with a staging folder left behind")
    assert killed_mid_write > 0  # some kills did land inside the write phase
    # the next render finishes the job and leaves nothing beside or inside the output
    subprocess.run([sys.executable, "-m", "cluster_iac", "render", str(new_spec), "-o",
                    str(out)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert _tree(out) == new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.yaml", "old.yaml", "out"]


def test_a_write_refused_half_way_leaves_the_previous_tree(specs: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    """A staging write the system refuses (here: a file below a path that is itself a file)
    stops the render before the swap: the previous tree stays, the staging folder is removed."""
    old_spec, new_spec = specs
    out = tmp_path / "out"
    write_tree(out, build(old_spec).files)
    before = _tree(out)
    files = build(new_spec).files
    files["zz"] = "a file\n"
    files["zz/below"] = "a file below a file\n"
    with pytest.raises(OSError):
        write_tree(out, files)
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.yaml", "old.yaml", "out"]
