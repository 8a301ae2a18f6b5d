"""The goodput and cost model: Llama 3's published figures from a spec of its cluster, the
formulas against their limits, blast radius and spares, prices, and the located errors."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from cluster_iac.plan.checkpoint import storage_figures
from cluster_iac.plan.cost import bill_items, costs, per_useful_gpu_h
from cluster_iac.plan.failures import (
    JobFailures,
    class_rates,
    partition_jobs,
    plain_partition_jobs,
)
from cluster_iac.plan.fleets import ENDS
from cluster_iac.plan.goodput import goodputs, useful_fraction
from cluster_iac.plan.power import rack_loads_w
from cluster_iac.render import PipelineError, build
from tests.conftest import EXAMPLE_IDS, example_build

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "tests" / "data" / "goodput" / "llama3-16k.yaml"
SUPERPOD = ROOT / "examples" / "dgx-h100-superpod-4su.yaml"

# Meta, "The Llama 3 Herd of Models" (2024), section 3.3.4: 419 unexpected interruptions in a
# 54-day snapshot on 16,384 GPUs; "higher than 90 % effective training time".
PUBLISHED_PER_DAY = 419 / 54
PUBLISHED_MIN_ETTR = 0.90


@pytest.fixture(scope="module")
def llama():
    return build(LLAMA, emit=False).plan


def _variant(tmp_path: Path, base: Path, old: str, new: str) -> Path:
    text = base.read_text()
    assert old in text
    out = tmp_path / base.name
    out.write_text(text.replace(old, new, 1))
    return out


def test_llama3_interruptions_within_15_percent_of_published(llama) -> None:
    (job,) = partition_jobs(llama)
    # the plan counts the job's units: 2,048 hosts of 8 GPUs, one backend NIC per GPU
    assert (job.nodes, job.gpus, job.spares) == (2048, 16384, 16)
    units = {t.rate.key: t.units for t in job.terms}
    assert units["link"] == units["nic"] == 16384 and units["host"] == 2048
    assert units["software"] == 1  # once per job
    assert abs(job.per_day - PUBLISHED_PER_DAY) / PUBLISHED_PER_DAY < 0.15
    low, high = (partition_jobs(llama, end)[0].per_day for end in ("lowest", "highest"))
    assert low <= PUBLISHED_PER_DAY <= high
    assert job.mtbf_h == pytest.approx(24 / job.per_day)


def test_llama3_effective_training_time_in_published_range(llama) -> None:
    (g,) = goodputs(llama)
    assert g.write_s == pytest.approx(6480 / 2000)  # the spec's measured Lustre write
    assert g.useful is not None and PUBLISHED_MIN_ETTR < g.useful < 1
    # the first-order terms account for what is lost, to second order
    assert 1 - sum(g.losses.values()) == pytest.approx(g.useful, abs=0.01)


def test_catalog_classes_hold_the_whole_llama3_table() -> None:
    """Table 5's rows, grouped into classes, are the 419 interruptions of 54 days."""
    from cluster_iac.catalog.snapshot import builtin_file

    data = builtin_file("failure_rates.yaml")["classes"]
    assert sum(entry["events"] or 0 for entry in data.values()) == 419
    assert {entry.get("hours") for entry in data.values() if entry["events"]} == {54 * 24}
    assert all(entry["source"] for entry in data.values())


def test_spec_rate_overrides_builtin(tmp_path: Path) -> None:
    spec = _variant(tmp_path, SUPERPOD, "\npolicy:", "\nreliability:\n  failure_rates: "
                    "{gpu: 0, switch: 100}\n\npolicy:")
    plan = build(spec, emit=False).plan
    rates = {r.key: r for r in class_rates(plan)}
    assert rates["gpu"].per_million_h == 0 and rates["gpu"].overridden
    (job,) = partition_jobs(plan)
    terms = {t.rate.key: t for t in job.terms}
    assert terms["gpu"].per_day == 0
    switch = terms["switch"]
    assert switch.per_day == pytest.approx(100e-6 * switch.units * 24)
    # a rail-optimized leaf carries one rail of each node of its 32-node scalable unit
    assert switch.blast_nodes == 32 and not switch.covered


