"""Acceptance jobs (emit/acceptance.py) and their results checker (cluster_iac/acceptance/check.py).

The scripts go through the real shellcheck (tests/real/test_acceptance_real.py runs them
through sbatch --test-only on real slurmctld); the checker reads the tools' published output
formats (tests/data/acceptance/README.md) with slow nodes and links planted in copies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cluster_iac.base.hostlist import expand
from cluster_iac.cli.main import main
from cluster_iac.emit import acceptance as emit_acceptance
from cluster_iac.emit import acceptance_bars, render_all
from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import compile_data
from tests.test_fabric import superpod_spec

DATA = Path(__file__).parent / "data" / "acceptance"
EXAMPLE = "dgx-h100-superpod-4su"


def _tree(name: str, tmp: Path) -> Path:
    out = tmp / name
    for rel, text in render_all(example_build(name).plan).items():
        if rel.startswith(("acceptance/", "cabling/cables.csv")):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text)
    return out


def _scripts(name: str, suffix: str = ".sbatch") -> dict[str, str]:
    return {rel: text for rel, text in render_all(example_build(name).plan).items()
            if rel.startswith("acceptance/") and rel.endswith(suffix)}


def _units(files: dict[str, str], partition: str = "batch") -> dict[str, dict[str, Any]]:
    units: dict[str, dict[str, Any]] = json.loads(
        files[f"acceptance/{partition}/bars.json"])["units"]
    return units


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_script_passes_shellcheck(name: str, tmp_path: Path) -> None:
    """The real shellcheck, every check on (style and up); missing fails under CI."""
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shellcheck is not installed (.ci/install-deps installs it)")
        pytest.skip("shellcheck is not installed")
    scripts = _scripts(name)
    assert scripts, f"{name} has no acceptance jobs"
    paths = []
    for rel, text in scripts.items():
        path = tmp_path / rel.replace("/", "--")
        path.write_text(text)
        paths.append(str(path))
    result = subprocess.run(["shellcheck", "--shell=bash", "--severity=style", *paths],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    submits = []
    for rel, text in _scripts(name, "/submit.sh").items():  # POSIX sh, as every .sh file
        path = tmp_path / rel.replace("/", "--")
        path.write_text(text)
        submits.append(str(path))
    assert submits
    result = subprocess.run(["shellcheck", "--shell=sh", "--severity=style", *submits],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_jobs_cover_every_unit_and_domain() -> None:
    plan = example_build("gb200-nvl72").plan
    files = render_all(plan)
    nccl = [unit["nccl"] for unit in _units(files, "gpu").values()]
    domains = {step["name"] for steps in nccl for step in steps if step["scope"] == "nvlink_domain"}
    assert domains == {d.name for d in plan.nvlink_domains if len(d.nodes) > 1}


def test_bars_come_from_the_predictions() -> None:
    """The SU's bar is the plan's prediction for the SU's nodes less the documented margin."""
    from cluster_iac.plan.collectives import predict
    plan = example_build(EXAMPLE).plan
    bars = _units(render_all(plan))["su2"]
    step = next(s for s in bars["nccl"] if s["scope"] == "scalable_unit")
    hosts = set(expand(step["hosts"]))
    predicted = predict(plan, [n for n in plan.nodes if n.hostname in hosts]).busbw_gbs
    assert step["bar_busbw_gbs"] == round(predicted * (1 - acceptance_bars.NCCL_MARGIN), 2)
    assert len(hosts) == 32 and hosts == set(bars["nodes"]) == set(expand(bars["nodelist"]))
    assert bars["ib"]["write_bw_gbps"] == 400 * acceptance_bars.PERFTEST_EFFICIENCY


def _job_lines(submit: str) -> dict[str, list[str]]:
    """submit.sh's job lines by unit (each unit's follow its '# suN' comment)."""
    units: dict[str, list[str]] = {}
    for line in submit.splitlines():
        if re.fullmatch(r"    # \S+", line):
            unit = units.setdefault(line.split()[-1], [])
        elif line.startswith("    job "):
            unit.append(line)
    return units


