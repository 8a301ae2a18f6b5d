"""Real consumer: MIG with AutoDetect=nvml, Slurm's documented MIG setup (gres.html "MIG
Management"), on Slurm 24.11 and 26.05 (22.05 names MIG instances from their memory and is
refused at the spec: tests/test_hardware_variants.py).

What runs for real: slurmctld starts on the rendered slurm.conf and gres.conf (the MIG node's
`AutoDetect=nvml`, its Gres= of the MIG types slurmd derives) and logs no error, and holds the
node with exactly those types; `slurmd -G` parses that gres.conf without an error; a
registering slurmd is compared against the configured count. What cannot run here: NVML
itself. Debian's Slurm is built without NVML, so its slurmd detects no GPU at all (`slurmd -G`
lists nothing, the node registers 0 of the configured count); the MIG type strings are
checked against gpu_nvml.c's code (compile/plan_mig.py nvml_type_prefix), not a GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_iac.emit import render_all
from cluster_iac.plan.mig import gres_counts
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _require
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real


@pytest.mark.parametrize("release", ["24.11", "26.05"])
def test_daemons_take_the_autodetect_mig_pair(release: str, tmp_path: Path) -> None:
    runtime = _require(release)
    data = example_data("hgx-h200", release)
    data["node_types"]["h200-mig"]["gres_autodetect"] = "nvml"
    plan = compile_data(data)
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    (tmp_path / "run").mkdir()
    nt = plan.node_types["h200-mig"]
    host = next(n.hostname for n in plan.compute_nodes if n.node_type == "h200-mig")
    assert f"NodeName={host} AutoDetect=nvml" in (tmp_path / "slurm/gres.conf").read_text()
    configured = ",".join(f"gpu:{t}:{n}" for t, n in
                          gres_counts(nt.gres_type, nt.gpu_count, nt.mig).items())
    assert configured == "gpu:h200_1g.18gb:36,gpu:h200_2g.35gb:4,gpu:h200_3g.71gb:4"
    for cluster in harness.running(tmp_path / "slurm", tmp_path / "run", runtime):
        assert cluster.log_errors("slurmctld") == []
        # no NVML in Debian's build: nothing detected, and no error parsing the file
        assert cluster.gres_parse(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                                  nt.gpu_count) == []
        record = cluster.register(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                                  nt.gpu_count)
        assert record["Gres"] == configured  # slurmctld holds the node with the MIG types
        # and compares what slurmd detects with them (here nothing: no NVML, no GPU)
        assert "gres/gpu count reported lower than configured (0 < 44)" in record["Reason"]
        assert cluster.log_errors(f"slurmd-{host}") == []