def test_nvl72_failure_takes_out_its_rack_and_default_spares_cover_it() -> None:
    plan = example_build("gb200-nvl72").plan  # the session's build (the plan is immutable)
    (job,) = partition_jobs(plan)
    trays = max(len(d.nodes) for d in plan.nvlink_domains)
    assert {t.blast_nodes for t in job.terms if t.rate.key in ("gpu", "host")} == {trays}
    assert job.spares == trays and not job.spares_given
    assert job.nodes == len(plan.compute_nodes) - trays


def test_goodput_limits() -> None:
    """Daly's complete model: no overhead and no failures is all useful; it falls with each term."""
    assert useful_fraction(600, 0, 0, 1e12) == pytest.approx(1, abs=1e-6)
    base = useful_fraction(600, 10, 300, 36_000)
    assert useful_fraction(600, 20, 300, 36_000) < base
    assert useful_fraction(600, 10, 600, 36_000) < base
    assert useful_fraction(600, 10, 300, 18_000) < base
    delta, mtbf = 10, 36_000
    daly = min(range(60, 6000), key=lambda t: -useful_fraction(t, delta, 300, mtbf))
    assert daly == pytest.approx(math.sqrt(2 * delta * mtbf) - delta, rel=0.05)


def test_spares_shrink_the_job_and_uncovered_failures_wait_for_repair(tmp_path: Path) -> None:
    spec = _variant(tmp_path, SUPERPOD, "\npolicy:", "\nreliability:\n  hot_spare_nodes: "
                    "{batch: 0}\n  failure_rates: {switch: 100}\n  repair_h: 4\n\npolicy:")
    plan = build(spec, emit=False).plan
    (g,) = goodputs(plan)
    assert g.job.nodes == 127 and g.job.spares == 0
    uncovered = g.job.uncovered_per_day / g.job.per_day
    software = {t.rate.key: t.per_day for t in g.job.terms}["software"]
    # no spare replaces even one node; a software failure takes out none
    assert g.job.uncovered_per_day == pytest.approx(g.job.per_day - software)
    assert g.repair_s == pytest.approx(4 * 3600 * uncovered)
    assert g.losses["repair"] == pytest.approx(g.repair_s / g.mtbf_s)


def test_one_mttf_per_scope_and_gpu_mtbf_is_a_measured_rate(tmp_path: Path) -> None:
    """Storage's Young/Daly interval uses the largest job's MTTF, the figure Goodput prints for
    that job; workload.gpu_mtbf_hours is the spec's measured per-GPU rate, in both."""
    plan = example_build(SUPERPOD.stem).plan
    fig = storage_figures(plan)
    (g,) = goodputs(plan)
    assert fig.job_mtbf_h == g.job.mtbf_h and fig.job_gpus == g.job.gpus == 1008
    spec = _variant(tmp_path, SUPERPOD, "  checkpoint_interval_min: 30",
                    "  checkpoint_interval_min: 30\n  gpu_mtbf_hours: 10000")
    plan = build(spec, emit=False).plan
    (g,) = goodputs(plan)
    assert storage_figures(plan).job_mtbf_h == g.job.mtbf_h == pytest.approx(10000 / 1008)
    assert {r.key for r in class_rates(plan) if r.overridden} == set(
        r.key for r in class_rates(plan))


