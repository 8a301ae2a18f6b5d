"""Real consumers of monitoring/: promtool checks the config and rules and runs rule unit tests
that put each alert at the plan's figure; snmp_exporter loads the PDU module; a real Prometheus
on loopback loads the config and lists every target (all down here, which is expected)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.formats.yaml import yaml_text
from tests import monitoring_fixtures as mf
from tests.conftest import EXAMPLE_IDS
from tests.real import slurm_harness as harness

pytestmark = pytest.mark.real

TOOLS = {"promtool": "prometheus", "prometheus": "prometheus",
         "prometheus-snmp-exporter": "prometheus-snmp-exporter"}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing: apt-get install {TOOLS[name]} (.ci/install-deps)")
        pytest.skip(f"{name} is not installed (apt-get install {TOOLS[name]})")
    return path


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, timeout=300)


# -- promtool and snmp_exporter ------------------------------------------------------------------

@pytest.mark.parametrize("name", mf.CASES)
def test_promtool_accepts_the_config_and_every_rule(name: str, tmp_path: Path) -> None:
    root = mf.write_tree(name, tmp_path)
    config = _run(_tool("promtool"), "check", "config", str(root / "prometheus.yml"))
    assert config.returncode == 0, config.stdout + config.stderr
    files = sorted(str(p) for p in (root / "rules").glob("*.yml"))
    checked = _run(_tool("promtool"), "check", "rules", *files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # promtool 2.42 prints lint findings (two rules of one name and labels) yet exits 0
    assert "FAILED" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    counted = sum(int(n) for n in re.findall(r"SUCCESS: (\d+) rules found", checked.stdout))
    assert counted == len(mf.rules(name)) > 0


def test_promtool_refuses_a_broken_rule(tmp_path: Path) -> None:
    """The checks above can fail: a bad expression is refused, two alike rules reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml_text({"groups": [{"name": "g", "rules": [
        {"alert": "A", "expr": "st4LineCurrent{job=\"pdu\" > 1"}]}]}))
    assert _run(_tool("promtool"), "check", "rules", str(bad)).returncode != 0
    rule = {"alert": "A", "expr": "up == 0", "labels": {"severity": "warning"}}
    bad.write_text(yaml_text({"groups": [{"name": "g", "rules": [rule, rule]}]}))
    run = _run(_tool("promtool"), "check", "rules", str(bad))
    assert "FAILED" in run.stdout + run.stderr and "duplicate rule" in run.stdout + run.stderr


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_snmp_exporter_loads_the_pdu_module(name: str, tmp_path: Path) -> None:
    root = mf.write_tree(name, tmp_path)
    run = _run(_tool("prometheus-snmp-exporter"), "--dry-run",
               f"--config.file={root / 'snmp.yml'}")
    assert run.returncode == 0, run.stderr
    assert "Configuration parsed successfully" in run.stderr


def test_snmp_exporter_refuses_a_broken_module(tmp_path: Path) -> None:
    bad = tmp_path / "snmp.yml"
    bad.write_text(yaml_text({"sentry4": {"walk": ["1.3.6.1"], "metrics": [
        {"name": "x", "oid": "1.3.6.1", "type": "gauge", "indexez": []}]}}))
    run = _run(_tool("prometheus-snmp-exporter"), "--dry-run", f"--config.file={bad}")
    assert run.returncode != 0


# -- rule unit tests: each alert fires at the plan's figure and not below -----------------------

@pytest.mark.parametrize("name", mf.CASES)
def test_alerts_fire_at_the_plans_thresholds_and_not_below(name: str, tmp_path: Path) -> None:
    root = mf.write_tree(name, tmp_path)
    cases = (_power_cases(name) + _gpu_cases(name) + _gpu_event_cases(name)
             + _fabric_cases(name) + _link_error_cases(name))
    assert cases
    tests_file = root / "tests.yml"
    tests_file.write_text(yaml_text({
        "rule_files": sorted(str(p.relative_to(root)) for p in (root / "rules").glob("*.yml")),
        "evaluation_interval": "1m", "tests": cases}))
    run = _run(_tool("promtool"), "test", "rules", str(tests_file), cwd=root)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr
    assert "SUCCESS" in run.stdout


