"""Through the CLI: job sizes with MTTF and ETTR, checkpoint modes and stores, measured rates;
and the published fleets against the range the report prints for each fleet's shape."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.plan.fleets import ENDS, fleets, predicted_per_day, scale, scales
from tests.conftest import example_build

ROOT = Path(__file__).resolve().parents[1]
SUPERPOD = ROOT / "examples" / "dgx-h100-superpod-4su.yaml"


def _spec(tmp_path: Path, old: str, new: str) -> Path:
    text = SUPERPOD.read_text()
    assert old in text
    out = tmp_path / SUPERPOD.name
    out.write_text(text.replace(old, new, 1))
    shutil.copy(SUPERPOD.with_suffix(".lock"), out.with_suffix(".lock"))
    return out


def _cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def _line_of(spec: Path, needle: str) -> int:
    return next(i for i, line in enumerate(spec.read_text().splitlines(), 1) if needle in line)


def test_job_sizes_get_mttf_and_ettr_with_real_gpu_counts(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "allreduce_job_sizes: [64]", "allreduce_job_sizes: [64, 100, 4100]")
    result = _cli("report", spec)
    assert result.exit_code == 0, result.output
    section = result.output[result.output.index("## Goodput"):]
    # 100 GPUs on 8-GPU nodes is 13 nodes, 104 GPUs, and says so; each size has MTTF and ETTR
    row = re.search(r"\| 104 GPUs \(100 asked, rounded up to whole nodes\) \| 13 \| 104 \| "
                    r"[\d.]+ \([\d.]+ - [\d.]+\) \| [\d.,]+ \([\d.,]+ - [\d.,]+\) \| "
                    r"[\d.]+ \([\d.]+ - [\d.]+\) \|", section)
    assert row, section[:3000]
    assert "| 4,100 GPUs (more than the partition's 1,016) | - |" in section
    # the oversized ask is a warning at its own line, with a hint that names the limit
    result = _cli("validate", spec)
    line = _line_of(spec, "allreduce_job_sizes")
    assert re.search(rf"{spec.name}:{line}:\d+: warning\[GOODPUT-JOB-SIZE\] .*4,100 GPUs",
                     result.output), result.output
    assert "at most 1,016 GPUs" in result.output


def test_small_jobs_fail_more_often_per_node(tmp_path: Path) -> None:
    from cluster_iac.plan.job_sizes import sized_jobs

    plan = example_build(SUPERPOD.stem).plan
    sizes = sized_jobs(plan)["batch"]
    per_node = [s.failures["expected"].per_day / s.nodes for s in sizes]
    assert per_node == sorted(per_node, reverse=True) and per_node[0] > 5 * per_node[-1]


def test_async_checkpoint_blocks_less_and_must_persist_within_the_interval(
        tmp_path: Path) -> None:
    from cluster_iac.plan.goodput import goodputs
    from cluster_iac.render import build

    slow = _spec(tmp_path, "  checkpoint_interval_min: 30",
                 "  checkpoint_interval_min: 30\n  checkpoint_store: object\n"
                 "  checkpoint_store_write_gbs: 5")
    (sync,) = goodputs(build(slow, emit=False).plan)
    assert sync.write_s == pytest.approx(4500 / 5) and sync.mode == "sync"
    text = slow.read_text().replace("  checkpoint_store: object",
                                    "  checkpoint_mode: async\n  checkpoint_store: object")
    slow.write_text(text)
    (fast,) = goodputs(build(slow, emit=False).plan)
    # the job stops only for the copy of its 4.5 TB to host memory over PCIe Gen5 x16
    assert fast.write_s == pytest.approx(4500 / 1008 / 63)
    assert fast.persist_s == pytest.approx(900) and fast.persist_fits
    assert fast.useful is not None and sync.useful is not None and fast.useful > sync.useful
    # a persist longer than the planned interval is an error at the interval's line
    slow.write_text(text.replace("checkpoint_store_write_gbs: 5", "checkpoint_store_write_gbs: 2"))
    result = _cli("validate", slow)
    assert result.exit_code == 1
    line = _line_of(slow, "checkpoint_interval_min")
    assert re.search(rf"{slow.name}:{line}:\d+: error\[CHECKPOINT-PERSIST\] .*2250 s",
                     result.output), result.output
    assert "an interval of at least 38 min" in result.output


def test_a_measured_blocking_time_only_lengthens_the_derived_one(tmp_path: Path) -> None:
    from cluster_iac.plan.goodput import goodputs
    from cluster_iac.render import build

    spec = _spec(tmp_path, "  checkpoint_interval_min: 30",
                 "  checkpoint_interval_min: 30\n  checkpoint_mode: async\n"
                 "  checkpoint_blocking_s: 0.001")
    (g,) = goodputs(build(spec, emit=False).plan)
    assert g.write_s == pytest.approx(4500 / 1008 / 63)
    spec.write_text(spec.read_text().replace("checkpoint_blocking_s: 0.001",
                                             "checkpoint_blocking_s: 12"))
    (g,) = goodputs(build(spec, emit=False).plan)
    assert g.write_s == 12 and g.store == "lustre"


@pytest.mark.parametrize("store", ["object", "nvme"])
def test_a_store_without_bandwidth_is_an_error_at_its_key(tmp_path: Path, store: str) -> None:
    spec = _spec(tmp_path, "  checkpoint_interval_min: 30",
                 f"  checkpoint_interval_min: 30\n  checkpoint_store: {store}")
    result = _cli("validate", spec)
    assert result.exit_code == 1
    line = _line_of(spec, "checkpoint_store:")
    assert re.search(rf"{spec.name}:{line}:\d+: error\[CHECKPOINT-STORE\]", result.output)
    assert "checkpoint_store_write_gbs" in result.output
    # the hint works: with the bandwidth given, the error is gone
    spec.write_text(spec.read_text().replace(
        f"checkpoint_store: {store}",
        f"checkpoint_store: {store}\n  checkpoint_store_write_gbs: 40"))
    assert "CHECKPOINT-STORE" not in _cli("validate", spec).output


def test_nvme_store_scales_with_the_job_and_reloads_from_lustre(tmp_path: Path) -> None:
    from cluster_iac.plan.goodput import goodputs
    from cluster_iac.render import build

    spec = _spec(tmp_path, "  checkpoint_interval_min: 30",
                 "  checkpoint_interval_min: 30\n  checkpoint_store: nvme\n"
                 "  checkpoint_store_write_gbs: 10")
    plan = build(spec, emit=False).plan
    (g,) = goodputs(plan)
    assert g.write_s == pytest.approx(4500 / (10 * g.job.nodes))
    assert plan.lustre is not None
    assert g.reload_s == pytest.approx(4500 / plan.lustre.hardware.read.effective)


def test_measured_rates_are_used_at_every_end_and_said(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "\npolicy:", "\nreliability:\n  failure_rates: {gpu: 20}\n\npolicy:")
    result = _cli("report", spec)
    assert result.exit_code == 0, result.output
    assert "measured here: gpu" in result.output
    assert re.search(r"\| gpu \| .* \| 20\.000 \| 20\.000 / 20\.000 / 20\.000 \| spec, measured \|",
                     result.output)


def test_no_published_fleet_falls_outside_the_range_for_its_shape() -> None:
    """From the catalog alone: each fleet's interruptions a day (over the classes its count
    covers) and each published job MTTF lie between the lowest and highest predictions for that
    fleet's shape; the generation's expected figure is within the spread of its own fleets."""
    for f in fleets().values():
        low, high = (predicted_per_day(f.gpus, f.generation, end, f.covers) for end in
                     ("lowest", "highest"))
        published = f.per_node_day * f.nodes + (f.per_job_day or 0 if f.covers == "all" else 0)
        assert low <= published * (1 + 1e-9) and published <= high * (1 + 1e-9), f.key
        for gpus, mttf in f.mttf_h.items():
            fast, slow = (24 / predicted_per_day(gpus, f.generation, end) for end in
                          ("highest", "lowest"))
            assert fast <= mttf <= slow, (f.key, gpus)
    assert len({f.key for f in fleets().values() if f.key != "llama3"}) >= 3
    for generation in ("ampere", "hopper", "blackwell"):
        spread = scales(generation)
        assert spread["lowest"] <= spread["expected"] <= spread["highest"]
    assert min(scale(f) for f in fleets().values()) == scales(None)["lowest"]
    assert set(ENDS) == {"lowest", "expected", "highest"}


def test_llama3_ettr_range_holds_the_published_figure() -> None:
    """Llama 3's published ETTR (above 90 %) lies within the printed range."""
    from cluster_iac.plan.goodput import goodputs
    from cluster_iac.render import build

    plan = build(ROOT / "tests" / "data" / "goodput" / "llama3-16k.yaml", emit=False).plan
    ettr = {end: goodputs(plan, end)[0].useful for end in ENDS}
    assert ettr["highest"] < fleets()["llama3"].ettr_at_least < ettr["lowest"]
    assert ettr["expected"] > 0.90


