"""Helpers for the facility tests: compile an example with parts of its spec changed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from cluster_iac.compile import compile_plan
from cluster_iac.load.loader import load_spec_file
from cluster_iac.plan import Plan
from cluster_iac.spec.parse import parse_spec

ROOT = Path(__file__).resolve().parent.parent


def example_data(name: str) -> dict[str, Any]:
    """The plain data of examples/<name>.yaml (a fresh copy each call)."""
    data, _ = load_spec_file(ROOT / "examples" / f"{name}.yaml")
    return copy.deepcopy(data)


def compile_data(data: dict[str, Any]) -> Plan:
    """Parse and compile without running the checks (so a variant may fail them)."""
    return compile_plan(parse_spec(data))


def without_lustre(data: dict[str, Any]) -> dict[str, Any]:
    """The seed example as it was before its Lustre servers: no storage rack s01 (whose third
    rack brings management aggregation switches into r02), no MDS/OSS groups, no storage."""
    data["rows"] = [row for row in data["rows"] if row["name"] != "b"]
    data["node_groups"] = [g for g in data["node_groups"]
                           if g.get("role") not in ("lustre_mds", "lustre_oss")]
    data.pop("storage", None)
    data.pop("workload", None)
    for fabric in (data.get("fabric") or {}).values():  # its subnet managers ran on them
        fabric.pop("subnet_manager", None)
    return data
