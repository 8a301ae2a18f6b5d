"""`cluster-iac reconcile`: real discovery outputs against the plan. A clean discovery is
exit 0 and no finding; each planted difference is found by code and place; a file that
cannot be read is a located error, and every other file is still judged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.emit.subnet_manager import render as render_sm
from cluster_iac.formats.ibnetdiscover import topology_text
from cluster_iac.plan.subnet import topology
from cluster_iac.reconcile import slurmd
from cluster_iac.reconcile.finding import ReadError
from cluster_iac.reconcile.run import reconcile
from tests.conftest import ROOT, example_build
from tests.reconcile_fixtures import (
    DATA,
    RELEASES,
    nvidia_smi_text,
    redfish_power,
    redfish_system,
    slurmd_text,
    write,
)

SEED = "seed-64gpu-h100"
NVL = "gb200-nvl72"


def _run(example: str, *files: Path, extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["reconcile", str(ROOT / "examples" / f"{example}.yaml"),
                                       *map(str, files), *extra])
    return result.exit_code, result.stdout, result.stderr


def _clean_seed(folder: Path) -> list[Path]:
    plan = example_build(SEED).plan
    nt = plan.node_types["h100-hdr"]
    return [
        write(folder, "compute.ibnetdiscover",
              render_sm(plan)["opensm/compute/topology.ibnetdiscover"]),
        write(folder, "compute01.slurmd", slurmd_text(plan, "compute01")),
        write(folder, "compute02.slurmd", slurmd_text(plan, "compute02", "26.05")),
        write(folder, "compute01.xml", nvidia_smi_text("NVIDIA H100 80GB HBM3", 8)),
        write(folder, "compute01.system.json", redfish_system(nt.sockets, nt.memory_gib)),
        write(folder, "compute01.power.json", redfish_power(nt.psu_count, nt.psu_rating_w)),
    ]


def test_a_clean_discovery_is_exit_0_and_no_finding(tmp_path: Path) -> None:
    code, out, err = _run(SEED, *_clean_seed(tmp_path))
    assert code == 0, out + err
    assert out.strip() == ("the delivered cluster matches the plan (1 ibnetdiscover, "
                           "2 slurmd, 1 nvidia-smi, 2 redfish judged)")


def test_planted_differences_are_found_by_code_and_place(tmp_path: Path) -> None:
    plan = example_build(SEED).plan
    nt = plan.node_types["h100-hdr"]
    files = _clean_seed(tmp_path)
    text = files[0].read_text()
    # two host cables swapped at their adapters: the descriptions trade places
    text = text.replace('"compute01 ib0"', '"SWAP"').replace('"compute02 ib0"',
                                                            '"compute01 ib0"')
    text = text.replace('"SWAP"', '"compute02 ib0"')
    files[0].write_text(text)
    files[1].write_text(slurmd_text(plan, "compute01", RealMemory=1024 * 1024))
    files[2].write_text(slurmd_text(plan, "compute02", "26.05", ThreadsPerCore=2,
                                    CPUs=nt.cpus * 2))
    files[3].write_text(nvidia_smi_text("NVIDIA H100 80GB HBM3", 7))
    files[5].write_text(redfish_power(4, nt.psu_rating_w))
    code, out, err = _run(SEED, *files)
    assert code == 1
    codes = re.findall(r"error\[([A-Z0-9-]+)\] ([^\s:]+)", out)
    assert sorted(codes) == sorted([
        ("RECONCILE-IB-MISWIRED", next(c.cable_id for c in plan.cables.rows()
                                       if (c.a_device, c.a_port) == ("compute01", "ib0"))),
        ("RECONCILE-IB-MISWIRED", next(c.cable_id for c in plan.cables.rows()
                                       if (c.a_device, c.a_port) == ("compute02", "ib0"))),
        ("RECONCILE-SLURM-MEMORY", "compute01"),
        ("RECONCILE-SLURM-CPUS", "compute02"),
        ("RECONCILE-GPU-COUNT", "compute01"),
        ("RECONCILE-PSU-COUNT", "compute01"),
    ]), out
    rack = next(d for d in plan.devices if d.name == "compute01")
    assert f"compute01 (rack {rack.rack} {rack.position})" in out
    assert "this node has 4 PSUs where the power plan needs 6" in out
    assert "POWER-REDUNDANCY on that rack" in out
    assert "differs from slurm.conf's RealMemory" in out
    assert "move the cable to compute01 ib0 <->" in out


def test_an_unreadable_file_is_located_and_the_others_still_judged(tmp_path: Path) -> None:
    plan = example_build(SEED).plan
    files = _clean_seed(tmp_path)
    files[3].write_text(files[3].read_text().replace("</product_name>", "</product>", 1))
    files[1].write_text(slurmd_text(plan, "compute01", RealMemory=2048))
    code, out, err = _run(SEED, *files)
    assert code == 1
    assert re.search(rf"{re.escape(str(files[3]))}:9: error\[RECONCILE-READ\] not XML", err), err
    assert "Traceback" not in out + err
    assert "RECONCILE-SLURM-MEMORY" in out


def test_a_file_of_no_known_format_names_the_file(tmp_path: Path) -> None:
    odd = write(tmp_path, "notes.txt", "hello\n")
    code, out, err = _run(SEED, odd)
    assert code == 1 and f"{odd}: error[RECONCILE-READ] not a format reconcile reads" in err


def test_as_names_the_kind(tmp_path: Path) -> None:
    plan = example_build(SEED).plan
    path = write(tmp_path, "compute01.out", slurmd_text(plan, "compute01", CPUs=8))
    code, out, err = _run(SEED, extra=("--as", f"slurmd={path}"))
    assert code == 1 and "RECONCILE-SLURM-CPUS" in out
    code, out, err = _run(SEED, extra=("--as", f"ipmitool={path}"))  # no source reads it
    assert code == 2
    code, out, err = _run(SEED, extra=("--as", f"lspci={path}"))  # not an lspci tree
    assert code == 1 and f"{path}:1: error[RECONCILE-READ] not a line of `lspci -tv`" in err, err
    code, out, err = _run(SEED, extra=("--as", f"lldp={path}"))  # not lldpcli's JSON
    assert code == 1 and f"{path}:1: error[RECONCILE-READ] not JSON" in err, err


@pytest.mark.parametrize("release", RELEASES)
def test_real_slurmd_outputs_are_read(release: str) -> None:
    record = slurmd.read((DATA / f"slurmd-C-{release}.txt").read_text())
    assert record["NodeName"] == "vm" and record["CPUs"].isdigit()
    with pytest.raises(ReadError) as info:
        slurmd.read("NodeName=vm CPUs=2\nslurmd: error: something\n")
    assert info.value.line == 2


def test_real_redfish_mockups_are_judged(tmp_path: Path) -> None:
    """DMTF's payloads as published: 2 sockets, 96 GiB and one 800 W supply against a head
    node of 2 sockets, 512 GiB and 2 x 1200 W."""
    plan = example_build(SEED).plan
    system = write(tmp_path, "slurm-head1.system.json",
                   (DATA / "redfish-system-public-rackmount1.json").read_text())
    power = write(tmp_path, "slurm-head1.power.json",
                  (DATA / "redfish-power-public-rackmount1.json").read_text())
    outcome = reconcile(plan, [(None, system), (None, power)])
    assert outcome.errors == []
    assert sorted(f.code for f in outcome.findings) == [
        "RECONCILE-PSU-COUNT", "RECONCILE-PSU-RATING", "RECONCILE-SERVER-MEMORY"]


def test_a_tray_in_the_wrong_nvlink_domain(tmp_path: Path) -> None:
    plan = example_build(NVL).plan
    domains = [d for d in plan.nvlink_domains if d.kind == "rack"][:2]
    uuid = {d.name: f"{i + 1:08x}-1111-2222-3333-444455556666" for i, d in enumerate(domains)}
    files = []
    for d in domains:
        for node in d.nodes:
            files.append(write(tmp_path, f"{node}.xml",
                               nvidia_smi_text("NVIDIA GB200", 4, uuid[d.name], "1")))
    clean = reconcile(plan, [(None, f) for f in files])
    assert clean.findings == [] and clean.errors == []
    stray = domains[0].nodes[3]
    write(tmp_path, f"{stray}.xml", nvidia_smi_text("NVIDIA GB200", 4, uuid[domains[1].name], "1"))
    found = reconcile(plan, [(None, f) for f in files]).findings
    assert [(f.code, f.place.split()[0]) for f in found] == [("RECONCILE-NVLINK-DOMAIN", stray)]
    assert f"this tray belongs to domain {domains[1].name}" in found[0].message


def test_ibnetdiscover_through_reconcile_reports_a_dead_switch_once(tmp_path: Path) -> None:
    plan = example_build(SEED).plan
    top = topology(plan, "compute")
    leaf = next(i for i, n in top.nodes.items() if n.kind == "Switch")
    for end in [e for e in top.links if e.node_id == leaf]:
        del top.links[top.links[end]], top.links[end]
    del top.nodes[leaf]
    path = write(tmp_path, "compute.ibnetdiscover", topology_text(top))
    code, out, err = _run(SEED, path)
    assert code == 1
    assert len(out.splitlines()) == 1 and "RECONCILE-IB-SWITCH-UNSEEN" in out, out
