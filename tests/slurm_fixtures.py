"""Examples as plain data, re-targeted to another Slurm release or changed, then compiled."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from ruamel.yaml import YAML

from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.conftest import ROOT
from tests.facility_fixtures import compile_data


@cache
def _example_data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(ROOT / "examples" / f"{name}.yaml")
    return data


def example_data(name: str, slurm_version: str | None = None) -> dict[str, Any]:
    """A fresh copy of examples/<name>.yaml's data, optionally aimed at another release."""
    data = copy.deepcopy(_example_data(name))
    if slurm_version is not None:
        data["cluster"]["slurm_version"] = slurm_version
    return data


def retargeted(name: str, slurm_version: str) -> tuple[Plan, dict[str, str]]:
    """The example compiled for ``slurm_version``, and its rendered files."""
    plan = compile_data(example_data(name, slurm_version))
    return plan, render_all(plan)