def test_an_added_su_adds_jobs_and_changes_none() -> None:
    """A third SU adds its job lines and its bars; no other unit's changes, nor any script."""
    def files(sus: int) -> dict[str, str]:
        return {rel: text for rel, text in render_all(compile_data(superpod_spec(sus))).items()
                if rel.startswith("acceptance/")}
    before, after = files(2), files(3)
    assert len(after) == len(before)  # no file per unit
    scripts = {rel for rel in before if rel.endswith(".sbatch") and "partition" not in rel
               and "storage" not in rel}
    assert scripts and {rel: before[rel] for rel in scripts} == {rel: after[rel] for rel in scripts}
    old, new = _units(before), _units(after)
    assert sorted(old) == ["su1", "su2"] and {u: new[u] for u in old} == old and "su3" in new
    old_jobs = _job_lines(before["acceptance/batch/submit.sh"])
    new_jobs = _job_lines(after["acceptance/batch/submit.sh"])
    assert {u: new_jobs[u] for u in old_jobs} == old_jobs
    assert [line.split()[1] for line in new_jobs["su3"]] == [
        "dcgm", "burn-in", "ib", "ib-spine", "nccl", "power-step"]


def test_sbatch_value_refuses_what_could_add_a_line() -> None:
    for bad in ("batch\n#SBATCH --uid=0", "a b", "x;reboot", "$(id)"):
        with pytest.raises(ValueError):
            emit_acceptance.sbatch_value(bad)
    assert emit_acceptance.sbatch_value("dgx-[001-032]") == "dgx-[001-032]"


# --- the checker ------------------------------------------------------------------------------


def _nccl(busbw: float) -> str:
    text = (DATA / "nccl-all_reduce_perf.txt").read_text()
    return re.sub(r"(  8589934592 .*?-1 +\S+ +\S+ +)\S+", lambda m: f"{m.group(1)}{busbw:.2f}",
                  text)


def _perftest(name: str, value: float) -> str:
    lines = (DATA / f"{name}.txt").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "#bytes" in line) + 1
    fields = lines[at].split()
    fields[3 if name == "ib_write_bw" else 4] = f"{value:.2f}"
    lines[at] = " " + "   ".join(fields)
    return "\n".join(lines) + "\n"


def _results(tree: Path, tmp: Path) -> Path:
    """Every job of su1 and the partition run, all at their bars' predictions."""
    results = tmp / "results"
    unit = results / "batch" / "su1"
    unit.mkdir(parents=True)
    bars = json.loads((tree / "acceptance/batch/bars.json").read_text())["units"]["su1"]
    for step in bars["nccl"]:
        good = _nccl(step["predicted_busbw_gbs"])
        names = expand(step["hosts"]) if step["scope"] == "node" else [step["name"]]
        for name in names:
            (unit / f"nccl-{step['scope']}--{name}.txt").write_text(good)
    hosts = sorted(bars["nodes"])
    for a, b in zip(hosts[::2], hosts[1::2], strict=True):
        for port in bars["ib"]["ports"]:
            (unit / f"ib_write_bw--{a}--{b}--{port}.txt").write_text(_perftest("ib_write_bw", 390))
            (unit / f"ib_send_lat--{a}--{b}--{port}.txt").write_text(_perftest("ib_send_lat", 1.02))
    for host in hosts:
        shutil.copy(DATA / "dcgm-diag.json", unit / f"dcgm-r3--{host}.json")
        shutil.copy(DATA / "gpu_burn.txt", unit / f"burn-in-1--{host}.txt")
    rows = ["rack,pdu,circuit,line,amps"] + [
        f"{p['rack']},{p['pdu']},{p['circuit']},{p['line']},{p['expected_a']}"
        for p in bars["power"]]
    (unit / "power-readings.csv").write_text("\n".join(rows) + "\n")
    part = json.loads((tree / "acceptance/batch/bars.json").read_text())
    fio = json.loads((DATA / "fio-write.json").read_text())
    nodes = 128
    fio["jobs"][0]["write"]["bw_bytes"] = int(part["storage"]["write"]["bound_gbs"] * 1e9 / nodes)
    for i in range(nodes):
        (results / "batch" / f"fio-write--n{i}.json").write_text(json.dumps(fio))
    return results


