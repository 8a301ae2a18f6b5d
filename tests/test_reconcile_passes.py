"""reconcile's plan as far as its sources read it (reconcile/sources.py NEEDS, compiled
through compile.passes_through): every source's findings, unread files, counts and facts on
it are those on the whole plan, on discovery files of every kind with differences planted
(the reconcile tests' fixtures, and a 2,000-GPU bench spec's fabric); and the command, with
a render's outcome known (write/recall.py), prints exactly what it prints without, having
compiled only those passes and run no check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import cluster_iac.cli.reconcile as cli_reconcile
from cluster_iac.cli.common import build_or_exit
from cluster_iac.cli.main import main
from cluster_iac.compile import PASSES, passes_through
from cluster_iac.emit.subnet_manager import render as render_sm
from cluster_iac.formats.ibnetdiscover import topology_text
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import topology
from cluster_iac.reconcile.run import Outcome, reconcile
from cluster_iac.reconcile.sources import NEEDS, SOURCES, last_needed
from cluster_iac.render import build, compile_through
from tests.benchmarks import bench_scale
from tests.conftest import ROOT
from tests.lldp_fixtures import edit, sample_spec, saved_tables
from tests.reconcile_fixtures import (
    DATA,
    nvidia_smi_text,
    redfish_power,
    redfish_system,
    slurmd_text,
    write,
)

SEED = ROOT / "examples" / "seed-64gpu-h100.yaml"
NVL = ROOT / "examples" / "gb200-nvl72.yaml"


def _both(spec: Path, files: list[Path]) -> Outcome:
    """reconcile on the plan as its full path builds it and on the narrowed plan: equal
    (findings, unread files, counts, facts, each in order); the outcome."""
    full = reconcile(build(spec, emit=False, complete=False).plan, [(None, f) for f in files])
    narrowed = reconcile(compile_through(spec, last_needed()),
                         [(None, f) for f in files])
    assert narrowed == full
    return full


def _swapped(text: str, one: str, other: str) -> str:
    """Two descriptions of an ibnetdiscover text traded: those cables miswired."""
    return (text.replace(f'"{one}"', '"SWAP"').replace(f'"{other}"', f'"{one}"')
            .replace('"SWAP"', f'"{other}"'))


def test_each_source_names_a_pass_and_the_cut_keeps_their_order() -> None:
    assert NEEDS.keys() == SOURCES.keys()
    assert all(p in PASSES for p in NEEDS.values())
    cut = passes_through(PASSES, last_needed())
    assert cut[-1] is last_needed() and len(cut) < len(PASSES)
    assert cut == PASSES[:len(cut)]  # the pass order kept


def test_the_seed_with_differences_of_four_kinds(tmp_path: Path) -> None:
    plan = build(SEED, emit=False).plan
    nt = plan.node_types["h100-hdr"]
    fabric = _swapped(render_sm(plan)["opensm/compute/topology.ibnetdiscover"],
                      "compute01 ib0", "compute02 ib0")
    files = [write(tmp_path, "compute.ibnetdiscover", fabric),
             write(tmp_path, "compute01.slurmd", slurmd_text(plan, "compute01",
                                                             RealMemory=1024 * 1024)),
             write(tmp_path, "compute02.slurmd", slurmd_text(plan, "compute02", "26.05",
                                                             ThreadsPerCore=2)),
             write(tmp_path, "compute01.xml", nvidia_smi_text("NVIDIA H100 80GB HBM3", 7)),
             write(tmp_path, "compute01.system.json", redfish_system(nt.sockets, 96)),
             write(tmp_path, "compute01.power.json", redfish_power(4, nt.psu_rating_w)),
             write(tmp_path, "r01-pdu-a.snmpwalk",
                   (DATA / "pdu-sentry4-snmpwalk-sample.txt").read_text().replace(
                       "st4OutletActivePower.1.1.3 = INTEGER: ", "st4OutletActivePower.1.1.3 "
                       "= INTEGER: 9")),
             write(tmp_path, "broken.ibnetdiscover", "switchguid=0x1\n[1]\t\"S-1\"[1]\n")]
    outcome = _both(SEED, files)
    assert {f.code.split("-")[1] for f in outcome.findings} >= {"IB", "SLURM", "GPU", "PSU"}
    assert len(outcome.errors) == 1


def test_nvlink_domains(tmp_path: Path) -> None:
    plan = build(NVL, emit=False).plan
    domain = next(d for d in plan.nvlink_domains if d.kind == "rack")
    files = [write(tmp_path, f"{node}.xml", nvidia_smi_text("NVIDIA GB200", 4, "a-b-c-d-e", "1"))
             for node in domain.nodes[:3]]
    files.append(write(tmp_path, f"{domain.nodes[3]}.xml",
                       nvidia_smi_text("NVIDIA GB200", 4, "f-b-c-d-e", "1")))
    assert _both(NVL, files).findings


@pytest.mark.parametrize(("spec", "data"), [("lspci-spec.yaml", "lspci-tv-asus-esc8000a-e12.txt"),
                                            ("topo-m-spec.yaml",
                                             "nvidia-smi-topo-m-nccl-tests-320.txt")])
def test_pcie_layouts(tmp_path: Path, spec: str, data: str) -> None:
    text = (DATA / data).read_text()
    host = build(DATA / spec, emit=False).plan.compute_nodes[0].hostname
    _both(DATA / spec, [write(tmp_path, f"{host}.topo", text),
                        write(tmp_path, "nohost.topo", text)])


def test_lldp_tables_with_cables_gone(tmp_path: Path) -> None:
    spec = sample_spec(tmp_path)
    tables = saved_tables(tmp_path)
    edit(tables / "eth-leaf-su1-r1.lldp.json", keep=lambda name, _: name != "p57")
    edit(tables / "eth-spine-1.lldp.json", keep=lambda name, _: name != "p1")
    outcome = _both(spec, sorted(tables.iterdir()))
    assert outcome.judged["lldp"] > 1 and outcome.findings


def test_a_bench_fabric_with_cables_swapped_and_a_switch_dead(tmp_path: Path) -> None:
    spec = tmp_path / "bench.yaml"
    spec.write_text(bench_scale.spec_yaml(2000))
    plan = build(spec, emit=False).plan
    top = topology(plan, "compute")
    leaf = next(i for i, n in top.nodes.items() if n.kind == "Switch")
    for end in [e for e in top.links if e.node_id == leaf]:
        del top.links[top.links[end]], top.links[end]
    del top.nodes[leaf]
    hosts = [n.description for n in top.nodes.values() if n.kind == "Ca"]
    text = _swapped(topology_text(top), hosts[-1], hosts[-9])
    outcome = _both(spec, [write(tmp_path, "compute.ibnetdiscover", text)])
    assert {f.code for f in outcome.findings} == {"RECONCILE-IB-SWITCH-UNSEEN",
                                                  "RECONCILE-IB-MISWIRED"}


def _cli(spec: Path, files: list[Path]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["reconcile", str(spec), *map(str, files)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_the_command_with_the_outcome_known_prints_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold cache: the full path; after a render of the same spec and lock (the outcome
    known): the same output, from the narrowed plan (build_or_exit would fail the test)."""
    monkeypatch.setenv("CLUSTER_IAC_CACHE", str(tmp_path / "cache"))
    spec = tmp_path / SEED.name
    shutil.copy(SEED, spec)
    shutil.copy(SEED.with_suffix(".lock"), spec.with_suffix(".lock"))
    plan: Plan = build(spec, emit=False).plan
    fabric = _swapped(render_sm(plan)["opensm/compute/topology.ibnetdiscover"],
                      "compute01 ib0", "compute03 ib0")
    files = [write(tmp_path, "compute.ibnetdiscover", fabric),
             write(tmp_path, "compute01.slurmd", slurmd_text(plan, "compute01"))]
    cold = _cli(spec, files)
    assert cold[0] == 1 and "RECONCILE-IB-MISWIRED" in cold[1] and "warning[" in cold[2]
    assert CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "out")]
                              ).exit_code == 0
    monkeypatch.setattr(cli_reconcile, "build_or_exit", None)  # the full path would fail
    assert _cli(spec, files) == cold