def test_cost_terms(llama) -> None:
    c = costs(llama)
    assert c is not None and not c.complete  # switches and cables have no price
    nodes = sum(1 for n in llama.nodes if llama.node_types[n.node_type].platform
                == "hgx-h100-8gpu")
    assert c.capital == 350_000 * nodes
    assert c.capital_per_h == pytest.approx(c.capital / (5 * 8760))
    assert c.power_per_h == pytest.approx(c.facility_kw * 0.10)
    assert c.facility_kw == pytest.approx(sum(rack_loads_w(llama).values()) / 1000 * 1.1)
    assert c.per_gpu_h == pytest.approx(c.per_h / 16512)
    (g,) = goodputs(llama)
    assert per_useful_gpu_h(c, g) == pytest.approx(c.per_gpu_h * 16512 / (16384 * g.useful))
    # switches and cables are unpriced: every cost is a lower bound, printed "at least"
    from cluster_iac.emit.report_goodput import cost

    table = cost(llama, [g])
    assert table is not None and table["useful"][0]["cost"].startswith("at least ")
    assert table["per_gpu_h"].startswith("at least ")
    assert bill_items(llama)["cable.compute"][1] > 16384


def test_no_prices_no_cost() -> None:
    assert costs(example_build(SUPERPOD.stem).plan) is None


@pytest.mark.parametrize(("addition", "code", "path"), [
    ("reliability:\n  hot_spare_nodes: {btach: 1}\n", "GOODPUT-UNKNOWN-PARTITION",
     ("reliability", "hot_spare_nodes", "btach")),
    ("cost:\n  prices: {qm9701: 1000}\n", "COST-UNKNOWN-ITEM", ("cost", "prices", "qm9701")),
])
def test_unknown_names_are_located_with_a_suggestion(tmp_path: Path, addition: str, code: str,
                                                     path: tuple[str, ...]) -> None:
    spec = _variant(tmp_path, SUPERPOD, "\npolicy:", f"\n{addition}\npolicy:")
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    (found,) = [d for d in info.value.diagnostics if d.code == code]
    assert found.path == path and found.hint and "did you mean" in found.hint
    source = info.value.source
    assert source is not None
    assert path[-1] in (source.source_line(source.locate(path).line) or "")


def test_goodput_undefined_without_checkpoint_size(tmp_path: Path) -> None:
    spec = ROOT / "examples" / "gb200-nvl72.yaml"
    text = spec.read_text()
    out = tmp_path / spec.name
    policy = "\npolicy:\n  min_goodput: 0.9\n" if "\npolicy:" not in text else None
    assert policy is not None
    out.write_text(text + policy)
    findings = build(out, emit=False).findings
    assert [d.code for d in findings if d.code.startswith("GOODPUT")] == ["GOODPUT-UNDEFINED"]


def test_report_shows_every_term(llama) -> None:
    from cluster_iac.emit.report import render

    text = render(llama)["report.md"]
    section = text[text.index("## Goodput"):text.index("## Findings")]
    for needle in ("196 / (16,384 x 1296 h)", "Llama 3 Herd", "Daly's complete model",
                   "Lost to checkpoint writes", "Per useful GPU-hour", "at least",
                   "effective training time ratio", "Revisiting Reliability",
                   "judged at the highest end"):
        assert needle in section
    assert re.search(r"\| Interruptions per day, expected \(lowest - highest published rates\) "
                     r"\| 8\.\d{3} \(5\.\d{3} - 29\.\d{3}\) \|", section)


def test_spares_that_leave_no_job_are_an_error(tmp_path: Path) -> None:
    spec = _variant(tmp_path, SUPERPOD, "\npolicy:", "\nreliability:\n  hot_spare_nodes: "
                    "{batch: 127}\n\npolicy:")
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    (found,) = [d for d in info.value.diagnostics if d.code == "GOODPUT-SPARES"]
    assert found.path == ("reliability", "hot_spare_nodes", "batch")
    assert found.details["limit"] == 126


