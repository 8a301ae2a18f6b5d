"""The validator: a registry of named checks over the plan."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from cluster_iac.errors import Diagnostic, Severity
from cluster_iac.plan import Plan

Check = Callable[[Plan], Iterable[Diagnostic]]

# name -> check; each yields findings with a stable code.
CHECKS: dict[str, Check] = {}


def run_checks(plan: Plan, *, strict: bool = False) -> list[Diagnostic]:
    """Every finding of every check, with the policy's level overrides and --strict applied."""
    levels = plan.settings.policy.levels
    findings: list[Diagnostic] = []
    for check in CHECKS.values():
        for finding in check(plan):
            level = levels.get(finding.code)
            if level == "ignore":
                continue
            if level is not None:
                finding = replace(finding, severity=Severity(level))
            if strict and finding.severity is Severity.WARNING:
                finding = replace(finding, severity=Severity.ERROR)
            findings.append(finding)
    return findings