def test_the_busbw_policy_job_and_the_unheld_sizes_are_found_by_their_labels(
        tmp_path: Path) -> None:
    """policy.min_allreduce_busbw_job in GPUs judges that size (rounded up to whole nodes),
    whatever other sizes allreduce_job_sizes asks; a size no partition holds is its own row of
    the busbw table, and as the policy's job falls back to the whole partition."""
    spec = _spec(tmp_path, "allreduce_job_sizes: [64]",
                 "allreduce_job_sizes: [64, 4100, 100]\n  min_allreduce_busbw_job: 100")
    spec.write_text(spec.read_text().replace("min_allreduce_busbw_gbs: 300 ",
                                             "min_allreduce_busbw_gbs: 3000 "))
    result = _cli("validate", spec)
    assert re.search(r"error\[FABRIC-BUSBW\] partition batch: predicted all_reduce busbw of "
                     r"104 GPUs \(100 asked, rounded up to whole nodes\) is", result.output)
    spec.write_text(spec.read_text().replace("min_allreduce_busbw_job: 100",
                                             "min_allreduce_busbw_job: 4100"))
    result = _cli("validate", spec)
    assert "busbw of the whole partition (1016 GPUs) is" in result.output
    spec.write_text(spec.read_text().replace("min_allreduce_busbw_gbs: 3000 ",
                                             "min_allreduce_busbw_gbs: 300 "))
    result = _cli("report", spec)
    assert result.exit_code == 0, result.output
    busbw = result.output[result.output.index("Predicted `busbw`"):
                          result.output.index("## Goodput")]
    unheld = re.findall(r"^\| ([^|]+) \|.*the partition holds fewer GPUs \(GOODPUT-JOB-SIZE\)",
                        busbw, re.M)
    assert unheld == ["4,100 GPUs (more than the partition's 1,016)"]
    assert "| 104 GPUs (100 asked, rounded up to whole nodes) | 13 | 104 |" in busbw
