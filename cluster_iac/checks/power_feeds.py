"""Feeds assumed rather than given: a PDU profile without inlet_a has its feeds taken as sized
for all its circuits (breaker_a x circuits) and not checked on their own (POWER-FEED needs the
rating). The facility's feed is a figure the spec must give, so each such profile is a
warning naming the assumed rating, the worst line current its feeds carry, and the rating
that would carry it."""

from __future__ import annotations

import math
from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.power_text import case_text
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import NORMAL, PowerFeed


def assumed_feeds(plan: Plan) -> dict[str, list[PowerFeed]]:
    """PDU profile -> its feeds, for the profiles that state no inlet_a (plan order)."""
    found: dict[str, list[PowerFeed]] = {}
    for feed in plan.power_feeds:
        if not feed.checked:
            found.setdefault(str(feed.spec_path[2]), []).append(feed)
    return found


def worst_line(feeds: list[PowerFeed]) -> tuple[PowerFeed, int]:
    """The feed and line index of the largest line current over every case (the first of
    equals, in plan order)."""
    best = feeds[0], 0
    for feed in feeds:
        for n, amps in enumerate(feed.worst_a):
            if amps > best[0].worst_a[best[1]] + 1e-9:
                best = feed, n
    return best


def inlet_needed_a(amps: float, percent: float) -> int:
    """The smallest whole inlet rating whose continuous current carries ``amps``."""
    return max(1, math.ceil(amps * 100 / percent - 1e-9))


@check("power.feed_assumed")
def feed_assumed(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (POWER-FEED-ASSUMED) per PDU profile that racks use without inlet_a: the
    feed's rating is the tool's assumption (breaker_a x circuits), not the facility's."""
    by_profile = assumed_feeds(plan)
    all_feeds = {f.pdu: f for f in plan.power_feeds}
    for profile in sorted(by_profile):
        feeds = by_profile[profile]
        feed, n = worst_line(feeds)
        amps = feed.worst_a[n]
        case = feed.worst_case[n]
        percent = 100 * feed.limit_a / feed.amperage_a
        needed = inlet_needed_a(amps, percent)
        when = "in normal operation" if case == NORMAL else f"with {case_text(case, all_feeds)}"
        p = plan.settings.power.pdu_profiles[profile]
        yield Diagnostic(
            "POWER-FEED-ASSUMED",
            f"PDU profile {profile} states no inlet_a, so its {len(feeds)} feed(s) are assumed "
            f"rated {feed.amperage_a:g} A (breaker_a {p.breaker_a:g} A x {p.circuits} "
            f"circuit(s)) and not checked; the worst case is {amps:.1f} A per phase, rack "
            f"{feed.rack} feed {feed.name} line {feed.lines[n]} {when}, which needs an inlet of "
            f"at least {needed} A ({amps:.1f} A / {percent:g} %)",
            ("power", "pdu_profiles", profile), Severity.WARNING,
            hint=f"declare the facility feed's rating, the PDU inlet and its panel breaker "
                 f"(power.pdu_profiles.{profile}.inlet_a: {max(needed, int(feed.amperage_a))}"
                 f" if the feed is that large), so POWER-FEED checks it; or accept the "
                 f"assumption: policy: {{levels: {{POWER-FEED-ASSUMED: info}}}}",
            details={"measured": round(amps, 1), "limit": feed.amperage_a, "unit": "A",
                     "needed": needed, "feeds": len(feeds)})
