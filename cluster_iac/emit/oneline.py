"""Power one-line of a sheet of racks: row panels, feeds, PDUs, racks.

The chain is the power pass's (plan.power_feeds, plan/power_tables.py): one panel per row and
side, a breaker and feed from it to each rack's PDU on that side, the rack's devices on its
PDUs. Each feed is labelled with its worst-case line current over normal operation and every
single failure (PowerFeed.worst_a, the busiest line) against its breaker's continuous limit
(PowerFeed.limit_a: the rating x 100 % or policy.breaker_continuous_percent, NEC 210.20(A));
a feed over it is drawn red.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from itertools import chain

from cluster_iac.formats import svg
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Rack
from cluster_iac.plan.power import rack_loads_w
from cluster_iac.plan.power_tables import PowerFeed

MARGIN = 10
PANELS = 150  # the panels' names, left of their buses
SIDE = 74  # one PDU's column
BUS = 20  # between two panels' buses
PDU_H = 44
RACK_H = 32


STYLE = (".b { font-weight: bold; } .pdu { font-size: 8px; font-weight: bold; } "
         ".a { font-size: 9px; } .over { font-size: 9px; fill: #c62828; font-weight: bold; }")


def feeds_by_rack(plan: Plan) -> dict[str, list[PowerFeed]]:
    """Each rack's feeds, in side order."""
    by_rack: dict[str, list[PowerFeed]] = defaultdict(list)
    for feed in plan.power_feeds:
        by_rack[feed.rack].append(feed)
    return by_rack


def one_line(plan: Plan, racks: Sequence[Rack], title: str,
             by_rack: dict[str, list[PowerFeed]],
             stamps: svg.Stamps | None = None) -> svg.Drawing:
    """The SVG of these racks' power chain (one row's racks, in order). Each rack is a
    stamp (``stamps`` the render's, shared by its sheets): what it draws depends on its
    place and figures (the key) and on the names of the rack, its feeds, their PDUs and
    panels, and each feed's worst case."""
    loads = rack_loads_w(plan)
    feeds = [feed for rack in racks for feed in by_rack.get(rack.name, ())]
    panels = sorted({(feed.side, feed.panel) for feed in feeds})
    bus_y = {panel: MARGIN + 40 + index * BUS for index, (_side, panel) in enumerate(panels)}
    pdu_y = MARGIN + 40 + len(panels) * BUS + 24
    columns = [max(1, len(by_rack.get(rack.name, ()))) * SIDE + 16 for rack in racks]
    width = MARGIN * 2 + PANELS + sum(columns)
    height = pdu_y + PDU_H + 8 + RACK_H + MARGIN
    root = svg.drawing(width, height, title, STYLE)
    root.text(MARGIN, MARGIN + 14, title, size=12, bold=True)
    root.text(MARGIN + 420, MARGIN + 14, "each PDU: its feed's worst-case line current / "
             "the breaker's continuous limit (A); red when over", css="a")
    for side, panel in panels:
        y = bus_y[panel]
        root.text(MARGIN, y + 4, f"{panel} (side {side})", bold=True)
        root.line(MARGIN + PANELS - 10, y, width - MARGIN, y, stroke="#37474f", width=3)
    x = MARGIN + PANELS
    for rack, column in zip(racks, columns, strict=True):
        own = by_rack.get(rack.name, ())
        worst = [_worst(feed) for feed in own]
        kw = loads.get(rack.name, 0.0) / 1000
        key = (x, column, pdu_y, rack.row, kw, *(
            (bus_y[feed.panel], feed.amperage_a, feed.limit_a, feed.wiring, feed.voltage_v,
             amps, line) for feed, (amps, line, _case) in zip(own, worst, strict=True)))
        names = [rack.name, *chain.from_iterable((feed.name, feed.pdu, feed.panel, case)
                                                 for feed, (_, _, case) in zip(own, worst,
                                                                               strict=True))]
        root.stamp({} if stamps is None else stamps, key, names,
                   partial(_rack, root, rack, own, worst, (x, column), bus_y, pdu_y, kw))
        x += column
    return root


def _rack(root: svg.Drawing, rack: Rack, feeds: Sequence[PowerFeed],
          worst: Sequence[tuple[float, str, str]], place: tuple[int, int],
          bus_y: dict[str, int], pdu_y: int, kw: float, names: Sequence[str]) -> None:
    """A rack's column: its feeds from their buses to its PDUs, and the rack under them;
    ``names`` the rack's, then each feed's, its PDU's, its panel's and its worst case."""
    x, column = place
    name = names[0]
    with root.group({"rack": name}):
        for index, (feed, (amps, line, _)) in enumerate(zip(feeds, worst, strict=True)):
            own, pdu, panel, case = names[1 + 4 * index:5 + 4 * index]
            _feed(root, feed._replace(name=own, pdu=pdu, panel=panel), x + index * SIDE,
                  bus_y[feed.panel], pdu_y, (amps, line, case))
        top = pdu_y + PDU_H + 8  # the rack under its PDUs
        root.rect(x, top, column - 16, RACK_H, "#eceff1", {"rack-box": name},
                  tip=f"{name}: row {rack.row}")
        root.text(x + 4, top + 13, name, css="b")
        root.text(x + 4, top + 26, f"{kw:.2f} kW")


def _worst(feed: PowerFeed) -> tuple[float, str, str]:
    """The feed's worst line current, that line and its case ('' without lines)."""
    worst = max(feed.worst_a, default=0.0)
    if not feed.worst_a:
        return worst, "", ""
    at = feed.worst_a.index(worst)
    return worst, feed.lines[at], feed.worst_case[at]


def _feed(group: svg.Drawing, feed: PowerFeed, x: int, bus: int, top: int,
          worst_line: tuple[float, str, str]) -> None:
    worst, line, case = worst_line
    over = worst > feed.limit_a
    tone = svg.OVER if over else "#455a64"
    middle = x + (SIDE - 6) // 2
    group.line(middle, bus, middle, top, stroke=tone, width=2)
    group.rect(x, top, SIDE - 6, PDU_H, svg.COLOURS["pdu"],
               {"feed": feed.name, "pdu": feed.pdu, "worst-a": f"{worst:.1f}",
                "limit-a": f"{feed.limit_a:.1f}", "breaker-a": f"{feed.amperage_a:g}"},
               tip=f"{feed.name} from {feed.panel}: {feed.amperage_a:g} A breaker, "
                   f"{feed.wiring} {feed.voltage_v:g} V; worst {worst:.1f} A on {line} "
                   f"({case}) against {feed.limit_a:.1f} A continuous")
    group.text(x + 3, top + 14, feed.pdu, css="pdu")
    group.text(x + 3, top + 34, f"{worst:.1f}/{feed.limit_a:.1f} A",
             css="over" if over else "a")