def _power_cases(name: str) -> list[dict[str, Any]]:
    racks = mf.racks(name)
    cases = []
    for profile in sorted({r["pdu"] for r in racks.values()}):
        rack = min(r for r, v in racks.items() if v["pdu"] == profile)
        pdu = _pdu_labels(name, rack)
        cord = {**pdu, "st4UnitIndex": "1", "st4InputCordIndex": "1"}
        cases += _pair(name, "PduOverPower", "st4InputCordActivePower", cord,
                       math.floor(mf.pdu_limit_w(name, profile)), {"pdu_profile": profile})
        hundredths = round(mf.line_limit_a(name, profile) * 100)  # st4BranchCurrent's unit
        branch = {**cord, "st4BranchIndex": "2"}
        cases += _pair(name, "PduCircuitLineOverCurrent", "st4BranchCurrent", branch,
                       hundredths, {"pdu_profile": profile}, divisor=100)
        inlet = mf.inlet_limit_a(name, profile)
        if inlet is not None:
            line = {**cord, "st4LineIndex": "3"}
            cases += _pair(name, "PduInletLineOverCurrent", "st4LineCurrent", line,
                           round(inlet * 100), {"pdu_profile": profile}, divisor=100)
        if mf.SIDES[mf.profile(name, profile)["layout"]] > 1:
            watts = mf.surviving_w(name, profile)
            cases += _pair(name, "RackPowerRedundancyLost", "st4InputCordActivePower", cord,
                           math.floor(watts), {"rack": rack, "row": pdu["row"]}, keep=False)
    for kw in sorted({v["max_power_kw"] for v in racks.values() if v["max_power_kw"]}):
        rack = min(r for r, v in racks.items() if v["max_power_kw"] == kw)
        cord = {**_pdu_labels(name, rack), "st4UnitIndex": "1", "st4InputCordIndex": "1"}
        cases += _pair(name, "RackOverPowerBudget", "st4InputCordActivePower", cord,
                       round(kw * 1000), {"rack": rack, "row": cord["row"]}, keep=False)
    for row in mf.spec(name)["rows"]:
        if row.get("max_power_kw"):
            rack = min(r for r, v in racks.items() if v["row"] == row["name"])
            cord = {**_pdu_labels(name, rack), "st4UnitIndex": "1", "st4InputCordIndex": "1"}
            cases += _pair(name, "RowOverPowerBudget", "st4InputCordActivePower", cord,
                           round(row["max_power_kw"] * 1000), {"row": row["name"]}, keep=False)
    return cases


def _gpu_cases(name: str) -> list[dict[str, Any]]:
    """Per GPU node type: one GPU fewer than planned fires NodeMissingGpus, all of them do
    not; a GPU at the maximum operating temperature it reports fires, one degree below not."""
    plan = mf.build_of(name).plan
    cases = []
    for node_type in sorted({n.node_type for n in plan.nodes}):
        expected = mf.gpu_count(name, node_type)
        if expected == 0:
            continue
        node = min((n for n in plan.nodes if n.node_type == node_type), key=lambda n: n.hostname)
        host = {"job": "dcgm", "instance": node.hostname, "node_type": node_type,
                "rack": node.rack, "row": mf.racks(name)[node.rack]["row"]}
        for gpus, fires in ((expected - 1, True), (expected, False), (0, True)):
            series = [_series("up", host, "1")] + [
                _series("DCGM_FI_DEV_GPU_TEMP", {**host, "gpu": str(g)}, "40")
                for g in range(gpus)]
            node = {k: v for k, v in host.items() if k != "job"}  # 'count by' keeps no job
            alert = _expected(name, "NodeMissingGpus", node, gpus, {"node_type": node_type})
            cases.append(_case(series, "NodeMissingGpus", [alert] if fires else []))
        gpu = {**host, "gpu": "0"}
        for temp, fires in ((87, True), (86, False)):  # 87 C: the limit the test GPU reports
            series = [_series("DCGM_FI_DEV_GPU_TEMP", gpu, str(temp)),
                      _series("DCGM_FI_DEV_GPU_MAX_OP_TEMP", gpu, "87")]
            alert = _expected(name, "GpuTemperatureAboveMaxOperating", gpu, temp, {})
            cases.append(_case(series, "GpuTemperatureAboveMaxOperating",
                               [alert] if fires else []))
    return cases


