"""The acceptance readers on the forms real tools print that they used to refuse or pass:
each made from the real outputs of tests/data/acceptance/ in the form the tool prints it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.acceptance.formats import (
    dcgm_failures,
    fio_bandwidth,
    gpu_burn_faulty,
    ior_mib,
    nccl_busbw,
    perftest_row,
)
from cluster_iac.cli.main import main
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "acceptance"
SIZE = 8589934592


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_dcgm_warn_is_a_failure(tmp_path: Path) -> None:
    text = (DATA / "dcgm-diag.json").read_text()
    text = text.replace('"status" : "Pass"', '"status" : "Warn"', 1)
    assert dcgm_failures(_write(tmp_path, "d.json", text)) == ["GPU 0,1,2,3,4,5,6,7 Denylist: warn"]


def test_gpu_burn_that_did_no_work_fails(tmp_path: Path) -> None:
    real = (DATA / "gpu_burn.txt").read_text()
    assert gpu_burn_faulty(_write(tmp_path, "ok.txt", real)) == []
    idle = real.replace("proc'd: 412160 (51234 Gflop/s)", "proc'd: 0 (0 Gflop/s)")
    assert gpu_burn_faulty(_write(tmp_path, "idle.txt", idle)) == [
        "GPU 0 did no work (0 iterations processed)"]
    no_init = real.replace("Initialized device 0", "Couldn't init a GPU test: device 0")
    assert gpu_burn_faulty(_write(tmp_path, "init.txt", no_init))[0].startswith("line 3: Couldn't")
    silent = "\n".join(line for line in real.splitlines() if "proc'd" not in line)
    assert gpu_burn_faulty(_write(tmp_path, "silent.txt", silent)) == [
        "no work done (no progress line)"]


def test_perftest_with_the_cpu_frequency_warning(tmp_path: Path) -> None:
    real = (DATA / "ib_write_bw.txt").read_text()
    head = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
    warned = real.replace(head, head + "Conflicting CPU frequency values detected: 1200.000000 "
                          "!= 3400.000000. CPU Frequency is not max.\n")
    assert perftest_row(_write(tmp_path, "w.txt", warned), "ib_write_bw") == 390.56


def test_srun_label_prefixes(tmp_path: Path) -> None:
    real = (DATA / "nccl-all_reduce_perf.txt").read_text()
    labelled = "".join(f"0: {line}\n" for line in real.splitlines())
    assert nccl_busbw(_write(tmp_path, "n.txt", labelled), SIZE) == nccl_busbw(
        DATA / "nccl-all_reduce_perf.txt", SIZE)


def test_older_nccl_table_and_exponent_wrong_counts(tmp_path: Path) -> None:
    old = ("#       size         count    type   redop     time   algbw   busbw  error     "
           "time   algbw   busbw  error\n"
           "   134217728      33554432   float     sum   1652.2   81.24  152.32  1e-06   "
           "1636.7   82.01  153.76  1e-06\n")
    assert nccl_busbw(_write(tmp_path, "old.txt", old), 134217728) == (152.32, 0)
    bad = old.replace("152.32  1e-06", "152.32  2e+00")
    assert nccl_busbw(_write(tmp_path, "bad.txt", bad), 134217728) == (152.32, 1)
    real = (DATA / "nccl-all_reduce_perf.txt").read_text()
    row = next(line for line in real.splitlines() if line.strip().startswith("134217728"))
    wrong = real.replace(row, row.replace("152.32      0", "152.32  1e+03", 1))
    assert nccl_busbw(_write(tmp_path, "e.txt", wrong), 134217728) == (152.32, 1000)


def test_fio_json_plus_normal_and_fio_2(tmp_path: Path) -> None:
    real = (DATA / "fio-write.json").read_text()
    want = fio_bandwidth(DATA / "fio-write.json", "write")
    both = real + "\nwrite: (groupid=0, jobs=8): err= 0: pid=4242\n  write: IOPS=1490\n"
    assert fio_bandwidth(_write(tmp_path, "f.json", both), "write") == want
    data = json.loads(real)
    for job in data["jobs"]:
        for side in ("read", "write"):
            job[side]["bw"] = job[side]["bw_bytes"] // 1024
            del job[side]["bw_bytes"]
    got = fio_bandwidth(_write(tmp_path, "f2.json", json.dumps(data)), "write")
    assert abs(got - want) <= 1024 * len(data["jobs"])


def test_ior_that_only_writes(tmp_path: Path) -> None:
    real = (DATA / "ior.txt").read_text()
    only = "\n".join(line for line in real.splitlines() if not line.startswith("read "))
    path = _write(tmp_path, "ior.txt", only)
    assert ior_mib(path, "write") == 23841.08


def test_an_empty_results_folder_is_exit_1(tmp_path: Path) -> None:
    tree = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(ROOT / "examples" / "seed-64gpu-h100.yaml"),
                                       "-o", str(tree)])
    assert result.exit_code == 0, result.output
    empty = tmp_path / "results"
    empty.mkdir()
    result = CliRunner().invoke(main, ["acceptance", "check", str(tree), str(empty)])
    assert result.exit_code == 1 and "no result" in result.output


def test_an_unreadable_file_hides_no_other_finding(tmp_path: Path) -> None:
    tree = tmp_path / "out"
    CliRunner().invoke(main, ["render", str(ROOT / "examples" / "seed-64gpu-h100.yaml"),
                              "-o", str(tree)])
    bars = next(p for p in sorted((tree / "acceptance").rglob("bars.json"))
                if json.loads(p.read_text())["units"])
    unit, unit_bars = next(iter(json.loads(bars.read_text())["units"].items()))
    places = unit_bars["nodes"]
    folder = tmp_path / "results" / bars.parent.relative_to(tree / "acceptance") / unit
    folder.mkdir(parents=True)
    first, second = sorted(places)[:2]
    shutil.copy(DATA / "gpu_burn.txt", folder / f"burn-in-1--{first}.txt")
    (folder / f"burn-in-1--{first}.txt").write_text(
        (DATA / "gpu_burn.txt").read_text().replace("GPU 0: OK", "GPU 0: FAULTY"))
    (folder / f"burn-in-1--{second}.txt").write_text("garbage\n")
    result = CliRunner().invoke(main, ["acceptance", "check", str(tree), str(tmp_path / "results")])
    assert result.exit_code == 2
    assert f"{first}" in result.output and "GPU 0 FAULTY" in result.output
    assert f"burn-in-1--{second}.txt:1: no gpu_burn summary" in result.output
