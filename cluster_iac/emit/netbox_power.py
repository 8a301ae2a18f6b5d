"""NetBox's power chain above the PDUs: panels, feeds, and the cables from feed to PDU inlet.

Rows of plan.power_feeds (one feed per PDU, from its row's panel on that side). Columns are
PowerPanelImportForm's and PowerFeedImportForm's (dcim/forms/bulk_import.py, NetBox 4.x);
choices from dcim/choices.py: PowerFeedStatusChoices 'planned', PowerFeedTypeChoices
'primary'/'redundant', PowerFeedSupplyChoices 'ac', PowerFeedPhaseChoices 'single-phase'/
'three-phase'. The feed cables use CableImportForm's side_a_power_panel (a feed is found by its
panel and name), added in NetBox v4.5.8 (issue #21783; earlier releases cannot import a cable
to a power feed, so it is a file of its own), and side_a_site/side_b_site (v4.3.5, #19840).
"""

from __future__ import annotations

from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PowerFeed

STATUS = "planned"
PANEL_COLUMNS = ("site", "location", "name")
FEED_COLUMNS = ("site", "power_panel", "location", "rack", "name", "status", "type", "supply",
                "phase", "voltage", "amperage", "max_utilization")
FEED_CABLE_COLUMNS = ("side_a_site", "side_a_power_panel", "side_a_type", "side_a_name",
                      "side_b_site", "side_b_device", "side_b_type", "side_b_name", "type",
                      "status", "label")


def location_name(row: str) -> str:
    """The NetBox location of a row of racks."""
    return f"row-{row}"


def panels(plan: Plan) -> list[list[str]]:
    """One power panel per row and side, in the row's location."""
    site = plan.cluster.site
    found = {(f.panel, f.row) for f in plan.power_feeds}
    return [[site, location_name(row), panel] for panel, row in sorted(found)]


def feeds(plan: Plan) -> list[list[str]]:
    """Each feed with its panel, rack and rating. NetBox stores voltage, amperage and
    max_utilization as whole numbers; the utilisation is the continuous limit over the
    breaker rating (100 on a 100 %-rated breaker, the policy's percentage otherwise)."""
    site = plan.cluster.site
    return [[site, f.panel, location_name(f.row), f.rack, f.name, STATUS,
             "primary" if f.side == "A" else "redundant", "ac",
             "single-phase" if f.phases == 1 else "three-phase", str(round(f.voltage_v)),
             str(round(f.amperage_a)), str(_utilization(f))]
            for f in sorted(plan.power_feeds, key=lambda f: f.name)]


def _utilization(f: PowerFeed) -> int:
    return min(100, max(1, round(100 * f.limit_a / f.amperage_a)))


def feed_cables(plan: Plan) -> list[list[str]]:
    """The whip from each feed to its PDU's inlet (power port)."""
    site = plan.cluster.site
    return [[site, f.panel, "dcim.powerfeed", f.name, site, f.pdu, "dcim.powerport", f.inlet,
             "power", STATUS, f.name] for f in sorted(plan.power_feeds, key=lambda f: f.name)]