# A counter that grows by one a minute (an error each minute), one that stays put, and gauges.
GROWS, CLEAN = "0+1x40", "5x40"
# (alert, DCGM field, series that fires, series that does not): counters' alerts fire on any
# new count, gauges' on any failure; the Xid gauge holds the last Xid (13: a graphics engine
# exception, an application's fault; 48: a double-bit ECC error, which needs a GPU reset).
GPU_EVENTS = (
    ("GpuThermalThrottling", "DCGM_FI_DEV_THERMAL_VIOLATION", GROWS, CLEAN),
    ("GpuDoubleBitEccError", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", GROWS, CLEAN),
    ("GpuRowRemapFailure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "1x40", "0x40"),
    ("GpuUncorrectableRowRemapped", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", GROWS, CLEAN),
    ("GpuXidError", "DCGM_FI_DEV_XID_ERRORS", "13x40", "0x40"),
    ("GpuXidNeedsService", "DCGM_FI_DEV_XID_ERRORS", "48x40", "13x40"),
)
NVLINK_EVENTS = (
    ("GpuNvlinkRecoveryError", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
    ("GpuNvlinkCrcErrors", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"),
    ("GpuNvlinkCrcErrors", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
    ("GpuNvlinkReplayErrors", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
)


def _gpu_event_cases(name: str) -> list[dict[str, Any]]:
    """Per GPU node type: throttling, ECC, row remapping and Xid alerts fire on a GPU that
    shows them and stay quiet on a clean one; NVLink error alerts likewise where its GPU model
    has NVLink, and never on one without."""
    plan = mf.build_of(name).plan
    cases = []
    for node_type in sorted({n.node_type for n in plan.nodes}):
        if mf.gpu_count(name, node_type) == 0:
            continue
        node = min((n for n in plan.nodes if n.node_type == node_type), key=lambda n: n.hostname)
        gpu = {"job": "dcgm", "instance": node.hostname, "node_type": node_type,
               "rack": node.rack, "row": mf.racks(name)[node.rack]["row"], "gpu": "3"}
        events = [(alert, field, fires, quiet, True) for alert, field, fires, quiet in GPU_EVENTS]
        nvlink = mf.has_nvlink(name, node_type)
        events += [(alert, field, GROWS, CLEAN, nvlink) for alert, field in NVLINK_EVENTS]
        for alert, field, fires, quiet, applies in events:
            # {{ $value }}: a gauge's value (the counters' summaries do not show it)
            value = float(fires.split("x")[0].split("+")[0])
            expected = [_expected(name, alert, gpu, value, {})] if applies else []
            cases.append(_case([{"series": _series(field, gpu, "0")["series"],
                                 "values": fires}], alert, expected))
            cases.append(_case([{"series": _series(field, gpu, "0")["series"],
                                 "values": quiet}], alert, []))
    return cases


def _link_error_cases(name: str) -> list[dict[str, Any]]:
    """Per InfiniBand fabric: each IBTA error counter of a switch port (named through
    infiniband_switch_info) and of a host's HCA port fires when it grows, and not when flat."""
    cases = []
    hosts = mf.targets(name, "node")
    for target in mf.targets(name, "infiniband"):
        exporter = {"job": "infiniband", **target["labels"]}
        port = {**exporter, "guid": "0x0000000000000001", "port": "7"}
        info = _series("infiniband_switch_info", {**exporter, "guid": port["guid"],
                                                  "switch": "ib-leaf-01"}, "1")
        host = {"job": "node", **hosts[0]["labels"], "device": "mlx5_0", "port": "1"}
        for alert, metric, node_metric in IB_COUNTERS:
            for fires in (True, False):
                # 3 errors at minute 25 (inside every window at minute 30), or none
                values = "0x24 3x15" if fires else "0x40"
                grew = {**port, "switch": "ib-leaf-01"}
                cases.append(_case([info, {"series": _series(metric, port, "0")["series"],
                                           "values": values}], f"IbSwitchPort{alert}",
                                   [_expected(name, f"IbSwitchPort{alert}", grew, 3, {})]
                                   if fires else []))
                if node_metric:
                    cases.append(_case([{"series": _series(node_metric, host, "0")["series"],
                                         "values": values}], f"IbHostPort{alert}",
                                       [_expected(name, f"IbHostPort{alert}", host, 3, {})]
                                       if fires else []))
    return cases


# (alert suffix, infiniband_exporter metric, node_exporter metric): the exporters' names for
# the IBTA PortCounters (treydock/infiniband_exporter; node_exporter's infiniband
# collector, which has no symbol error counter in 1.5).
IB_COUNTERS = (
    ("LinkDowned", "infiniband_switch_port_link_downed_total",
     "node_infiniband_link_downed_total"),
    ("LinkErrorRecovery", "infiniband_switch_port_link_error_recovery_total",
     "node_infiniband_link_error_recovery_total"),
    ("ReceiveErrors", "infiniband_switch_port_receive_errors_total",
     "node_infiniband_port_errors_received_total"),
    ("SymbolErrors", "infiniband_switch_port_symbol_error_total", None),
)


def _fabric_cases(name: str) -> list[dict[str, Any]]:
    """Per InfiniBand fabric: its exporter seeing one switch fewer than the fabric graph holds,
    or none, fires IbFabricMissingSwitches; seeing all of them does not."""
    plan = mf.build_of(name).plan
    cases = []
    for target in mf.targets(name, "infiniband"):
        fabric = target["labels"]["fabric"]
        switches = sorted(n for n, d in plan.fabric_wiring[fabric].graph.nodes(data=True)
                          if d.get("kind") == "switch")
        exporter = {"job": "infiniband", **target["labels"]}
        for seen, fires in ((len(switches) - 1, True), (len(switches), False), (0, True)):
            series = [_series("up", exporter, "1")] + [_series("infiniband_switch_info",
                              {**exporter, "guid": f"0x{k:016x}", "switch": switch}, "1")
                      for k, switch in enumerate(switches[:seen])]
            alert = _expected(name, "IbFabricMissingSwitches", {"fabric": fabric}, seen,
                              {"fabric": fabric})
            cases.append(_case(series, "IbFabricMissingSwitches", [alert] if fires else []))
    return cases


def _pdu_labels(name: str, rack: str) -> dict[str, str]:
    """The labels Prometheus gives a PDU's series: its file_sd labels and the job."""
    found = next(t for t in mf.targets(name, "pdu") if t["labels"]["rack"] == rack)
    return {"job": "pdu", **found["labels"]}


def _pair(name: str, alert: str, metric: str, labels: dict[str, str], limit: int,
          alert_labels: dict[str, str], *, divisor: int = 1,
          keep: bool = True) -> list[dict[str, Any]]:
    """Two cases: the series one unit above ``limit`` fires ``alert``, at ``limit`` it does not.
    ``keep``: the alert carries the series' labels (else only ``alert_labels``); ``divisor``:
    the rule's unit conversion (st4BranchCurrent / 100), done as Prometheus does it."""
    cases = []
    for value, fires in ((limit + 1, True), (limit, False)):
        base = labels if keep else {}
        expected = _expected(name, alert, {**base, **alert_labels}, value / divisor, alert_labels)
        cases.append(_case([_series(metric, labels, str(value))], alert,
                           [expected] if fires else []))
    return cases


def _expected(name: str, alert: str, labels: dict[str, str], value: float,
              rule_labels: dict[str, str]) -> dict[str, Any]:
    """An expected alert: the series' labels, the rule's own, annotations as Prometheus fills
    them in ({{ $labels.x }}, {{ $value }})."""
    rule = next(r for r in mf.rules_named(name, alert) if _covers(name, r, rule_labels))
    full = {**labels, **rule["labels"]}
    return {"exp_labels": full,
            "exp_annotations": {k: _fill(v, full, value) for k, v in rule["annotations"].items()}}


def _covers(name: str, rule: dict[str, Any], scope: dict[str, str]) -> bool:
    """Whether the rule is the one for this profile, node type, rack or row."""
    if "rack" in scope and rule["alert"].startswith("Rack"):
        return scope["rack"] in mf.racks_selected(rule["expr"], mf.racks(name))
    if "row" in scope and rule["alert"].startswith("Row"):
        return f'row="{scope["row"]}"' in rule["expr"]
    return all(rule["labels"][k] == v for k, v in scope.items() if k in rule["labels"])


def _fill(template: str, labels: dict[str, str], value: float) -> str:
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)
    return text.replace("{{ $value }}", _go_float(value))


def _go_float(value: float) -> str:
    """How Go's text/template prints a float64 of this size: the shortest digits, no exponent
    (true from 1e-4 up to 1e6, the range the test values stay in)."""
    assert value == 0 or 1e-4 <= abs(value) < 1e6, value
    return str(int(value)) if value == int(value) else repr(value)


def _series(metric: str, labels: dict[str, str], value: str) -> dict[str, str]:
    matchers = ",".join(f"{k}={json.dumps(v)}" for k, v in labels.items())
    return {"series": f"{metric}{{{matchers}}}", "values": f"{value}x40"}


def _case(series: list[dict[str, str]], alert: str,
          expected: list[dict[str, Any]]) -> dict[str, Any]:
    """Constant series for 40 minutes, evaluated at 30: past every rule's 'for'."""
    return {"interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": "30m", "alertname": alert,
                                 "exp_alerts": expected}]}


# -- a real Prometheus ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_prometheus_loads_the_config_and_lists_every_target(name: str, tmp_path: Path) -> None:
    root = mf.write_tree(name, tmp_path)
    expected = _expected_targets(name)
    with _prometheus(root, tmp_path / "data") as api:
        active = _wait_for_targets(api, len(expected))
        rules = api("/api/v1/rules")["data"]["groups"]
    found = {(t["scrapePool"], t["scrapeUrl"]): t["labels"] for t in active}
    assert set(found) == set(expected)
    for key, labels in expected.items():
        assert labels.items() <= found[key].items(), (key, found[key])
    for job in ("node", "dcgm", "pdu", "infiniband"):  # every file_sd label survives, su too
        for target in mf.targets(name, job):
            kept = [f for (pool, _), f in found.items()
                    if pool == job and f["instance"] == target["labels"]["instance"]]
            assert len(kept) == 1 and target["labels"].items() <= kept[0].items(), target
    loaded = [r for g in rules for r in g["rules"]]
    assert len(loaded) == len(mf.rules(name))
    assert all(r["health"] != "err" for r in loaded)


def _expected_targets(name: str) -> dict[tuple[str, str], dict[str, str]]:
    """(job, scrape URL) -> labels it must carry, from the plan's hosts, PDUs and addresses."""
    plan = mf.build_of(name).plan
    racks = mf.racks(name)
    mgmt = plan.addresses.get("management", {})
    found: dict[tuple[str, str], dict[str, str]] = {}
    for node in plan.nodes:
        labels = {"instance": node.hostname, "rack": node.rack, "row": racks[node.rack]["row"],
                  "node_type": node.node_type, "role": node.role}
        partitions = sorted(p.name for p in plan.partitions if node.hostname in p.nodes)
        if partitions:
            labels["partition"] = ",".join(partitions)
        address = mgmt.get(node.hostname, node.hostname)
        found["node", f"http://{address}:9100/metrics"] = {**labels, "job": "node"}
        if mf.gpu_count(name, node.node_type):
            found["dcgm", f"http://{address}:9400/metrics"] = {**labels, "job": "dcgm"}
    cards = plan.addresses.get("bmc") or mgmt
    for device in plan.power_devices:
        if device.kind == "pdu":
            url = ("http://127.0.0.1:9116/snmp?module=sentry4&target="
                   f"{cards.get(device.name, device.name)}")
            found["pdu", url] = {"job": "pdu", "instance": device.name, "pdu": device.name,
                                 "rack": device.rack, "feed_side": device.side}
    for target in mf.targets(name, "infiniband"):  # host choice: test_monitoring.py
        host = target["labels"]["instance"]
        url = f"http://{mgmt.get(host, host)}:9315/metrics"
        found["infiniband", url] = {"job": "infiniband", "fabric": target["labels"]["fabric"]}
    return found


class _prometheus:
    """Prometheus on a free loopback port with its own storage; stopped by its PID."""

    def __init__(self, root: Path, data: Path):
        self.root, self.data = root, data
        self.port = _free_port()
        self.log = data.parent / "prometheus.log"

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.data.mkdir()
        self.proc = subprocess.Popen(
            [_tool("prometheus"), f"--config.file={self.root / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.data}", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"prometheus exited {self.proc.returncode}: {self.log.read_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2):
                    return self.api
            except OSError:
                time.sleep(0.3)
        self._stop()
        pytest.fail(f"prometheus not ready in 60 s: {self.log.read_text()}")

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as r:
            return json.load(r)

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _wait_for_targets(api: Any, count: int) -> list[dict[str, Any]]:
    """Active targets once file_sd has delivered them all (discovery updates every 5 s)."""
    deadline = time.monotonic() + 60
    active: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        active = api("/api/v1/targets?state=active")["data"]["activeTargets"]
        if len(active) >= count:
            return active
        time.sleep(0.5)
    return active


def _free_port() -> int:
    """slurm_harness's: below the ephemeral range, where bind(0)'s port could be taken by
    another worker's outgoing connection before Prometheus binds it, and in this xdist
    worker's own slice (slurm_harness.worker_ports)."""
    return harness.free_port()
