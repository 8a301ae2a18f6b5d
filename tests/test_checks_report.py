"""report.md and the CLI around the validator: report command, exit 1 and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.cli.main import main
from tests.conftest import ROOT, example_build
from tests.facility_fixtures import example_data


def _spec(tmp_path: Path, data: dict) -> Path:  # type: ignore[type-arg]
    path = tmp_path / "cluster.yaml"
    path.write_text(json.dumps(data, indent=1))  # JSON is YAML
    return path


def _seed_208v(tmp_path: Path) -> Path:
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"].update(voltage_v=208, phases=1)
    return _spec(tmp_path, data)


def test_validate_and_render_exit_1_and_write_nothing(tmp_path: Path) -> None:
    spec = _seed_208v(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    # CB1's one line: 11.35 kW / (208 V x 0.95) = 57.4 A of 32 A x 80 %.
    assert ("error[POWER-BREAKER] rack r01 PDU r01-pdu-a breaker CB1 line L1 carries 57.4 A "
            "in normal operation" in result.output)
    out = tmp_path / "out"
    result = runner.invoke(main, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 1 and "nothing written" in result.output
    assert not out.exists()
    result = runner.invoke(main, ["report", str(spec)])
    assert result.exit_code == 1


def _imbalance_warnings(tmp_path: Path) -> Path:
    """The superpod with no load floor for the phase-imbalance warning: lightly loaded
    management PDUs (43 % imbalance at 10 % load) warn."""
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["phase_imbalance_min_load_percent"] = 0
    return _spec(tmp_path, data)


def test_strict_turns_warnings_into_errors(tmp_path: Path) -> None:
    spec = _imbalance_warnings(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["validate", str(spec)]).exit_code == 0
    result = runner.invoke(main, ["validate", "--strict", str(spec)])
    assert result.exit_code == 1
    assert "error[POWER-PHASE-IMBALANCE]" in result.output


def test_report_command_prints_report_md() -> None:
    result = CliRunner().invoke(main, ["report", str(ROOT / "examples" / "seed-64gpu-h100.yaml")])
    assert result.exit_code == 0
    # stdout alone: the example's warnings (NCCL-GUESSED-*) go to stderr before it
    assert result.stdout == example_build("seed-64gpu-h100").files["report.md"]


def test_report_has_the_model_its_sources_and_the_findings(tmp_path: Path) -> None:
    seed = example_build("seed-64gpu-h100").files["report.md"]
    assert "### Partition gpu-training" in seed
    assert ("| one node | 1 | 8 | 1 x 8 | - | - | 368.5 | 296.7 | 480.0 | - | - | NVLS | 480.0 "
            "| NVLink | 0.1 |") in seed
    assert ("| the whole partition | 8 | 64 | 8 x 8 | 25.0 | 1:1 | 24.0 | 21.7 | - | 23.6 | - "
            "| Ring | 24.0 | network | 0.1 |") in seed
    assert "| busbw | algbw x 2(n-1)/n | NVIDIA/nccl-tests doc/PERFORMANCE.md |" in seed
    assert "| hopper | 0.82 | 0.61 | 0.52 |" in seed
    assert "coreweave/nccl-tests README.md" in seed
    # The worst line of r01's PDU: CB1 L1 with compute01's PSU2 failed, 4,181.7 W / (239.6 V x
    # 0.95) = 18.4 A of 25.6 A (72 %), margin 7.2 A.
    assert ("| r01 | r01-pdu-a | single | 45.10 | 45.10 | CB1 L1 | 18.4 | 25.6 | 72 | 7.2 | "
            "compute01 PSU2 failed |") in seed
    # the seed's findings: the device names its NCCL files guess (issue 40)
    assert "| warning | NCCL-GUESSED-IFNAME | NCCL_SOCKET_IFNAME is =eth0 for node type(s) " \
           "h100-hdr" in seed
    assert "| warning | NCCL-GUESSED-HCA | node type h100-hdr: NCCL_IB_HCA=mlx5_0 is a " \
           "guess" in seed
    assert "| warning | SPOF-FEED | PDU profile seed-415v is layout 'single'" in seed
    assert "| warning | SPOF-CDU | loop cdu1 has one CDU for 1 rack(s)" in seed
    assert "| warning | POWER-FEED-ASSUMED | PDU profile seed-415v states no inlet_a" in seed
    # with the names and the feeds' ratings declared and the one feed and one CDU accepted,
    # none: every check passed
    data = example_data("seed-64gpu-h100")
    for profile, inlet in (("seed-415v", 128), ("mgmt-208v", 30), ("storage-415v", 32)):
        data["power"]["pdu_profiles"][profile]["inlet_a"] = inlet
    data["policy"] = {"levels": {"SPOF-FEED": "ignore", "SPOF-CDU": "ignore"}}
    data["networks"]["management"]["interface"] = "enp170s0f0"
    data["nccl"] = {"node_types": {"h100-hdr": {"NCCL_IB_HCA": "=mlx5_0"}}}
    declared = CliRunner().invoke(main, ["report", str(_spec(tmp_path, data))])
    assert declared.exit_code == 0
    assert "No findings: every check passed." in declared.stdout
    result = CliRunner().invoke(main, ["report", str(_imbalance_warnings(tmp_path))])
    assert result.exit_code == 0
    assert "| warning | POWER-PHASE-IMBALANCE | rack mgmt-r3 PDU mgmt-r3-pdu-a" in result.output
    assert "`policy.max_phase_imbalance` |" in result.output
    superpod = example_build("dgx-h100-superpod-4su").files["report.md"]
    # Young's interval from the write time (4,500 GB at 250 GB/s) and the cluster MTBF the
    # failure model gives (plan/failures.py): sqrt(2 delta M)
    from cluster_iac.plan.failures import partition_jobs

    (job,) = partition_jobs(example_build("dgx-h100-superpod-4su").plan)
    assert job.mtbf_h is not None
    young = (2 * 4500 / 250 * job.mtbf_h * 3600) ** 0.5 / 60
    assert (f"| Optimal interval for a synchronous write to Lustre, Young sqrt(2 delta M) (min) "
            f"| {young:.1f} |") in superpod
