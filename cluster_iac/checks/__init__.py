"""The validator: a registry of named checks over the plan.

Each check is registered with ``@check("family.name")`` in one module per family
(power, cooling, fabric, storage, consistency) and yields Diagnostics with a stable
code, the measured value and the limit in the message, and the spec path that caused it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from cluster_iac.errors import Diagnostic, Severity
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
    findings: list[Diagnostic] = []
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


def _load_families() -> None:
    """Import the check modules so their @check decorators run (once)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
