"""`cluster-iac reconcile` on `lspci -tv`: a real published tree
(tests/data/reconcile/lspci-tv-asus-esc8000a-e12.txt) against a platform whose PCIe layout is
that node's is exit 0 and no finding; differences planted in copies of the tree or of the
layout (a GPU gone from its port, a GPU and NIC planned behind one switch, a NIC behind a
GPU's switch, a NIC on a host bridge of the other NUMA node) are found by node, rack and U
and bus id with the fix; a tree that cannot be read is refused at its line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.reconcile import lspci
from cluster_iac.reconcile.finding import ReadError
from cluster_iac.reconcile.sources import detect
from tests.reconcile_fixtures import DATA, write

REAL = (DATA / "lspci-tv-asus-esc8000a-e12.txt").read_text()
SPEC_TEXT = (DATA / "lspci-spec.yaml").read_text()
SPEC = DATA / "lspci-spec.yaml"
GPU2 = (" |           +-01.1-[c1]--+-00.0  NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]\n"
        " |           |            \\-00.1  NVIDIA Corporation AD102 High Definition Audio "
        "Controller\n")
NIC1 = (" |           +-01.1-[81]--+-00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        " |           |            \\-00.1  Mellanox Technologies MT2910 Family [ConnectX-7]\n")
NIC0 = (" |           +-03.1-[21]--+-00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        " |           |            \\-00.1  Mellanox Technologies MT2910 Family [ConnectX-7]\n")


def _run(spec: Path, *args: str | Path) -> tuple[int, list[str], str]:
    """(exit code, each output line without its 'FILE: ' prefix, stderr)."""
    result = CliRunner().invoke(main, ["reconcile", str(spec), *map(str, args)])
    lines = [re.sub(r"^\S+: (?=error\[)", "", line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, result.stderr


def _errors(out: list[str]) -> list[str]:
    """The output's error lines, each without its '; fix: ...' tail."""
    return [line.split("; fix:")[0] for line in out if line.startswith("error[")]


def _spec(tmp_path: Path, old: str, new: str) -> Path:
    """The spec with its layout changed (``old`` replaced by ``new``)."""
    assert old in SPEC_TEXT
    return write(tmp_path, "lspci.yaml", SPEC_TEXT.replace(old, new))


def test_the_real_tree_reads_as_printed() -> None:
    assert detect(REAL) == "lspci"
    tree = lspci.read(REAL)
    gpu = tree["0000:01:00.0"]
    assert gpu.name == "NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]"
    assert gpu.bridges == ("0000:00:01.1",) and gpu.root == "0000:00" and gpu.line == 4
    assert lspci.is_gpu(gpu) and not lspci.is_gpu(tree["0000:01:00.1"])  # its HD audio
    assert sorted(b for b, d in tree.items() if lspci.is_gpu(d)) == [
        "0000:01:00.0", "0000:41:00.0", "0000:c1:00.0", "0000:e1:00.0"]
    assert tree["0000:81:00.1"].name == "Mellanox Technologies MT2910 Family [ConnectX-7]"
    # an NVMe drive five bridges down: root port, two switches' up and down ports
    assert tree["0000:6d:00.0"].bridges == ("0000:60:01.1", "0000:61:00.0", "0000:62:04.0",
                                            "0000:69:00.0", "0000:6a:08.0")
    assert tree["0000:e3:00.4"].root == "0000:e0" and tree["0000:e3:00.4"].line == 145
    assert len(tree) == 198  # every device line of the tree but the host bridges' headers


def test_the_tree_of_the_planned_layout_is_exit_0(tmp_path: Path) -> None:
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.lspci", REAL))
    assert code == 0, out
    assert out == ["the delivered cluster matches the plan (1 lspci judged)"]


def test_a_gpu_gone_from_its_port_is_found_by_node(tmp_path: Path) -> None:
    gone = REAL.replace(GPU2, " |           +-01.1-[c1]--\n")
    assert gone != REAL
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.lspci", REAL),
                          write(tmp_path, "gpu02.lspci", gone))
    assert code == 1
    assert [line for line in out if line.startswith("error[")] == [
        "error[RECONCILE-PCIE-COUNT] gpu02 (rack r01 U03): GPU2 (0000:c1:00.0) of platform "
        "esc8000a's PCIe layout is not on the bus; fix: reseat the device in the slot whose "
        "root port leads to its bus id (its link may not have trained), or correct the layout "
        "to where it enumerates and render again: NCCL's topology file and NCCL_IB_HCA name "
        "it"], out


def test_a_gpu_in_another_slot_is_named_with_its_bus_id(tmp_path: Path) -> None:
    moved = REAL.replace(GPU2, " |           +-01.1-[c1]--\n").replace(
        " |           +-03.2-[c2]--\n",
        " |           +-03.2-[c2]----00.0  NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]\n")
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.lspci", moved))
    assert code == 1
    assert "GPU2 (0000:c1:00.0) of platform esc8000a's PCIe layout is not on the bus; GPUs " \
           "at bus ids the layout does not have: 0000:c2:00.0 (line 124)" in out[0], out


