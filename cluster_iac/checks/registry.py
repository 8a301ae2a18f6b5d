"""The checks' registry: ``@check("family.name")`` puts a check in CHECKS, as each family
module (checks/__init__.py FAMILIES) is imported."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from cluster_iac.base.errors import Diagnostic
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
