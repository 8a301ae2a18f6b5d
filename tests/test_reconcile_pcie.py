"""`cluster-iac reconcile` on `nvidia-smi topo -m`: a real published matrix
(tests/data/reconcile/nvidia-smi-topo-m-nccl-tests-320.txt) against a platform whose PCIe
layout is that node's is exit 0 and no finding; differences planted in copies (a NIC
across the CPUs, a GPU gone, a NIC gone), or the same matrix against another platform's
layout, are found by node with the fix; a matrix that cannot be read is refused at its
line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.reconcile import pcie
from cluster_iac.reconcile.finding import ReadError
from cluster_iac.reconcile.sources import detect
from tests.conftest import ROOT
from tests.reconcile_fixtures import DATA, write

REAL = (DATA / "nvidia-smi-topo-m-nccl-tests-320.txt").read_text()
SPEC = DATA / "topo-m-spec.yaml"


def _run(spec: Path, *files: Path) -> tuple[int, list[str], str]:
    """(exit code, each output line without its 'FILE: ' prefix, stderr)."""
    result = CliRunner().invoke(main, ["reconcile", str(spec), *map(str, files)])
    lines = [re.sub(r"^\S+: (?=error\[)", "", line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, result.stderr


def test_the_real_matrix_reads_as_printed() -> None:
    assert detect(REAL) == "nvidia-smi-topo"
    topo = pcie.read(REAL)
    assert topo.gpus == ["GPU0", "GPU1", "GPU2"] and topo.nics == ["mlx5_0", "mlx5_1"]
    assert topo.cells[("GPU2", "mlx5_0")] == "PHB" and topo.cells[("GPU0", "mlx5_1")] == "NODE"
    assert set(topo.numa.values()) == {"1"}


def test_the_matrix_of_the_planned_layout_is_exit_0(tmp_path: Path) -> None:
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.topo", REAL))
    assert code == 0, out
    assert out == ["the delivered cluster matches the plan (1 nvidia-smi-topo judged)"]


def test_planted_differences_are_found_by_node(tmp_path: Path) -> None:
    # GPU2 moved to the other CPU: both NICs across the interconnect, NUMA node 0
    moved = REAL.replace("GPU2    NODE    NODE     X      PHB     PHB     64-71   1",
                         "GPU2    SYS     SYS      X      SYS     SYS     0-7     0")
    assert moved != REAL
    # GPU1 gone from the bus: its row and column
    lines = REAL.splitlines()
    gone = "\n".join(re.sub(r"^(\S*\s+\S+\s+)\S+\s+", r"\1", line) if i <= 5 else line
                     for i, line in enumerate(lines) if not line.startswith("GPU1"))
    assert "GPU1" not in gone and len(pcie.read(gone).gpus) == 2
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.topo", moved),
                          write(tmp_path, "gpu02.topo", gone))
    assert code == 1, out
    assert any(line.startswith("error[RECONCILE-PCIE-AFFINITY] gpu01 (rack r01 U")
               and "GPU2 (0000:3d:00.0): mlx5_0 (0000:40:00.0) is SYS, planned on one NUMA "
               "node (PHB or NODE)" in line and "its NUMA Affinity is 0, planned 1" in line
               and "fix: move the adapter or GPU" in line for line in out), out
    assert any(line.startswith("error[RECONCILE-PCIE-COUNT] gpu02 (rack r01 U")
               and "shows 2 GPUs where platform topo320's PCIe layout has 3" in line
               for line in out), out
    assert sum(line.startswith("error[") for line in out) == 2, out


def test_a_missing_nic_is_named(tmp_path: Path) -> None:
    text = REAL.replace("  NIC1: mlx5_1", "  NIC1: mlx5_7")
    code, out, err = _run(SPEC, write(tmp_path, "gpu01.topo", text))
    assert code == 1
    assert [line.split(":")[0] for line in out if line.startswith("error[")] == [
        "error[RECONCILE-PCIE-COUNT] gpu01 (rack r01 U02)"], out
    assert "NIC(s) mlx5_1 of platform topo320's PCIe layout are not in the matrix" in out[0]


def test_another_platforms_layout_names_each_difference(tmp_path: Path) -> None:
    """The same real matrix as the DGX H100 node dgx-001 of the SuperPOD example: 3 GPUs of
    8, the layout's NICs mlx5_3.. absent, GPU0's own NIC on the NUMA node, not its switch."""
    spec = ROOT / "examples" / "dgx-h100-superpod-4su.yaml"
    code, out, err = _run(spec, write(tmp_path, "dgx-001.topo", REAL))
    assert code == 1
    errors = [line for line in out if line.startswith("error[")]
    assert errors[0].startswith("error[RECONCILE-PCIE-COUNT] dgx-001 (rack ")
    assert "shows 3 GPUs where platform dgx-h100's PCIe layout has 8" in errors[0]
    assert "NIC(s) mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11" in errors[1]
    gpu0 = next(line for line in errors if "GPU0 (0000:1b:00.0)" in line)
    assert ("mlx5_0 (0000:18:00.0) is NODE, planned behind one PCIe switch (PIX or PXB)"
            in gpu0 and "its NUMA Affinity is 1, planned 0" in gpu0), gpu0


def test_a_node_type_without_a_layout_is_said(tmp_path: Path) -> None:
    code, out, err = _run(SPEC, write(tmp_path, "head1.topo", REAL))
    assert code == 1
    assert out[0].startswith("error[RECONCILE-PCIE-LAYOUT] head1 (rack r01 U")


def test_the_older_form_reads() -> None:
    """Drivers before the NIC legend head the NIC columns with the RDMA names and print
    only CPU Affinity (this copy of the real matrix renamed so)."""
    head, _, _ = REAL.partition("\nLegend:")
    old = (head.replace("NIC0    NIC1", "mlx5_0  mlx5_1").replace("NIC0 ", "mlx5_0").replace(
        "NIC1 ", "mlx5_1").replace("    NUMA Affinity   GPU NUMA ID", ""))
    old = re.sub(r"(64-71)\s+1\s+N/A", r"\1", old)
    topo = pcie.read(old)
    assert topo.nics == ["mlx5_0", "mlx5_1"] and topo.numa == {"GPU0": "", "GPU1": "",
                                                                "GPU2": ""}
    assert topo.cells[("GPU2", "mlx5_1")] == "PHB"


@pytest.mark.parametrize(("text", "line", "reason"), [
    (REAL.replace("GPU2    NODE    NODE     X      PHB", "GPU2    NODE    NODE     X      FOO"),
     4, "row GPU2 is not 5 link types"),
    (REAL.replace("NIC1    NODE    NODE    PHB     PIX      X", "NIC1    NODE"), 6,
     "row NIC1 is not 5 link types"),
    (REAL.replace("GPU1    NV4 ", "rm -rf / "), 3, "not a row of the matrix"),
    (REAL.replace("PHB     PIX      X\n", "PHB     PIX      X      0-7\n"), 6,
     "row NIC1 has values past the matrix"),
    (REAL.partition("\nNIC Legend:")[0], 1, "NIC0, NIC1 not named"),
    ("$ nvidia-smi topo -m\n" + REAL, 1, "not a line of `nvidia-smi topo -m`"),
    (REAL.replace("64-71   1               N/A\nGPU2", "64-71   1   N/A  7  8\nGPU2"), 3,
     "values after the matrix"),
    ("\n".join(line for line in REAL.splitlines() if not line.startswith("GPU2")), 1,
     "no row for GPU2"),
])
def test_unreadable_matrices_are_refused_at_their_line(text: str, line: int, reason: str,
                                                       tmp_path: Path) -> None:
    with pytest.raises(ReadError) as info:
        pcie.read(text)
    assert info.value.line == line and reason in info.value.reason, info.value
    path = write(tmp_path, "gpu01.topo", text)
    code, out, err = _run(SPEC, path, "--as", f"nvidia-smi-topo={path}")
    assert code == 1 and f"{path}:{line}: error[RECONCILE-READ]" in err, err


def test_every_damaged_copy_reads_or_is_refused_at_a_line() -> None:
    """Each line of the real matrix cut short, emptied, doubled or given a stray word:
    read, or a ReadError with a line of the file, never another exception."""
    lines = REAL.splitlines()
    for i, line in enumerate(lines):
        for damaged in (line[: len(line) // 2], "", line + "\n" + line, line + " SYS",
                        "GPU9" + line[4:], line.replace("X", "NV#")):
            text = "\n".join([*lines[:i], damaged, *lines[i + 1:]])
            try:
                pcie.read(text)
            except ReadError as exc:
                assert 0 <= exc.line <= text.count("\n") + 1, (i, damaged, exc)
