"""`cluster-iac acceptance check RENDERED RESULTS`: the acceptance jobs' outputs against their bars.

Reads every partition's ``bars.json`` under RENDERED/acceptance (emit/acceptance.py): its own
bars, judged against the outputs in the same relative folder under RESULTS, and each unit's
(``units``), judged against the unit's folder below it (``<partition>/<unit>/``, where the
unit's jobs write); a unit's own bars.json of an older render is read as such a unit. The
outputs are nccl-tests' all_reduce_perf table,
perftest's ib_write_bw / ib_send_lat report, ``dcgmi diag -j`` JSON, gpu_burn's summary, fio's
``--output-format=json``, IOR's summary and the power step's readings CSV. Every node, link,
domain, unit, partition or PDU line below its bar is named with its place: rack and U from
bars.json, and for a link the cable label, the leaf and its port from
RENDERED/cabling/cables.csv. Output that cannot be read is a ResultError naming the file and
line. The parsers live in acceptance/formats.py.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster_iac.acceptance.formats import (
    MissingOperation,
    ResultError,
    dcgm_failures,
    fio_bandwidth,
    gpu_burn_faulty,
    gpu_burn_tested,
    ior_mib,
    nccl_busbw,
    perftest_row,
    power_readings,
)
from cluster_iac.base.hostlist import expand

FAMILIES = ("dcgm", "burn-in", "ib", "nccl", "storage", "power")


@dataclass
class Report:
    """What the check found: failures per family, results read per family."""

    failures: list[tuple[str, str]] = field(default_factory=list)  # (family, text)
    read: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)  # files not read, each with its line

    def judge(self, what: Callable[..., None], *args: Any) -> None:
        """Run one file's judgement, what(*args); a file that cannot be read is recorded,
        and every other file is still judged."""
        try:
            what(*args)
        except ResultError as error:
            self.errors.append(str(error))

    def fail(self, family: str, text: str) -> None:
        self.failures.append((family, text))

    def summary(self) -> list[str]:
        """One line per family: results read and how many are below their bars."""
        below = Counter(family for family, _ in self.failures)
        return [f"{family}: {self.read[family]} result(s), {below[family]} below the bar"
                + ("" if self.read[family] or below[family] else " (not run)")
                for family in FAMILIES]


def check(rendered: Path, results: Path) -> Report:
    """Every folder's results against its bars; ResultError on output it cannot read."""
    report = Report()
    root = rendered / "acceptance"
    if not root.is_dir():
        raise ResultError(f"{root}: no acceptance folder (render the spec first)")
    cables = _Cables(rendered / "cabling" / "cables.csv")
    for bars_path in sorted(root.rglob("bars.json")):
        bars = _bars(bars_path)
        folder = results / bars_path.parent.relative_to(root)
        if not folder.is_dir():
            continue
        if "unit" in bars:  # a unit's own bars.json (renders before the units table)
            _unit(folder, bars, cables, report)
            continue
        _nccl(folder, bars, {}, report)
        if "storage" in bars:
            report.judge(_storage, folder, bars, report)
        for unit, unit_bars in _units(bars_path, bars).items():
            if (folder / unit).is_dir():
                _unit(folder / unit, {**unit_bars, "partition": bars["partition"],
                                      "constants": bars["constants"], "unit": unit},
                      cables, report)
    return report


def _unit(folder: Path, bars: dict[str, Any], cables: _Cables, report: Report) -> None:
    """One scalable unit's outputs against its bars."""
    places = bars.get("nodes", {})
    _nccl(folder, bars, places, report)
    _per_node(folder, places, report, "dcgm", "dcgm-r*--*.json", dcgm_failures)
    _per_node(folder, places, report, "burn-in", "burn-in-*--*.txt", gpu_burn_faulty)
    _burn_counts(folder, places, report)
    _ib(folder, bars, places, cables, report)
    report.judge(_power, folder, bars, report)


