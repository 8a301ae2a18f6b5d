"""Monitoring: Prometheus scrape config, file_sd targets, alert rules from the plan's figures,
and the exporter configurations the rules read (snmp_exporter's PDU module, dcgm-exporter's
counters)."""

from __future__ import annotations

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.monitoring import exporters, fabric_rules, gpu_rules, power_rules, scrape
from cluster_iac.emit.monitoring.promql import AlertRule, group, selector
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan

DIR = "monitoring"
HEADER = (GENERATED_BY,)


def render(plan: Plan) -> dict[str, str]:
    jobs = scrape.jobs(plan)
    if not jobs:
        return {}
    rules = rule_files(plan, list(jobs))
    files = {f"{DIR}/{path}": yaml_text({"groups": [group(n, r) for n, r in groups]}, HEADER)
             for path, groups in rules.items()}
    config = scrape.prometheus_config(plan, list(jobs), list(rules))
    files[f"{DIR}/prometheus.yml"] = yaml_text(config, HEADER)
    labels = scrape.label_texts(jobs.values())  # each host's labels written once
    for job, found in jobs.items():
        files[f"{DIR}/{scrape.target_file(job)}"] = scrape.file_sd(found, labels)
    if "pdu" in jobs:
        files[f"{DIR}/snmp.yml"] = yaml_text(exporters.snmp_config(), HEADER)
    if "dcgm" in jobs:
        files[f"{DIR}/dcgm-counters.csv"] = exporters.dcgm_counters()
    return dict(sorted(files.items()))


def rule_files(plan: Plan, jobs: list[str]) -> dict[str, list[tuple[str, list[AlertRule]]]]:
    """Rule file (relative to prometheus.yml) -> its groups; files without rules left out."""
    found = {"rules/targets.yml": [("scrape", target_rules(jobs))],
             "rules/power.yml": power_rules.rule_groups(plan),
             "rules/gpu.yml": gpu_rules.rule_groups(plan),
             "rules/fabric.yml": fabric_rules.rule_groups(plan)}
    return {path: groups for path, groups in found.items() if groups}


def target_rules(jobs: list[str]) -> list[AlertRule]:
    """An exporter Prometheus cannot scrape: every other alert of its target is blind."""
    return [AlertRule(
        "TargetDown", f"{selector('up', job=job)} == 0", "warning",
        f"{{{{ $labels.instance }}}} ({job}) has not answered a scrape for 5 minutes",
        "0: the scrape failed ('up' is 1 when it succeeds)", "Prometheus 'up' series", "5m",
        {"job": job})
        for job in jobs]
