"""The validator: named checks over the plan, one module per family.

Each family module registers its checks with ``@check("family.name")`` (checks/registry.py);
FAMILIES below is the table of those modules, so a new family is one module and one line.
A check yields Diagnostics with a stable code, the measured value and the limit in the
message, and the spec path that caused it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.checks import (
    consistency,
    cooling,
    cooling_loops,
    fabric,
    fabric_cost,
    fabric_growth,
    fabric_hosts,
    facility,
    goodput,
    lustre,
    nccl,
    power,
    power_cap,
    power_feeds,
    power_psus,
    resilience,
    scheduling,
    slurm,
    storage,
)
from cluster_iac.checks.registry import CHECKS, Check, check
from cluster_iac.plan import Plan

__all__ = ["CHECKS", "FAMILIES", "Check", "check", "known_codes", "run_checks"]

# Every family of checks; importing each registered its checks in CHECKS.
FAMILIES: tuple[ModuleType, ...] = (
    consistency, cooling, cooling_loops, fabric, fabric_cost, fabric_growth, fabric_hosts,
    facility, goodput, lustre, nccl, power, power_cap, power_feeds, power_psus, resilience,
    scheduling, slurm, storage)


def run_checks(plan: Plan, *, strict: bool = False) -> list[Diagnostic]:
    """Every finding of every check, with the policy's level overrides and --strict applied."""
    levels = plan.settings.policy.levels
    findings = _unknown_levels(levels)
    for name in sorted(CHECKS):
        for finding in CHECKS[name](plan):
            level = levels.get(finding.code)
            if level == "ignore":
                continue
            if level is not None:
                finding = replace(finding, severity=Severity(level))
            if strict and finding.severity is Severity.WARNING:
                finding = replace(finding, severity=Severity.ERROR)
            findings.append(finding)
    return findings


@lru_cache(maxsize=1)
def known_codes() -> frozenset[str]:
    """Every code a check can report: the code literals of the family modules (a check's
    code is always written out, so that grep finds who reports it)."""
    literal = re.compile(r'"([A-Z]{3,}(?:-[A-Z0-9]+)+)"')
    return frozenset(code for module in sorted(Path(__file__).parent.glob("*.py"))
                     if module.name != "__init__.py"
                     for code in literal.findall(module.read_text(encoding="utf-8")))


def _unknown_levels(levels: dict[str, str]) -> list[Diagnostic]:
    """policy.levels naming a code no check reports: an error, or the override does nothing."""
    if not levels:
        return []  # known_codes reads every check module's source: only when it is asked
    known = known_codes()
    return [Diagnostic("SPEC-UNKNOWN-CODE", f"policy.levels names '{code}', which no check "
                       "reports", ("policy", "levels", code),
                       hint=did_you_mean(code, known) or "the codes are listed in the README")
            for code in sorted(levels) if code not in known]
