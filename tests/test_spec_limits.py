"""Every number the spec takes has an upper limit (README, 'Limits'), and each limit is a
located SPEC-LIMIT error one step above it and none at it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.compile.plan_partition_limits import max_time_seconds
from cluster_iac.load.loader import load_spec_text
from cluster_iac.plan.durations import DurationError, time_limit_seconds
from cluster_iac.spec.parse import parse_spec

SCHEMA = json.loads((Path(__file__).parents[1] / "schemas" / "cluster.schema.json").read_text())
# Numbers bounded elsewhere, each with where: a duration's bare number is always refused
# (plan/durations.py: it has no unit) and its text is bounded to 100 years; an OST index is
# checked against 0-65535 with its duplicates (checks/lustre.py, LUSTRE-OST-INDEX).
ELSEWHERE = {"HealthCheck.interval", "HealthCheck.tool_timeout", "Preemption.exempt_time",
             "Priority.calc_period", "Priority.decay_half_life", "Priority.max_age",
             "Qos.grace_time", "Qos.max_wall", "Qos.preempt_exempt_time", "Lustre.ost_indices"}


def _numbers(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The integer and number schemas a property's schema holds (unions, lists, maps)."""
    if schema.get("type") in ("integer", "number"):
        return [schema]
    found = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            found += _numbers(sub)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += _numbers(schema[key])
    return found


def _unbounded() -> set[str]:
    models = {**SCHEMA.get("$defs", {}), "ClusterSpec": SCHEMA}
    return {f"{model}.{name}" for model, body in models.items()
            for name, prop in body.get("properties", {}).items()
            for number in _numbers(prop)
            if not {"maximum", "exclusiveMaximum", "enum", "const"} & set(number)}


def test_every_number_has_an_upper_limit() -> None:
    assert _unbounded() == ELSEWHERE


MINIMAL = """cluster: {name: tiny}
node_types: {gpu: {platform: hgx-h100-8gpu}, head: {platform: mgmt-1u}}
node_groups:
  - {name: gpu, node_type: gpu, count: 2, hostname: "gpu##", racks: r01}
  - {name: head, role: controller, node_type: head, count: 1, hostname: "head#", racks: r01}
rows: [{name: a, racks: [{names: r01, pdu: p, FIELD: VALUE}]}]
power: {pdu_profiles: {p: {layout: three, voltage_v: 415, phases: 3, breaker_a: 32}}}
slurm: {partitions: [{name: gpu, node_groups: [gpu]}]}
"""


@pytest.mark.parametrize(("field", "limit"), [("max_power_kw", 10_000),
                                              ("max_weight_kg", 10_000)])
def test_a_limit_holds_at_its_value_and_refuses_one_above(field: str, limit: int) -> None:
    """Inclusive limits: the documented figure itself is accepted."""
    at = MINIMAL.replace("FIELD", field)
    parse_spec(load_spec_text(at.replace("VALUE", str(limit)))[0])
    with pytest.raises(CompileError) as raised:
        parse_spec(load_spec_text(at.replace("VALUE", str(limit + 0.5)))[0])
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "SPEC-LIMIT" and diagnostic.path[-1] == field


@pytest.mark.parametrize(("limit", "seconds"), [
    ("90", 5400), ("90:30", 5430), ("04:00:00", 14400), ("7-00", 604800),
    ("7-12:30", 649800), ("7-00:00:01", 604801), ("INFINITE", None),
    ("36500-00:00:00", 3153600000)])
def test_a_partition_max_time_reads_as_slurm_reads_it(limit: str, seconds: int | None) -> None:
    """Slurm caps no field of MaxTime ('90:30' is 90 minutes 30 seconds; it was read as no
    limit before); 100 years is the longest."""
    assert max_time_seconds(limit) == seconds


@pytest.mark.parametrize("limit", ["36500-00:00:01", "9" * 33, "1-2-3"])
def test_a_partition_max_time_beyond_100_years_or_unreadable_is_refused(limit: str) -> None:
    with pytest.raises(DurationError):
        time_limit_seconds(limit)
