"""Checkpoint modes and stores through `cluster-iac report`: each gives the ETTR that
docs/goodput.md's formulas give, computed here from the spec's own numbers.

The SuperPOD example, copied with measured failure rates for every class the catalog rates
(reliability.failure_rates), so that the job's MTTF is plain arithmetic on the spec and the same
at every end of the published range: its largest job is the 127 DGX H100 of `batch` less the one
default hot spare, 126 nodes of 8 GPUs; its checkpoint is 4,500 GB every 30 minutes, and its
Lustre writes 250 GB/s and reads 400 GB/s (measured, storage.lustre)."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SUPERPOD = ROOT / "examples" / "dgx-h100-superpod-4su.yaml"

NODES, GPUS = 126, 126 * 8
SIZE_GB, TAU_S = 4500, 30 * 60
LUSTRE_WRITE, LUSTRE_READ = 250, 400
# failures per unit per million hours; gpu per GPU, host per node, software once per job
RATES = {"gpu": 20, "hbm": 0, "host": 30, "psu": 0, "nic": 0, "link": 0, "software": 40000}
M_S = 1e6 / (RATES["gpu"] * GPUS + RATES["host"] * NODES + RATES["software"]) * 3600
# recovery without the reload: detect 600 s (PyTorch's NCCL timeout) + drain 0 + restart 150 s;
# no repair wait: the one spare replaces a node, and software takes out none
DETECT_RESTART_S = 600 + 0 + 150
PCIE_GEN5_GBS = 63.0  # a Hopper GPU's copy to host memory, PCIe Gen5 x16 each way


def sync_ettr(tau: float, delta: float, recovery: float, m: float) -> float:
    """docs/goodput.md, sync: ETTR = tau / (M e^(R/M) (e^((tau + delta)/M) - 1)) (Daly 2006)."""
    return tau / (m * math.exp(recovery / m) * (math.exp((tau + delta) / m) - 1))


def async_ettr(tau: float, b: float, persist: float, recovery: float, m: float) -> float:
    """docs/goodput.md, async: ETTR = tau / (M e^((R + p)/M) (e^((tau + b)/M) - 1))."""
    return tau / (m * math.exp((recovery + persist) / m) * (math.exp((tau + b) / m) - 1))


def _spec(tmp_path: Path, workload: str) -> Path:
    """The SuperPOD with the measured rates and ``workload`` lines after the interval's."""
    text = SUPERPOD.read_text()
    interval = "  checkpoint_interval_min: 30\n"
    assert interval in text and "\npolicy:" in text and "\nreliability:" not in text
    rates = ", ".join(f"{k}: {v}" for k, v in RATES.items())
    text = text.replace(interval, interval + workload, 1)
    text = text.replace("\npolicy:", f"\nreliability:\n  failure_rates: {{{rates}}}\n\npolicy:", 1)
    out = tmp_path / SUPERPOD.name
    out.write_text(text)
    shutil.copy(SUPERPOD.with_suffix(".lock"), out.with_suffix(".lock"))
    return out


def _report(spec: Path) -> dict[str, str]:
    """The largest job's figures from `cluster-iac report`'s Goodput section, by row name."""
    result = CliRunner().invoke(main, ["report", str(spec)])
    assert result.exit_code == 0, result.output
    section = result.output[result.output.index("## Goodput"):result.output.index("## Cost")]
    rows = re.findall(r"^\| (.+?) \| ([^|]*) \|$", section, re.M)
    return dict(rows)


def _ettr_row(figures: dict[str, str]) -> str:
    (value,) = [v for k, v in figures.items() if k.startswith("ETTR (effective training")]
    return value


def _expect(figures: dict[str, str], ettr: float, mode: str, store: str) -> None:
    """The figures that every case shares, and the ETTR at all three ends (measured rates)."""
    assert figures["Nodes in the job (partition less hot spares)"] == str(NODES)
    assert figures["Job MTTF M = 24 h / interruptions per day (h)"] == (
        "{0} ({0} - {0})".format(f"{M_S / 3600:.2f}"))
    assert figures[f"Checkpoint: {mode} to {store}"] == ""
    percent = f"{100 * ettr:.2f}"
    assert _ettr_row(figures) == f"{percent} ({percent} - {percent})"


def test_sync_to_lustre(tmp_path: Path) -> None:
    figures = _report(_spec(tmp_path, ""))
    delta, reload = SIZE_GB / LUSTRE_WRITE, SIZE_GB / LUSTRE_READ
    assert figures["Checkpoint write delta = size / store write (s)"] == f"{delta:.1f}"
    assert figures["Reload = size / store read (s)"] == f"{reload:.1f}"
    _expect(figures, sync_ettr(TAU_S, delta, DETECT_RESTART_S + reload, M_S), "sync", "lustre")


