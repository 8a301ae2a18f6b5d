"""Issue 40: the Lustre write bound counts the servers' RAID engine, through the CLI.

The superpod's 8 OSS with one RAID-6 18+2 OST each and both NDR ports given to LNet: the
drives write 8 x 18 x 4.2 = 604.8 GB/s and the NICs carry 800, but Linux md computes each
array's parity in its one raid5d thread, so each server writes at most one core's raid6
gen() rate, 54,210 MiB/s = 56.84 GB/s: 8 x 56.84 = 454.7 GB/s. Before the RAID engine term,
the bound was 604.8 (the drives) and a measured 500 passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.facility_fixtures import example_data

PER_CORE_GBS = 54_210 * 2**20 / 1e9  # the linux-raid post's avx512x4 gen(), MiB/s -> GB/s


def _spec() -> dict[str, Any]:
    data = example_data("dgx-h100-superpod-4su")
    lustre = data["storage"]["lustre"]
    lustre["osts_per_oss"] = 1
    lustre["ost"] = {"drive": "kioxia-cm6-r-30tb", "drives": 20, "raid": "raid6"}
    both = ["enp41s0f0", "enp41s0f1"]
    lustre["lnet"] = {"interfaces": {"lustre": both, "dgx-h100": both}}
    for key in ("read_gbs", "write_gbs", "capacity_tb"):
        lustre.pop(key)
    return data


def _run(tmp_path: Path, data: dict[str, Any], command: str) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    with path.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, [command, str(path)])
    return result.exit_code, result.output


def test_software_raid_parity_sets_the_write_bound(tmp_path: Path) -> None:
    code, out = _run(tmp_path, _spec(), "report")
    assert code == 0, out
    engine = 8 * PER_CORE_GBS
    assert (f"| write | 604.8 | {engine:.1f} (software, 1 core(s) per server) | 800.0 | 6350.0 "
            f"| 800.0 | {engine:.1f} | RAID engine |") in out
    # reads of a healthy array compute no parity: the drives and NICs set them
    assert "| read | 993.6 | not a limit (software, 1 core(s) per server) | 800.0 |" in out
    assert "min(cores, RAID 5/6 OSTs) x the per-core parity rate (x86_64 56.8 GB/s" in out
    assert "Processor recommendation for RAID6" in out  # the figure's source
    code, out = _run(tmp_path, _spec(), "validate")
    assert code == 0, out
    assert (f"info[STORAGE-RAID-ENGINE] the Lustre write bound, {engine:.1f} GB/s, is set by "
            f"the OSSs' RAID engine (software, 1 core(s) per server)") in out
    assert "more OSTs per OSS (smaller groups) spread it over more cores" in out


def test_a_measured_write_above_the_parity_term_is_an_error(tmp_path: Path) -> None:
    data = _spec()
    data["storage"]["lustre"]["write_gbs"] = 500  # below the drives, above the parity
    code, out = _run(tmp_path, data, "validate")
    assert code == 1
    assert ("error[STORAGE-BANDWIDTH-CLAIM] write_gbs 500 GB/s is more than the hardware can "
            f"move, {8 * PER_CORE_GBS:.1f} GB/s (limited by the RAID engine: drives 604.8, "
            f"RAID engine (software, 1 core(s) per server) {8 * PER_CORE_GBS:.1f}") in out
    assert "spec.yaml:" in out  # located at the figure's line


def test_more_osts_spread_parity_over_more_cores(tmp_path: Path) -> None:
    """Two RAID-6 8+2 OSTs per server: two raid5d threads, 2 x 56.8 per server, above the
    drives' 2 x 8 x 4.2 = 67.2: the drives bind again."""
    data = _spec()
    data["storage"]["lustre"]["osts_per_oss"] = 2
    data["storage"]["lustre"]["ost"]["drives"] = 10
    code, out = _run(tmp_path, data, "report")
    assert code == 0, out
    assert f"| write | 537.6 | {16 * PER_CORE_GBS:.1f} (software, 2 core(s) per server) |" in out
    assert "| 537.6 | drives |" in out


def test_a_declared_hardware_engine_replaces_the_software_term(tmp_path: Path) -> None:
    data = _spec()
    data["storage"]["lustre"]["raid_engine"] = {"kind": "hardware", "write_gbs": 100,
                                                "read_gbs": 60}
    code, out = _run(tmp_path, data, "report")
    assert code == 0, out
    assert "| write | 604.8 | 800.0 (hardware) | 800.0 |" in out
    assert "| read | 993.6 | 480.0 (hardware) | 800.0 | 6350.0 | 800.0 | 480.0 | RAID engine |" \
        in out
    data["storage"]["lustre"]["write_gbs"] = 500  # within the drives: a measured narrowing
    code, out = _run(tmp_path, data, "validate")
    assert code == 0 and "STORAGE-BANDWIDTH-CLAIM" not in out, out


def test_engine_figures_that_do_not_fit_the_kind_are_located_errors(tmp_path: Path) -> None:
    data = _spec()
    data["storage"]["lustre"]["raid_engine"] = {"kind": "declustered"}
    code, out = _run(tmp_path, data, "validate")
    assert code == 1
    assert ("error[LUSTRE-RAID-ENGINE] a declustered RAID engine needs its per-server "
            "write_gbs") in out
    data["storage"]["lustre"]["raid_engine"] = {"write_gbs": 100}
    code, out = _run(tmp_path, data, "validate")
    assert code == 1
    assert "error[LUSTRE-RAID-ENGINE] write_gbs is for a hardware or declustered engine" in out