def _check(tree: Path, results: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["acceptance", "check", str(tree), str(results)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_results_at_the_predictions_pass(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    code, out = _check(tree, _results(tree, tmp_path))
    assert code == 0, out
    assert "nccl: 33 result(s), 0 below the bar" in out  # 32 nodes alone and the SU
    assert "ib: 256 result(s)" in out and "storage: 1 result(s)" in out


def test_planted_faults_are_found_by_name_and_place(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    unit = results / "batch" / "su1"
    (unit / "nccl-node--dgx-006.txt").write_text(_nccl(250.0))
    (unit / "ib_write_bw--dgx-011--dgx-012--ib3.txt").write_text(_perftest("ib_write_bw", 196.4))
    (unit / "ib_send_lat--dgx-021--dgx-022--ib5.txt").write_text(_perftest("ib_send_lat", 7.5))
    dcgm = json.loads((DATA / "dcgm-diag.json").read_text().split("\n", 1)[1])
    memory = dcgm["DCGM GPU Diagnostic"]["test_categories"][2]["tests"][0]["results"][5]
    memory.update(status="Fail", warnings=[{"warning": "Double-bit ECC error"}])
    (unit / "dcgm-r3--dgx-030.json").write_text(json.dumps(dcgm))
    burn = (DATA / "gpu_burn.txt").read_text().replace("GPU 0: OK", "GPU 0: FAULTY")
    (unit / "burn-in-1--dgx-017.txt").write_text(burn)
    readings = (unit / "power-readings.csv").read_text().splitlines()
    rack, pdu, circuit, line, amps = readings[1].split(",")
    readings[1] = f"{rack},{pdu},{circuit},{line},{float(amps) * 1.3:.1f}"
    (unit / "power-readings.csv").write_text("\n".join(readings) + "\n")
    code, out = _check(tree, results)
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 6, out
    assert any("dgx-006 (rack su1-r2 U09): all_reduce busbw 250.00" in f for f in fails), out
    link = next(f for f in fails if "ib_write_bw dgx-011 -> dgx-012 on ib3" in f)
    assert "cable CF-su1-r3.U17.ib3: dgx-011 ib3 (rack su1-r3 U17) to ib-leaf-su1-r4" in link
    assert any("ib_send_lat dgx-021 -> dgx-022 on ib5: 7.50 us > bar 2.5" in f for f in fails)
    assert any("dgx-030 (rack su1-r8 U09): GPU 5 GPU Memory: Double-bit ECC error" in f
               for f in fails), out
    assert any("dgx-017 (rack su1-r5 U01): GPU 0 FAULTY" in f for f in fails)
    assert any(f"PDU {pdu} {circuit} {line} (rack {rack})" in f for f in fails)
    assert "nccl: 33 result(s), 1 below the bar" in out


def test_a_node_without_output_is_named(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    (results / "batch" / "su1" / "nccl-node--dgx-009.txt").unlink()
    (results / "batch" / "su1" / "dcgm-r3--dgx-010.json").unlink()
    code, out = _check(tree, results)
    assert code == 1
    assert "FAIL nccl: dgx-009 (rack su1-r3 U01): no result (nccl-node--dgx-009.txt)" in out
    assert "FAIL dcgm: dgx-010 (rack su1-r3 U09): no result" in out


def test_a_slow_partition_and_storage_are_found(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    part = json.loads((tree / "acceptance/batch/bars.json").read_text())
    step = part["nccl"][0]
    (results / "batch" / f"nccl-partition--{step['name']}.txt").write_text(_nccl(10.0))
    for path in (results / "batch").glob("fio-write--n1*.json"):
        path.unlink()
    code, out = _check(tree, results)
    assert code == 1
    assert "partition batch (racks su[1-4]-r[1-8])" in out and "all_reduce busbw 10.00" in out
    assert "partition batch: fio write" in out


def test_an_ior_summary_below_the_bound_is_found(tmp_path: Path) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    bars = json.loads((tree / "acceptance/batch/bars.json").read_text())["storage"]
    mib = {d: bars[d]["bound_gbs"] * 1e9 / 2**20 for d in ("write", "read")}
    text = (DATA / "ior.txt").read_text()
    text = re.sub(r"^(write +)(\S+ +\S+ +)(\S+)", lambda m: f"{m[1]}{m[2]}{mib['write']:.2f}",
                  text, flags=re.M)
    text = re.sub(r"^(read +)(\S+ +\S+ +)(\S+)", lambda m: f"{m[1]}{m[2]}{mib['read'] / 2:.2f}",
                  text, flags=re.M)
    (results / "batch" / "ior.txt").write_text(text)
    code, out = _check(tree, results)
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and "partition batch: IOR read " in fails[0], out
    assert "storage: 3 result(s), 1 below the bar" in out


@pytest.mark.parametrize(("name", "text", "where"), [
    ("nccl-node--dgx-001.txt", "  8589934592  2147483648  float  sum  -1  47535  180.71\n",
     ":1: an all_reduce_perf table row has 13 columns"),
    ("nccl-node--dgx-002.txt", "# nothing ran\n", ":1: no all_reduce_perf result row"),
    ("dcgm-r3--dgx-003.json", 'Successfully ran\n{\n  "DCGM GPU Diagnostic": {,\n}\n', ":3:"),
    ("ib_write_bw--dgx-001--dgx-002--ib0.txt",
     " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n",
     ":1: no ib_write_bw result header 'BW average[Gb/sec]' (ib_write_bw needs --report_gbits)"),
    ("../ior.txt", "Summary of all tests:\nOperation   Max(MiB)   Min(MiB)  Mean(MiB)\n"
     "write       23841.08   23841.08\n", ":3: an IOR summary row has 4 columns, this one 3"),
])
def test_unreadable_output_is_an_error_naming_file_and_line(tmp_path: Path, name: str, text: str,
                                                            where: str) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    (results / "batch" / "su1" / name).write_text(text)
    code, out = _check(tree, results)
    assert code == 2
    assert os.path.normpath(f"batch/su1/{name}") + where in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize(("name", "text"), [
    ("dcgm-r3--dgx-001.json", '{"DCGM GPU Diagnostic": {"test_categories": [1]}}'),
    ("dcgm-r3--dgx-001.json", "[]"),
    ("burn-in-1--dgx-001.txt", "\x00\xff garbage"),
    ("ib_send_lat--dgx-001--dgx-002--ib0--x.txt", " #bytes #iterations t_typical[usec]\n 2 x\n"),
    ("power-readings.csv", "pdu,amps\nx,1\n"),
    ("power-readings.csv", "rack,pdu,circuit,line,amps\nr,p,c,l,12\n"),
    ("../fio-write--n0.json", '{"jobs": [{"write": "fast"}]}'),
    ("../bars.json", "{not json"),
])
def test_hostile_output_is_an_error_not_a_traceback(tmp_path: Path, name: str, text: str) -> None:
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    target = (tree / "acceptance" / "batch" if name == "../bars.json"
              else results / "batch" / "su1") / name.replace("../bars.json", "bars.json")
    target.write_text(text, errors="surrogateescape")
    code, out = _check(tree, results)
    assert code == 2, out
    # every readable file is still judged and summed up; the unreadable one is an error
    assert re.search(r"^error: .*\.(json|txt|csv):\d+", out, re.MULTILINE), out


def test_a_unit_bars_file_of_an_older_render_is_still_judged(tmp_path: Path) -> None:
    """Renders before the units table wrote each unit's bars.json in its folder."""
    tree = _tree(EXAMPLE, tmp_path)
    results = _results(tree, tmp_path)
    (results / "batch" / "su1" / "nccl-node--dgx-006.txt").write_text(_nccl(250.0))
    path = tree / "acceptance/batch/bars.json"
    part = json.loads(path.read_text())
    su1 = part["units"].pop("su1")
    path.write_text(json.dumps(part))
    (tree / "acceptance/batch/su1").mkdir()
    (tree / "acceptance/batch/su1/bars.json").write_text(json.dumps(
        {"partition": "batch", "unit": "su1", "constants": part["constants"], **su1}))
    code, out = _check(tree, results)
    assert code == 1 and "dgx-006 (rack su1-r2 U09): all_reduce busbw 250.00" in out, out
    assert "nccl: 33 result(s), 1 below the bar" in out