def test_cable_prices_count_each_network(tmp_path: Path) -> None:
    spec = _variant(tmp_path, SUPERPOD, "\npolicy:", "\ncost:\n  prices: {cable.compute: 1000, "
                    "qm9700: 25000}\n  amortization_years: 4\n\npolicy:")
    plan = build(spec, emit=False).plan
    c = costs(plan)
    assert c is not None and not c.complete
    cables = sum(1 for network in plan.links.network if network == "compute")
    switches = sum(1 for s in plan.switches if s.model == "qm9700")
    assert c.capital == 1000 * cables + 25000 * switches
    assert c.power_per_h is None and c.per_h == pytest.approx(c.capital / (4 * 8760))


def test_interruptions_grow_with_the_job_over_a_per_job_term() -> None:
    """The hardware rates are per unit and the SuperPOD's nodes are alike: a job's
    interruptions are the per-job term plus one node's hardware times its nodes, so small jobs
    fail more often per node (the published curves' shape)."""
    from cluster_iac.plan.job_sizes import sized_jobs

    plan = example_build(SUPERPOD.stem).plan
    jobs = {s.job: s.failures["expected"] for s in sized_jobs(plan)["batch"]}
    fixed = {t.rate.key: t.per_day for t in jobs["node"].terms}["software"]
    one = jobs["node"].per_day - fixed
    assert one > 0 and fixed > one
    for job in jobs.values():
        assert job.per_day == pytest.approx(fixed + one * job.nodes)
        assert job.per_day / job.nodes >= jobs["partition"].per_day / jobs["partition"].nodes
    assert jobs["partition"].nodes == 127


def test_storage_too_slow_for_the_failure_rate_is_rejected_at_its_line(tmp_path: Path) -> None:
    """Llama 3's job on a file system writing 20 GB/s: a 324 s checkpoint, and at ~7.8
    failures a day even Daly's interval loses a quarter of the time to writes and rework."""
    spec = _variant(tmp_path, LLAMA, "write_gbs: 2000", "write_gbs: 20")
    spec.write_text(spec.read_text().replace(
        "\npolicy:\n", "\npolicy:\n  min_goodput: 0.85\n  goodput_failure_rates: expected\n"))
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    (found,) = [d for d in info.value.diagnostics if d.code == "GOODPUT-MIN"]
    assert found.path == ("storage", "lustre", "write_gbs")
    assert found.details["measured"] < 0.85
    source = info.value.source
    assert source is not None
    assert "write_gbs: 20" in (source.source_line(source.locate(found.path).line) or "")
    # the published design passes the same policy at the expected rates, not at the highest
    spec.write_text(spec.read_text().replace("write_gbs: 20", "write_gbs: 2000"))
    assert not [d for d in build(spec, emit=False).findings if d.code == "GOODPUT-MIN"]
    spec.write_text(spec.read_text().replace("  goodput_failure_rates: expected\n", ""))
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    (found,) = [d for d in info.value.diagnostics if d.code == "GOODPUT-MIN"]
    assert "at the highest published failure rates" in found.message


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_partition_jobs_found_once_are_found_anew(name: str) -> None:
    """partition_jobs keeps its answers per plan and end; plain_partition_jobs, its oracle,
    finds them each time: the same jobs, term by term, at every end; a new plan, new ones."""
    plan = example_build(name).plan
    for end in ENDS:
        kept, fresh = partition_jobs(plan, end), plain_partition_jobs(plan, end)
        assert partition_jobs(plan, end) == kept  # the kept answer, asked again
        assert [_fields(job) for job in kept] == [_fields(job) for job in fresh]
    other = replace(plan, partitions=plan.partitions[:1])
    assert len(partition_jobs(other)) == len(plain_partition_jobs(other))


def _fields(job: JobFailures) -> tuple[object, ...]:
    return (job.partition, job.nodes, job.gpus, job.spares, job.spares_given, job.end,
            job.partition_gpus, tuple((t.rate.key, t.rate.ends, t.units, t.per_day, t.blast_nodes,
                                       t.covered) for t in job.terms))
