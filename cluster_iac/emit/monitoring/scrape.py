"""prometheus.yml: one scrape job per exporter, its targets in a file_sd file, and the rules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring_ascii  # json's C one
from operator import attrgetter

from cluster_iac.emit.monitoring import targets
from cluster_iac.emit.monitoring.exporters import SNMP_MODULE
from cluster_iac.emit.monitoring.targets import Target
from cluster_iac.formats.json import json_lines
from cluster_iac.plan import Plan

SCRAPE_INTERVAL = "30s"
# The PDUs' SNMP agents are slow and their readings change slowly (Sentry4 polls each second).
PDU_INTERVAL, PDU_TIMEOUT = "60s", "30s"


def jobs(plan: Plan) -> dict[str, list[Target]]:
    """Job name -> its targets; jobs without targets are left out."""
    hosts = targets.HostLabels(plan)
    found = {"node": targets.node_targets(plan, hosts), "dcgm": targets.dcgm_targets(plan, hosts),
             "pdu": targets.pdu_targets(plan), "infiniband": targets.fabric_targets(plan, hosts)}
    return {job: found_targets for job, found_targets in found.items() if found_targets}


def target_file(job: str) -> str:
    """A job's file_sd file, relative to prometheus.yml (Prometheus resolves it from there)."""
    return f"targets/{job}.json"


def prometheus_config(plan: Plan, job_names: list[str],
                      rule_files: list[str]) -> dict[str, object]:
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL,
                   "external_labels": {"cluster": plan.cluster.name}},
        "rule_files": rule_files,
        "scrape_configs": [_scrape_config(plan, job) for job in job_names],
    }


def _scrape_config(plan: Plan, job: str) -> dict[str, object]:
    config: dict[str, object] = {"job_name": job}
    if job == "pdu":
        config.update(scrape_interval=PDU_INTERVAL, scrape_timeout=PDU_TIMEOUT,
                      metrics_path="/snmp", params={"module": [SNMP_MODULE]})
    if job == "infiniband":
        interval, timeout = targets.fabric_scrape_seconds(plan)
        config.update(scrape_interval=f"{interval}s", scrape_timeout=f"{timeout}s")
    config["file_sd_configs"] = [{"files": [target_file(job)]}]
    if job == "pdu":
        # The PDU's address becomes the SNMP exporter's ?target=; Prometheus polls the exporter.
        config["relabel_configs"] = [
            {"source_labels": ["__address__"], "target_label": "__param_target"},
            {"target_label": "__address__", "replacement": targets.SNMP_EXPORTER_ADDRESS},
        ]
    return config


def file_sd(found: list[Target], labels_json: Mapping[int, str]) -> str:
    """file_sd's JSON: one group per target (every target has labels of its own), one per line
    (a target's change is a one-line diff). ``labels_json``: id of a labels dict -> its JSON
    (label_texts of every job's targets, made once): a line is then json.dumps' text of the
    group ({"targets": [address], "labels": labels}) made by one format, not a group dict."""
    addresses = map(encode_basestring_ascii, map(attrgetter("address"), found))
    labels = map(labels_json.__getitem__, map(id, map(attrgetter("labels"), found)))
    groups = map('{{"targets": [{}], "labels": {}}}'.format, addresses, labels)
    return "[\n" + ",\n".join(groups) + "\n]\n"


def label_texts(jobs: Iterable[list[Target]]) -> dict[int, str]:
    """id of each distinct labels dict of the targets -> json.dumps' text of it, all made
    together (node_exporter's and dcgm-exporter's targets share each host's dict: 12,500 of
    them at 100,000 GPUs, each written once). The dicts must outlive the answer's use."""
    distinct = {id(t.labels): t.labels for found in jobs for t in found}
    return dict(zip(distinct, json_lines(list(distinct.values())), strict=True))