def test_async_to_lustre_blocks_for_the_copy_and_pays_the_persist_on_failure(
        tmp_path: Path) -> None:
    figures = _report(_spec(tmp_path, "  checkpoint_mode: async\n"))
    b = SIZE_GB / GPUS / PCIE_GEN5_GBS  # each GPU's share over its PCIe link: 0.07 s
    persist, reload = SIZE_GB / LUSTRE_WRITE, SIZE_GB / LUSTRE_READ
    assert figures["Blocking copy to host memory b = delta (s)"] == f"{b:.1f}"
    assert figures["Persist to the store after the copy, size / store write (s)"] == (
        f"{persist:.1f}")
    ettr = async_ettr(TAU_S, b, persist, DETECT_RESTART_S + reload, M_S)
    _expect(figures, ettr, "async", "lustre")
    assert ettr > sync_ettr(TAU_S, persist, DETECT_RESTART_S + reload, M_S)


def test_sync_to_an_object_store_at_its_own_bandwidth(tmp_path: Path) -> None:
    write, read = 20, 50
    figures = _report(_spec(tmp_path, f"  checkpoint_store: object\n"
                                      f"  checkpoint_store_write_gbs: {write}\n"
                                      f"  checkpoint_store_read_gbs: {read}\n"))
    delta, reload = SIZE_GB / write, SIZE_GB / read
    assert figures["Checkpoint write delta = size / store write (s)"] == f"{delta:.1f}"
    assert figures["Reload = size / store read (s)"] == f"{reload:.1f}"
    _expect(figures, sync_ettr(TAU_S, delta, DETECT_RESTART_S + reload, M_S), "sync", "object")


def test_async_to_local_nvme_writes_per_node_and_reloads_from_lustre(tmp_path: Path) -> None:
    per_node = 5
    figures = _report(_spec(tmp_path, "  checkpoint_mode: async\n  checkpoint_store: nvme\n"
                                      f"  checkpoint_store_write_gbs: {per_node}\n"))
    b = SIZE_GB / GPUS / PCIE_GEN5_GBS
    persist = SIZE_GB / (per_node * NODES)  # every node's drives at once
    reload = SIZE_GB / LUSTRE_READ  # a failed node's drives are gone with it
    assert figures["Persist to the store after the copy, size / store write (s)"] == (
        f"{persist:.1f}")
    assert figures["Reload = size / store read (s)"] == f"{reload:.1f}"
    _expect(figures, async_ettr(TAU_S, b, persist, DETECT_RESTART_S + reload, M_S), "async",
            "nvme")


def test_a_persist_longer_than_the_interval_is_an_error_at_the_interval(tmp_path: Path) -> None:
    """One persist at a time (CheckFreq 4.2): 4,500 GB at 2 GB/s takes 2,250 s, more than the
    30-minute interval; the hint's interval, 38 minutes, renders with the formula's ETTR."""
    write = 2
    spec = _spec(tmp_path, "  checkpoint_mode: async\n  checkpoint_store: object\n"
                           f"  checkpoint_store_write_gbs: {write}\n")
    result = CliRunner().invoke(main, ["report", str(spec)])
    assert result.exit_code == 1
    line = next(i for i, text in enumerate(spec.read_text().splitlines(), 1)
                if text.startswith("  checkpoint_interval_min:"))
    persist = SIZE_GB / write
    assert re.search(rf"{spec.name}:{line}:\d+: error\[CHECKPOINT-PERSIST\] .*{persist:.0f} s",
                     result.output), result.output
    minutes = math.ceil(persist / 60)
    assert f"an interval of at least {minutes} min" in result.output
    spec.write_text(spec.read_text().replace("checkpoint_interval_min: 30",
                                             f"checkpoint_interval_min: {minutes}"))
    figures = _report(spec)
    b = SIZE_GB / GPUS / PCIE_GEN5_GBS
    reload = SIZE_GB / write  # an object store reads at its write bandwidth unless given
    _expect(figures, async_ettr(minutes * 60, b, persist, DETECT_RESTART_S + reload, M_S),
            "async", "object")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_judged_end_is_the_figure_min_goodput_rejects(tmp_path: Path, mode: str) -> None:
    """policy.min_goodput just above the formula's ETTR rejects the design, just below passes."""
    spec = _spec(tmp_path, f"  checkpoint_mode: {mode}\n")
    reload = SIZE_GB / LUSTRE_READ
    ettr = (sync_ettr(TAU_S, SIZE_GB / LUSTRE_WRITE, DETECT_RESTART_S + reload, M_S)
            if mode == "sync" else
            async_ettr(TAU_S, SIZE_GB / GPUS / PCIE_GEN5_GBS, SIZE_GB / LUSTRE_WRITE,
                       DETECT_RESTART_S + reload, M_S))
    text = spec.read_text()
    for minimum, code in ((ettr + 0.0005, 1), (ettr - 0.0005, 0)):
        spec.write_text(text.replace("\npolicy:\n", f"\npolicy:\n  min_goodput: {minimum:.4f}\n"))
        result = CliRunner().invoke(main, ["validate", str(spec)])
        assert result.exit_code == code, result.output
        assert ("GOODPUT-MIN" in result.output) == bool(code)
