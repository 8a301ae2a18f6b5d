"""Real consumer: with no slurm.priority, slurm.conf writes no priority key, and each release's
slurmctld holds its own default (emit/slurm_policy.py priority_parameters): priority/basic in
22.05, priority/multifactor with every weight 0 in 24.11 and 26.05. Both order jobs by
submission; this test is where that claim is measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster_iac.catalog.slurm_releases import MEASURED
from cluster_iac.emit import render_all
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _require
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

# What `scontrol show config` printed here for a slurm.conf without Priority* keys.
DEFAULT_PRIORITY_TYPE = {"22.05": "priority/basic", "24.11": "priority/multifactor",
                         "26.05": "priority/multifactor"}


@pytest.mark.parametrize("release", MEASURED)
def test_no_priority_spec_leaves_the_release_default(release: str, tmp_path: Path) -> None:
    runtime = _require(release)
    plan = compile_data(example_data("minimal", release))
    assert plan.settings.slurm.priority is None
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/") and rel.count("/") == 1:
            (tmp_path / rel).parent.mkdir(exist_ok=True)
            (tmp_path / rel).write_text(text)
    assert not re.search(r"(?m)^Priority", (tmp_path / "slurm" / "slurm.conf").read_text())
    (tmp_path / "run").mkdir()
    for cluster in harness.running(tmp_path / "slurm", tmp_path / "run", runtime):
        config = dict(re.findall(r"(?m)^(Priority\w+)\s+= (.*)$",
                                 cluster.scontrol("show", "config")))
        assert cluster.log_errors("slurmctld") == []
    assert config["PriorityType"] == DEFAULT_PRIORITY_TYPE[release]
    weights = {k: v for k, v in config.items() if k.startswith("PriorityWeight")
               and k != "PriorityWeightTRES"}
    assert all(v == "0" for v in weights.values()), weights
