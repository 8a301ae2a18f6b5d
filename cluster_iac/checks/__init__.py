"""The validator: a registry of named checks over the plan.

Each check is registered with ``@check("family.name")`` in one module per family
(power, cooling, fabric, storage, consistency) and yields Diagnostics with a stable
code, the measured value and the limit in the message, and the spec path that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.plan import Plan

Check = Callable[[Plan], Iterable[Diagnostic]]

# check name -> function; filled by the @check decorator when the family modules import.
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    """Register a check under ``name`` (e.g. 'power.breaker_load')."""

    def register(func: Check) -> Check:
        if name in CHECKS:
            raise ValueError(f"check {name!r} registered twice")
        CHECKS[name] = func
        return func

    return register


def run_checks(plan: Plan, *, strict: bool = False) -> list[Diagnostic]:
    """Every finding of every check, with the policy's level overrides and --strict applied."""
    _load_families()
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


def _load_families() -> None:
    """Import the check modules so their @check decorators run (once)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
