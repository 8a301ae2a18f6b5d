"""Real consumer: `slurmd -G` of Slurm 22.05, 24.11 and 26.05 reads the hgx-h200 example's MIG
node type from its gres.conf (rendered for each release) and lists every MIG instance the plan
made, of its type, on its devices (stand-ins made as the other gres tests make /dev/nvidiaN);
the node then registers with exactly the plan's GPU GRES counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cluster_iac.emit import render_all
from cluster_iac.plan.mig import gres_counts
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.test_slurm_real import _gres_found, _require, mig_caps
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real


@pytest.mark.parametrize("release", ["22.05", "24.11", "26.05"])
def test_slurmd_lists_the_planned_mig_gres(release: str, tmp_path: Path) -> None:
    runtime = _require(release)
    plan = compile_data(example_data("hgx-h200", release))
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    (tmp_path / "run").mkdir()
    nt = plan.node_types["h200-mig"]
    host = next(n.hostname for n in plan.compute_nodes if n.node_type == "h200-mig")
    # the plan, from the catalog's profiles: GPUs 0-3 seven 1g.18gb, 4-7 3g + 2g + 1g x2
    planned = Counter(d.gres_type for d in nt.mig)
    assert planned == {"h200_1g.18gb": 4 * 7 + 4 * 2, "h200_2g.35gb": 4, "h200_3g.71gb": 4}
    for cluster in harness.running(tmp_path / "slurm", tmp_path / "run", runtime):
        records = cluster.gres_parse(host, nt.sockets, nt.cores_per_socket,
                                     nt.threads_per_core, nt.gpu_count, mig_caps(nt))
        assert Counter(r["Type"] for r in records) == planned
        assert all(r["Count"] == "1" for r in records)
        assert sorted(r["File"] for r in records) == sorted(",".join(d.files) for d in nt.mig)
        record = cluster.register(host, nt.sockets, nt.cores_per_socket, nt.threads_per_core,
                                  nt.gpu_count, None, mig_caps(nt))
        assert _gres_found(record) == ",".join(
            f"gpu:{t}:{n}" for t, n in gres_counts(nt.gres_type, nt.gpu_count, nt.mig).items())
        assert "gres/gpu" not in record.get("Reason", "")  # no count mismatch
        assert cluster.log_errors(f"slurmd-{host}") == []
