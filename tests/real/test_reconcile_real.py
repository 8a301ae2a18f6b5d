"""`cluster-iac reconcile` on what the real `slurmd -C` of each Slurm release prints: the
machine's own (22.05) and the Debian roots' (24.11, 26.05). Each output reads, keeps the
form of tests/data/reconcile/'s copies, and, named after a planned node, is judged against
that node's NodeName line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cluster_iac.reconcile import slurmd
from cluster_iac.reconcile.run import reconcile
from tests.conftest import example_build
from tests.real.slurm_harness import Runtime, host_runtime, root_runtimes
from tests.reconcile_fixtures import DATA

pytestmark = pytest.mark.real


def _runtimes() -> list[Runtime]:
    own = host_runtime()
    roots, _ = root_runtimes()
    return ([own] if own else []) + roots


def _slurmd_c(runtime: Runtime) -> str:
    if runtime.root is None:
        command = [runtime.tool("slurmd"), "-C"]
    else:  # a fresh /proc in the root, as the harness's sandbox mounts it
        root = str(runtime.root)
        command = ["unshare", "-m", "-p", "-f", "--kill-child", "--propagation", "private",
                   "sh", "-ec", f"mount -t proc proc {root}/proc && exec chroot {root} slurmd -C"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_real_slurmd_c_of_every_release_is_read_and_judged(tmp_path: Path) -> None:
    runtimes = _runtimes()
    if not runtimes:
        pytest.skip("no Slurm release here")
    plan = example_build("seed-64gpu-h100").plan
    for runtime in runtimes:
        text = _slurmd_c(runtime)
        record = slurmd.read(text)
        kept = slurmd.read((DATA / f"slurmd-C-{runtime.name}.txt").read_text())
        assert list(record) == list(kept), (runtime.name, text)
        path = tmp_path / f"compute01.{runtime.name}.slurmd"
        path.write_text(text)
        outcome = reconcile(plan, [(None, path)])
        assert outcome.errors == []
        codes = {f.code for f in outcome.findings}
        # this machine is not an 8-GPU server with 1.5 TiB: both differences are named
        assert codes == {"RECONCILE-SLURM-CPUS", "RECONCILE-SLURM-MEMORY"}, outcome
        assert all(re.match(r"compute01 \(rack r01 U\d+\)", f.place) for f in outcome.findings)
