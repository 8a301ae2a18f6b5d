"""Byte-identical output run to run: independent of the hash seed and of the working folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

SEEDS = ("0", "4242")


def _render(spec: Path, out: Path, seed: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "cluster_iac", "render", str(spec), "-o", str(out)],
                         capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    assert run.returncode == 0, run.stderr


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_render_is_byte_identical_across_hash_seeds(spec: Path, tmp_path: Path) -> None:
    trees = []
    for seed in SEEDS:
        out = tmp_path / f"seed{seed}"
        # A different working folder each time, too: no output may depend on it.
        work = tmp_path / f"cwd{seed}"
        work.mkdir()
        _render(spec, out, seed, work)
        trees.append(_tree(out))
    assert len(trees[0]) > 3
    assert trees[0].keys() == trees[1].keys()
    differing = [path for path in trees[0] if trees[0][path] != trees[1][path]]
    assert not differing, f"differ between PYTHONHASHSEED={SEEDS}: {differing}"


def test_no_timestamps_or_absolute_paths_in_output(tmp_path: Path) -> None:
    spec = ROOT / "examples" / "seed-64gpu-h100.yaml"
    _render(spec, tmp_path / "out", "1", tmp_path)
    for path, data in _tree(tmp_path / "out").items():
        text = data.decode("utf-8")
        assert str(tmp_path) not in text and str(ROOT) not in text, path
        assert not re.search(r"\b20\d\d-[01]\d-[0-3]\d[T ][0-2]\d:[0-5]\d", text), path
