"""Monitoring files: every target the plan implies, and every alert threshold equal to the figure
worked out here from the spec (tests/real/test_prometheus_real.py runs them in Prometheus)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from ruamel.yaml import YAML

from cluster_iac.emit.monitoring.promql import number, one_of, selector, string
from tests import monitoring_fixtures as mf


def _address(plan, host: str, port: int) -> str:  # type: ignore[no-untyped-def]
    return f"{plan.addresses.get('management', {}).get(host, host)}:{port}"


def test_node_exporter_on_every_host_with_its_place(example: str) -> None:
    plan = mf.build_of(example).plan
    found = {t["labels"]["instance"]: t for t in mf.targets(example, "node")}
    assert set(found) == {n.hostname for n in plan.nodes}
    racks = mf.racks(example)
    for node in plan.nodes:
        target = found[node.hostname]
        assert target["targets"] == [_address(plan, node.hostname, 9100)]
        labels = target["labels"]
        assert labels["rack"] == node.rack and labels["row"] == racks[node.rack]["row"]
        assert labels["node_type"] == node.node_type and labels["role"] == node.role
        partitions = sorted(p.name for p in plan.partitions if node.hostname in p.nodes)
        assert labels.get("partition", "") == ",".join(partitions)


def test_dcgm_exporter_on_exactly_the_gpu_nodes(example: str) -> None:
    plan = mf.build_of(example).plan
    gpu_nodes = {n.hostname for n in plan.nodes if mf.gpu_count(example, n.node_type) > 0}
    found = mf.targets(example, "dcgm")
    assert {t["labels"]["instance"] for t in found} == gpu_nodes
    assert all(t["targets"][0].endswith(":9400") for t in found)


def test_every_pdu_polled_through_the_snmp_exporter(example: str) -> None:
    plan = mf.build_of(example).plan
    racks = mf.racks(example)
    sides = {"single": "A", "ab": "AB", "three": "ABC"}
    expected = {f"{rack}-pdu-{side.lower()}": (rack, side) for rack, r in racks.items()
                for side in sides[mf.profile(example, r["pdu"])["layout"]]}
    found = {t["labels"]["pdu"]: t for t in mf.targets(example, "pdu")}
    assert set(found) == set(expected)
    for pdu, (rack, side) in expected.items():
        labels = found[pdu]["labels"]
        assert (labels["rack"], labels["feed_side"], labels["row"]) == (
            rack, side, racks[rack]["row"])
        assert labels["pdu_profile"] == racks[rack]["pdu"]
        card = plan.addresses.get("bmc", plan.addresses.get("management", {})).get(pdu, pdu)
        assert found[pdu]["targets"] == [card]


def test_one_infiniband_exporter_per_infiniband_fabric(example: str) -> None:
    fabrics = mf.spec(example).get("fabric", {})
    expected = sorted(n for n, f in fabrics.items() if f.get("technology") == "infiniband")
    found = mf.targets(example, "infiniband")
    assert sorted(t["labels"]["fabric"] for t in found) == expected
    plan = mf.build_of(example).plan
    for target in found:  # the exporter runs on a host cabled to that fabric
        assert target["labels"]["instance"] in plan.fabric_wiring[target["labels"]["fabric"]].graph


def test_superpod_fabric_exporters_prefer_management_hosts() -> None:
    hosts = {t["labels"]["fabric"]: t["labels"]["instance"]
             for t in mf.targets("dgx-h100-superpod-4su", "infiniband")}
    # only the DGXs are on the compute fabric; the storage fabric is Ethernet (RoCE), which
    # the InfiniBand exporter does not watch
    assert hosts == {"compute": "dgx-001"}


def test_scalable_unit_label_on_superpod_nodes() -> None:
    labels = {t["labels"]["instance"]: t["labels"] for t in
              mf.targets("dgx-h100-superpod-4su", "node")}
    assert labels["dgx-001"]["su"] == "1" and labels["dgx-127"]["su"] == "4"
    assert "su" not in labels["head-01"]


@pytest.mark.parametrize("example", mf.CASES)
def test_pdu_circuit_and_inlet_thresholds_equal_the_profiles_figures(example: str) -> None:
    profiles = {r["pdu"] for r in mf.racks(example).values()}
    power = {r["labels"]["pdu_profile"]: mf.threshold(r)
             for r in mf.rules_named(example, "PduOverPower")}
    current = {r["labels"]["pdu_profile"]: mf.threshold(r)
               for r in mf.rules_named(example, "PduCircuitLineOverCurrent")}
    inlet = {r["labels"]["pdu_profile"]: mf.threshold(r)
             for r in mf.rules_named(example, "PduInletLineOverCurrent")}
    assert set(power) == set(current) == profiles
    assert set(inlet) == {p for p in profiles if mf.inlet_limit_a(example, p) is not None}
    for name in profiles:
        assert power[name] == pytest.approx(mf.pdu_limit_w(example, name), abs=0.005)
        assert current[name] == pytest.approx(mf.line_limit_a(example, name), abs=0.005)
        if name in inlet:
            assert inlet[name] == pytest.approx(mf.inlet_limit_a(example, name), abs=0.005)


def test_the_issues_32a_415v_100_percent_circuit_alerts_at_its_computed_kw() -> None:
    """32 A, 415 V three-phase, rated for 100 %: sqrt(3) x 415 x 32 x 0.95 = 21.85 kW."""
    rule = mf.rules_named("minimal-32a-100pct", "PduOverPower")[0]
    assert mf.threshold(rule) == pytest.approx(3 ** 0.5 * 415 * 32 * 0.95, abs=0.005)
    # the same figure per line: 3 lines x 415 / sqrt(3) = 239.6 V line-to-neutral x 32 A x PF
    assert mf.threshold(rule) == pytest.approx(3 * 415 / 3 ** 0.5 * 32 * 0.95, abs=0.005)
    said = rule["annotations"]["threshold"]
    assert said.startswith("21.85 kW = sqrt(3) x 415 V line-to-line x 32 A x PF 0.95")
    assert "3 lines x 239.6 V line-to-neutral x 32 A" in said and "100 %" in said
    lines = mf.rules_named("minimal-32a-100pct", "PduCircuitLineOverCurrent")[0]
    inlet = mf.rules_named("minimal-32a-100pct", "PduInletLineOverCurrent")[0]
    assert mf.threshold(lines) == mf.threshold(inlet) == 32  # each line at its 32 A, 100 %


def test_superpod_63a_dgx_pdus_at_43_kw() -> None:
    """63 A, 415 V three-phase, rated for 100 %: sqrt(3) x 415 x 63 x 0.95 = 43.02 kW (the
    example's DGX PDUs; 32 A ones carry a 33.6 A line with a PDU down, tests/test_power_flow)."""
    rule = next(r for r in mf.rules_named("dgx-h100-superpod-4su", "PduOverPower")
                if r["labels"]["pdu_profile"] == "dgx-3pdu")
    assert mf.threshold(rule) == pytest.approx(3 ** 0.5 * 415 * 63 * 0.95, abs=0.005)
    assert "43.02 kW" in rule["annotations"]["threshold"]


def test_seed_pdus_single_phase_208v_and_four_32a_circuits_at_80_percent() -> None:
    rules = {r["labels"]["pdu_profile"]: mf.threshold(r)
             for r in mf.rules_named("seed-64gpu-h100", "PduOverPower")}
    assert rules["mgmt-208v"] == pytest.approx(208 * 30 * 0.95 * 0.8, abs=0.005)
    assert rules["seed-415v"] == pytest.approx(4 * 3 ** 0.5 * 415 * 32 * 0.95 * 0.8, abs=0.005)


def test_rack_budget_rules_cover_each_budgeted_rack_once(example: str) -> None:
    racks = mf.racks(example)
    budgets = {r: v["max_power_kw"] * 1000 for r, v in racks.items() if v["max_power_kw"]}
    covered: dict[str, float] = {}
    for rule in mf.rules_named(example, "RackOverPowerBudget"):
        for rack in mf.racks_selected(rule["expr"], racks):
            assert rack not in covered, rack
            covered[rack] = mf.threshold(rule)
    assert covered == budgets


def test_redundancy_rules_use_the_capacity_left_after_one_pdu(example: str) -> None:
    racks = mf.racks(example)
    expected = {r: mf.surviving_w(example, v["pdu"]) for r, v in racks.items()
                if mf.SIDES[mf.profile(example, v["pdu"])["layout"]] > 1}
    covered = {rack: mf.threshold(rule)
               for rule in mf.rules_named(example, "RackPowerRedundancyLost")
               for rack in mf.racks_selected(rule["expr"], racks)}
    assert covered.keys() == expected.keys()
    for rack, watts in expected.items():
        assert covered[rack] == pytest.approx(watts, abs=0.005)


def test_row_budgets(example: str) -> None:
    expected = {row["name"]: row["max_power_kw"] * 1000 for row in mf.spec(example)["rows"]
                if row.get("max_power_kw")}
    found = {re.search(r'row="([^"]+)"', r["expr"]).group(1): mf.threshold(r)  # type: ignore[union-attr]
             for r in mf.rules_named(example, "RowOverPowerBudget")}
    assert found == expected


def test_expected_gpus_per_node_type(example: str) -> None:
    plan = mf.build_of(example).plan
    expected = {t: mf.gpu_count(example, t) for t in {n.node_type for n in plan.nodes}
                if mf.gpu_count(example, t) > 0}
    found = {r["labels"]["node_type"]: mf.threshold(r)
             for r in mf.rules_named(example, "NodeMissingGpus")}
    assert found == expected
    assert mf.rules_named("gb200-nvl72", "NodeMissingGpus")[0]["expr"].endswith("< 4")


def test_fabric_switch_counts_as_built() -> None:
    plan = mf.build_of("dgx-h100-superpod-4su").plan
    found = {r["labels"]["fabric"]: mf.threshold(r)
             for r in mf.rules_named("dgx-h100-superpod-4su", "IbFabricMissingSwitches")}
    graph_switches = {f: sum(1 for _, d in plan.fabric_wiring[f].graph.nodes(data=True)
                             if d.get("kind") == "switch") for f in ("compute",)}
    assert found == graph_switches == {"compute": 48}  # the Ethernet storage fabric: no rule
    assert plan.fabrics["storage"].technology == "ethernet"


def test_every_rule_says_what_its_threshold_is_and_where_it_comes_from(example: str) -> None:
    found = mf.rules(example)
    assert found
    for rule in found:
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["threshold"].strip(), rule["alert"]
        assert rule["annotations"]["source"].strip(), rule["alert"]


def test_dcgm_counters_collect_every_field_the_rules_read(example: str) -> None:
    files = mf.monitoring_files(example)
    # as dcgm-exporter reads it: Go's encoding/csv with '#' comments, three fields a record
    lines = [line for line in files["dcgm-counters.csv"].splitlines() if not line.startswith("#")]
    records = list(csv.reader(io.StringIO("\n".join(lines))))
    assert all(len(r) == 3 and r[1] in ("gauge", "counter") for r in records)
    collected = {r[0] for r in records}
    used = set(re.findall(r"DCGM_FI_[A-Z0-9_]+", " ".join(r["expr"] for r in mf.rules(example))))
    assert used and used <= collected


def test_snmp_module_walks_every_pdu_metric_the_rules_read(example: str) -> None:
    files = mf.monitoring_files(example)
    module = YAML(typ="safe", pure=True).load(files["snmp.yml"])["sentry4"]
    metrics = {m["name"]: m for m in module["metrics"]}
    used = set(re.findall(r"\bst4[A-Za-z]+", " ".join(r["expr"] for r in mf.rules(example))))
    assert used and used <= set(metrics)
    for metric in metrics.values():  # each column it reads is walked
        assert any(metric["oid"].startswith(walk) for walk in module["walk"])
    # the Sentry4-MIB columns (Sentry4.mib): st4InputCordActivePower, st4LineCurrent,
    # st4BranchCurrent
    assert metrics["st4LineCurrent"]["oid"] == "1.3.6.1.4.1.1718.4.1.4.3.1.3"
    assert metrics["st4BranchCurrent"]["oid"] == "1.3.6.1.4.1.1718.4.1.7.3.1.3"
    assert metrics["st4InputCordActivePower"]["oid"] == "1.3.6.1.4.1.1718.4.1.3.3.1.3"


def test_prometheus_config_names_each_target_file_and_rule_file(example: str) -> None:
    files = mf.monitoring_files(example)
    config = YAML(typ="safe", pure=True).load(files["prometheus.yml"])
    listed = {f for job in config["scrape_configs"] for sd in job["file_sd_configs"]
              for f in sd["files"]}
    assert listed == {p for p in files if p.startswith("targets/")}
    assert set(config["rule_files"]) == {p for p in files if p.startswith("rules/")}
    assert config["global"]["external_labels"] == {"cluster": mf.spec(example)["cluster"]["name"]}


def test_names_are_escaped_in_promql() -> None:
    assert one_of(["r.1", "r10", "r2"]) == ("=~", r"r2|r10|r\.1")
    assert string('a"b\\c') == r'"a\"b\\c"'
    assert selector("up", job="x", rack=("=~", "a|b")) == 'up{job="x",rack=~"a|b"}'
    assert number(25.6) == "25.6" and number(21851.552) == "21851.55" and number(45000.0) == "45000"
