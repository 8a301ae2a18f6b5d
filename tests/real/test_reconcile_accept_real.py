"""`reconcile --accept` on the real ibnetdiscover's output of a delivered fabric (ibsim, vendor
GUIDs, the driver's adapter descriptions): the GUIDs go to the lock, the next render writes
partitions.conf and root-guids from them, and the real OpenSM, given those files, brings the
subnet up and puts the partition key in exactly the Slurm partition's adapters."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.formats.ibnetdiscover import topology_text
from cluster_iac.plan.subnet import topology
from tests.conftest import ROOT, example_build
from tests.real.ibsim_harness import Simulator, lids, log_problems, pkeys
from tests.real.test_cabling_verify_real import _delivered

pytestmark = pytest.mark.real

NAME = "seed-64gpu-h100"


def test_accepted_guids_drive_opensm(tmp_path: Path) -> None:
    plan = example_build(NAME).plan
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"{NAME}{suffix}", tmp_path / f"{NAME}{suffix}")
    spec = tmp_path / f"{NAME}.yaml"
    (tmp_path / "sim").mkdir()
    with Simulator(topology_text(_delivered(topology(plan, "compute"))), tmp_path / "sim") as sim:
        found = tmp_path / "compute.ibnetdiscover"
        found.write_text(sim.discover())
        result = CliRunner().invoke(main, ["reconcile", str(spec), str(found), "--accept"])
        assert result.exit_code == 0, result.output
        guids = [line for line in spec.with_suffix(".lock").read_text().splitlines()
                 if line.startswith("guid ")]
        assert len(guids) == 19 and all(" 0x0002c903" in line for line in guids), guids
        out = tmp_path / "out"
        result = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
        assert result.exit_code == 0, result.output
        folder = out / "opensm" / "compute"
        partitions = (folder / "partitions.conf").read_text()
        assert "PLACEHOLDERS" not in partitions and "0x0002c903" in partitions
        roots = tmp_path / "root-guids"  # outside the simulator's folder (its 2 paths)
        roots.write_text((folder / "root-guids").read_text())
        conf = re.sub(r"(?m)^root_guid_file .*$", f"root_guid_file {roots}",
                      (folder / "opensm.conf").read_text())
        assert f"root_guid_file {roots}" in conf
        log = sim.opensm(conf, partitions)
        assert log_problems(log, "updn") == []
        members = set(next(p for p in plan.partitions if p.name == "gpu-training").nodes)
        for desc, lid in lids(sim.discover()).items():
            want = {0xFFFF} | ({0x8002} if desc.split()[0] in members else set())
            assert pkeys(sim, lid) == want, desc