def _units(path: Path, bars: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The partition's units and their bars (bars.json ``units``); a unit name is a folder of
    the results, so one that is not a plain name is refused."""
    units = bars.get("units", {})
    if not isinstance(units, dict) or not all(
            isinstance(unit, str) and isinstance(value, dict) and unit not in ("", ".", "..")
            and "/" not in unit and "\\" not in unit for unit, value in units.items()):
        raise ResultError(f"{path}:1: 'units' is not a table of units and their bars "
                          "(render the spec again)")
    return units


def _count(tested: dict[Path, int], path: Path) -> None:
    tested[path] = gpu_burn_tested(path)


def _burn_counts(folder: Path, places: dict[str, Any], report: Report) -> None:
    """A node whose gpu_burn tested fewer GPUs than another node of its unit did."""
    tested: dict[Path, int] = {}
    for path in sorted(folder.glob("burn-in-*--*.txt")):
        report.judge(_count, tested, path)
    most = max(tested.values(), default=0)
    for path, count in tested.items():
        if count < most:
            host = path.stem.split("--", 1)[1]
            report.fail("burn-in", f"{_where(places, host)}: tested {count} GPUs of {most} "
                                   f"(the unit's other nodes tested {most}) ({path.name})")


def _bars(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg} "
                          "(render the spec again)") from None
    if not isinstance(data, dict) or "partition" not in data:
        raise ResultError(f"{path}:1: not an acceptance bars file (render the spec again)")
    return data


def _where(places: dict[str, str], host: str) -> str:
    """'host (rack R U09)' from bars.json's places ('R U09')."""
    place = places.get(host)
    return f"{host} (rack {place})" if place else host


def _nccl(folder: Path, bars: dict[str, Any], places: dict[str, Any], report: Report) -> None:
    for step in bars.get("nccl", []):
        if step["scope"] == "node":
            runs = [(host, folder / f"nccl-node--{host}.txt") for host in expand(step["hosts"])]
        else:
            runs = [(step["name"], folder / f"nccl-{step['scope']}--{step['name']}.txt")]
        ran = any(path.exists() for _, path in runs)
        for name, path in runs:
            if not path.exists():
                if ran:  # the step ran, this node's run wrote nothing
                    report.fail("nccl", f"{_where(places, name)}: no result ({path.name})")
                continue
            report.judge(_nccl_run, step, places, name, path, report)


def _nccl_run(step: dict[str, Any], places: dict[str, Any], name: str, path: Path,
              report: Report) -> None:
    busbw, wrong = nccl_busbw(path, step["size_bytes"])
    report.read["nccl"] += 1
    where = (_where(places, name) if step["scope"] == "node"
             else f"{step['scope']} {name} (racks {step['racks']})")
    if busbw < step["bar_busbw_gbs"]:
        report.fail("nccl", f"{where}: all_reduce busbw {busbw:.2f} GB/s < bar "
                            f"{step['bar_busbw_gbs']} GB/s ({path.name})")
    if wrong:
        report.fail("nccl", f"{where}: {wrong} wrong values ({path.name})")


def _per_node(folder: Path, places: dict[str, Any], report: Report, family: str,
              pattern: str, failures: Callable[[Path], Iterable[str]]) -> None:
    """A family with one output per node (``<step>--<host>``): each failure its parser
    finds, at the node's place, and each node of the unit without an output."""
    paths = sorted(folder.glob(pattern))
    for path in paths:
        report.judge(_one_node, path, places, report, family, failures)
    _silent(paths, places, family, report)


def _one_node(path: Path, places: dict[str, Any], report: Report, family: str,
              failures: Callable[[Path], Iterable[str]]) -> None:
    host = path.stem.split("--", 1)[1]
    found = list(failures(path))
    report.read[family] += 1
    for text in found:
        report.fail(family, f"{_where(places, host)}: {text} ({path.name})")


def _silent(paths: list[Path], places: dict[str, Any], family: str, report: Report) -> None:
    """Each node of the unit with no output of a family that ran (others have one)."""
    if not paths:
        return
    seen = {path.stem.split("--", 1)[1] for path in paths}
    for host in sorted(set(places) - seen):
        report.fail(family, f"{_where(places, host)}: no result")


def _ib(folder: Path, bars: dict[str, Any], places: dict[str, Any], cables: _Cables,
        report: Report) -> None:
    ib = bars.get("ib")
    if ib is None:
        return
    for tool, key in (("ib_write_bw", "write_bw_gbps"), ("ib_send_lat", "send_lat_us")):
        for path in sorted(folder.glob(f"{tool}--*--*--*.txt")):
            report.judge(_ib_run, ib, tool, key, path, places, cables, report)


def _ib_run(ib: dict[str, Any], tool: str, key: str, path: Path, places: dict[str, Any],
    cables: _Cables, report: Report) -> None:
    _, server, client, port = path.stem.split("--", 3)
    value = perftest_row(path, tool)
    report.read["ib"] += 1
    crossing = server not in places  # ib-spine's job: the server is the unit before's
    bar = ib["spine_send_lat_us"] if crossing and tool == "ib_send_lat" else ib[key]
    bad = value < bar if tool == "ib_write_bw" else value > bar
    if bad:
        unit, sign = ("Gb/s", "<") if tool == "ib_write_bw" else ("us", ">")
        report.fail("ib", f"{tool} {server} -> {client} on {port}: {value:.2f} {unit} "
                          f"{sign} bar {bar} {unit}; links: "
                          f"{cables.link(server, port, places)}; "
                          f"{cables.link(client, port, places)} ({path.name})")


def _power(folder: Path, bars: dict[str, Any], report: Report) -> None:
    path = folder / "power-readings.csv"
    if not path.exists():
        return
    expected = {(b["pdu"], b["circuit"], b["line"]): b for b in bars.get("power", [])}
    for line_no, key, amps in power_readings(path):
        bar = expected.get(key)
        if bar is None:
            raise ResultError(f"{path}:{line_no}: no PDU line {'/'.join(key)} in this unit's "
                              "racks (bars.json 'power')")
        report.read["power"] += 1
        if amps > bar["bar_a"]:
            report.fail("power", f"PDU {key[0]} {key[1]} {key[2]} (rack {bar['rack']}): "
                                 f"{amps:.1f} A > expected {bar['expected_a']} A + "
                                 f"{bars['constants']['power_meter_tolerance']:.0%} "
                                 f"({path.name}:{line_no})")


def _storage(folder: Path, bars: dict[str, Any], report: Report) -> None:
    """fio's per-node JSON reports summed, and IOR's summary (ior.txt, MiB/s of all tasks)."""
    ior = folder / "ior.txt"
    for direction, bar in bars["storage"].items():
        runs = []
        paths = sorted(folder.glob(f"fio-{direction}--*.json"))
        if paths:
            total = sum(fio_bandwidth(path, direction) for path in paths) / 1e9
            runs.append((f"fio {direction} over {len(paths)} node(s)", total))
        if ior.exists():
            with suppress(MissingOperation):  # a run that only writes (-w): no read judged
                runs.append((f"IOR {direction}", ior_mib(ior, direction) * 2**20 / 1e9))
        for what, gbs in runs:
            report.read["storage"] += 1
            if gbs < bar["bar_gbs"]:
                report.fail("storage", f"partition {bars['partition']}: {what} {gbs:.2f} GB/s "
                                       f"< bar {bar['bar_gbs']} GB/s ({bar['source']})")


class _Cables:
    """The cabling plan's cables by (device, port), read when a link is first named."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ends: dict[tuple[str, str], dict[str, str]] | None = None

    def link(self, host: str, port: str, places: dict[str, Any]) -> str:
        if self.ends is None:
            self.ends = {}
            if self.path.exists():
                with self.path.open(newline="") as f:
                    for cable in csv.DictReader(f):
                        self.ends[(cable["a_device"], cable["a_port"])] = cable
        row: dict[str, str] | None = self.ends.get((host, port))
        if row is None:
            return f"{_where(places, host)} {port}"
        return (f"cable {row['cable_id']}: {host} {port} (rack {row['a_rack']} "
                f"U{int(row['a_u'] or 0):02d}) to {row['b_device']} {row['b_port']} "
                f"(rack {row['b_rack']} U{int(row['b_u'] or 0):02d})")