def test_a_gpu_and_nic_planned_behind_one_switch_are_found_apart(tmp_path: Path) -> None:
    nic0 = '                  - {kind: nic, index: 0, busid: "0000:21:00.0", name: mlx5_0}\n'
    gpu1 = '                  - {kind: gpu, index: 1, busid: "0000:41:00.0"}'
    spec = _spec(tmp_path, nic0 + "              - devices:\n" + gpu1, nic0 + gpu1)
    code, out, err = _run(spec, write(tmp_path, "gpu02.lspci", REAL))
    assert code == 1
    assert [line for line in out if line.startswith("error[")] == [
        "error[RECONCILE-PCIE-AFFINITY] gpu02 (rack r01 U03): GPU1 (0000:41:00.0, line 49): "
        "mlx5_0 (0000:21:00.0) is not behind its PCIe switch (GPU under root port "
        "0000:40:01.1, NIC under root port 0000:20:03.1), planned behind one; fix: move the "
        "adapter or GPU to the slot the layout names (its bus id), or correct the layout to "
        "what lspci shows and render again: NCCL's topology file and NCCL_IB_HCA pair GPUs "
        "and NICs from it"], out


def test_a_nic_behind_a_gpus_switch_is_found(tmp_path: Path) -> None:
    """Planted: GPU1 moved behind a PCIe switch with NIC0 (under host bridge 0000:20), the
    layout still putting them on switches of their own."""
    tree = REAL.replace(NIC0, (
        " |           +-03.1-[21-24]----00.0-[22-24]--+-00.0-[23]----00.0  Mellanox "
        "Technologies MT2910 Family [ConnectX-7]\n"
        " |           |                               \\-04.0-[24]----00.0  NVIDIA "
        "Corporation AD102GL [RTX 6000 Ada Generation]\n")).replace(
        " |           +-01.1-[41]--+-00.0  NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]\n"
        " |           |            \\-00.1  NVIDIA Corporation AD102 High Definition Audio "
        "Controller\n", " |           +-01.1-[41]--\n")
    assert "[21-24]" in tree and "[41]--\n" in tree
    spec = _spec(tmp_path, '"0000:21:00.0"', '"0000:23:00.0"')
    spec.write_text(spec.read_text().replace('"0000:41:00.0"', '"0000:24:00.0"'))
    code, out, err = _run(spec, write(tmp_path, "gpu01.lspci", tree))
    assert code == 1
    assert _errors(out) == [
        "error[RECONCILE-PCIE-AFFINITY] gpu01 (rack r01 U02): GPU1 (0000:24:00.0, line 40): "
        "mlx5_0 (0000:23:00.0) shares its PCIe switch 0000:21:00.0, planned on another "
        "switch"], out


def test_a_nic_on_the_host_bridge_of_a_gpu_of_the_other_numa_node(tmp_path: Path) -> None:
    tree = REAL.replace(NIC1, " |           +-01.1-[81]--\n").replace(
        " |           +-03.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-04.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-05.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-07.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           \\-07.1-[42]",
        " |           +-03.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-03.1-[44]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        " |           +-04.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-05.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           +-07.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n"
        " |           \\-07.1-[42]", 1)
    assert "[44]" in tree
    spec = _spec(tmp_path, '"0000:81:00.0"', '"0000:44:00.0"')
    code, out, err = _run(spec, write(tmp_path, "gpu01.lspci", tree))
    assert code == 1
    assert _errors(out) == [
        "error[RECONCILE-PCIE-AFFINITY] gpu01 (rack r01 U02): GPU1 (0000:41:00.0, line 49): "
        "mlx5_2 (0000:44:00.0) is on its host bridge 0000:40, planned on NUMA node 1 where "
        "the GPU is on 0"], out


def test_a_node_type_without_a_layout_is_said(tmp_path: Path) -> None:
    code, out, err = _run(SPEC, write(tmp_path, "head1.lspci", REAL))
    assert code == 1
    assert out[0].startswith("error[RECONCILE-PCIE-LAYOUT] head1 (rack r01 U")


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("$ lspci -tv\n" + REAL, 1, "not a line of `lspci -tv`"),
    (re.sub(r"(\.[0-7])  .*$", r"\1", REAL, flags=re.MULTILINE), 1, "no device is named"),
    (REAL.replace(" |           +-00.3  Advanced Micro Devices, Inc. [AMD] Device 14a6\n",
                  " |           +-00.3  Advanced Micro Devices, Inc. [AMD] Device 14a6\n"
                  "rm -rf /\n", 1), 3, "not a line of `lspci -tv`"),
    (REAL.replace(" |           +-01.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n",
                  " |        +-01.0  Advanced Micro Devices, Inc. [AMD] Device 149f\n", 1), 3,
     "device 01.0 under no bus"),
    ("", 0, "no device"),
])
def test_unreadable_trees_are_refused_at_their_line(text: str, line: int, reason: str,
                                                    tmp_path: Path) -> None:
    with pytest.raises(ReadError) as info:
        lspci.read(text)
    assert info.value.line == line and reason in info.value.reason, info.value
    path = write(tmp_path, "gpu01.lspci", text)
    code, out, err = _run(SPEC, "--as", f"lspci={path}")
    at = f":{line}" if line else ""
    assert code == 1 and f"{path}{at}: error[RECONCILE-READ]" in err, err


def test_every_damaged_copy_reads_or_is_refused_at_a_line() -> None:
    """Each line of the real tree cut short, emptied, doubled or given a stray word: read,
    or a ReadError with a line of the file, never another exception."""
    lines = REAL.splitlines()
    for i, line in enumerate(lines):
        for damaged in (line[: len(line) // 2], "", line + "\n" + line, line + " ]-[",
                        "\\-" + line, line.replace("-+-", "---"), line.replace("[", "")):
            text = "\n".join([*lines[:i], damaged, *lines[i + 1:]])
            try:
                lspci.read(text)
            except ReadError as exc:
                assert 0 <= exc.line <= text.count("\n") + 1, (i, damaged, exc)
