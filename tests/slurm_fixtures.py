"""Examples as plain data, re-targeted to another Slurm release or changed, then compiled."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from ruamel.yaml import YAML

from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.slurm_releases import slurm_release
from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.conftest import ROOT
from tests.facility_fixtures import compile_data


@cache
def _example_data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(ROOT / "examples" / f"{name}.yaml")
    return data


def example_data(name: str, slurm_version: str | None = None) -> dict[str, Any]:
    """A fresh copy of examples/<name>.yaml's data, optionally aimed at another release.

    Aimed at a release without switch/nvidia_imex (before 24.05), an example with rack-scale
    NVLink domains keeps its jobs' NVLink use within one node (slurm.multi_node_nvlink: false),
    as its spec then must: the tool refuses it otherwise (SLURM-IMEX, tests/test_imex.py)."""
    data = copy.deepcopy(_example_data(name))
    if slurm_version is not None:
        data["cluster"]["slurm_version"] = slurm_version
        if not slurm_release(slurm_version).nvidia_imex and _rack_nvlink(data):
            data["slurm"]["multi_node_nvlink"] = False
    return data


def _rack_nvlink(data: dict[str, Any]) -> bool:
    platforms = builtin_catalog().platforms
    return any(platforms[nt["platform"]].nvlink_domain == "rack"
               for nt in data["node_types"].values() if nt["platform"] in platforms)


def retargeted(name: str, slurm_version: str) -> tuple[Plan, dict[str, str]]:
    """The example compiled for ``slurm_version``, and its rendered files."""
    plan = compile_data(example_data(name, slurm_version))
    return plan, render_all(plan)
