"""Helpers for the validator tests: run the checks on a spec variant and pick findings."""

from __future__ import annotations

from typing import Any

from cluster_iac.base.errors import Diagnostic
from cluster_iac.checks import run_checks
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data


def findings_of(data: dict[str, Any] | Plan, code: str | None = None) -> list[Diagnostic]:
    """The findings of a spec variant (or of a plan), optionally only one code."""
    plan = data if isinstance(data, Plan) else compile_data(data)
    found = run_checks(plan)
    return [f for f in found if code is None or f.code == code]


def errors_of(data: dict[str, Any] | Plan) -> list[Diagnostic]:
    return [f for f in findings_of(data) if f.is_error]


def messages(data: dict[str, Any] | Plan, code: str) -> list[str]:
    return [f.message for f in findings_of(data, code)]