def test_a_discovery_that_agrees_is_judged_on_the_plan_through_build_fabric(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the outcome known, a fabric's discovery as planned (and one with a cable
    miswired) prints what the full path prints; the one that agrees is answered on the plan
    compiled through sources.EARLY's pass, never compiled on (compile_on_through would fail it)."""
    monkeypatch.setenv("CLUSTER_IAC_CACHE", str(tmp_path / "cache"))
    spec = tmp_path / SEED.name
    shutil.copy(SEED, spec)
    shutil.copy(SEED.with_suffix(".lock"), spec.with_suffix(".lock"))
    plan: Plan = build(spec, emit=False).plan
    planned = render_sm(plan)["opensm/compute/topology.ibnetdiscover"]
    same = [write(tmp_path, "same.ibnetdiscover", planned)]
    cold = _cli(spec, same)
    assert cold[0] == 0 and "matches the plan (1 ibnetdiscover judged)" in cold[1]
    assert CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "out")]
                              ).exit_code == 0
    monkeypatch.setattr(cli_reconcile, "build_or_exit", None)  # the full path would fail
    kept = cli_reconcile.compile_on_through
    monkeypatch.setattr(cli_reconcile, "compile_on_through", None)  # compiling on would fail
    assert _cli(spec, same) == cold
    monkeypatch.setattr(cli_reconcile, "compile_on_through", kept)
    miswired = [write(tmp_path, "miswired.ibnetdiscover",
                      _swapped(planned, "compute01 ib0", "compute02 ib0"))]
    monkeypatch.setattr(cli_reconcile, "build_or_exit", build_or_exit)
    monkeypatch.delenv("CLUSTER_IAC_CACHE")
    monkeypatch.setenv("CLUSTER_IAC_CACHE", str(tmp_path / "cold"))
    full = _cli(spec, miswired)
    monkeypatch.setenv("CLUSTER_IAC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cli_reconcile, "build_or_exit", None)
    assert full[0] == 1 and "RECONCILE-IB-MISWIRED" in full[1]
    assert _cli(spec, miswired) == full
