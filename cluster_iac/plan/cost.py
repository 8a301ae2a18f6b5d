"""What the cluster costs an hour, per GPU-hour and per useful GPU-hour.

capital = sum over bill-of-materials items of quantity x price (cost.prices; none is built
in, so an unpriced item makes the capital a lower bound); per hour:

    capital / (amortization_years x 8,760 h) + IT kW x PUE x price_per_kwh + opex_per_year / 8,760

IT kW is the plan's rack loads (each device at its maximum draw: an upper bound on the bill).
Per GPU-hour: that / the compute GPUs. Per useful GPU-hour of a partition: per GPU-hour x the
partition's GPUs / (its largest job's GPUs x the job's goodput), so hot spares and lost time
both raise it. With any item unpriced, or no price per kWh, each figure is a lower bound, and
report.md prints it "at least".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from cluster_iac.base.runs import runs
from cluster_iac.plan.goodput import Goodput
from cluster_iac.plan.model import Plan
from cluster_iac.plan.power import rack_loads_w

HOURS_A_YEAR = 8760


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Item:
    """One line of the bill of materials with its price (None: not priced)."""

    key: str  # the cost.prices key
    kind: str
    qty: int
    price: float | None

    @property
    def total(self) -> float | None:
        return None if self.price is None else self.qty * self.price


@dataclass(frozen=True, eq=False, repr=False)
class Costs:
    """Capital, its hourly share, power, running costs and the cost of a GPU-hour."""

    currency: str
    items: tuple[Item, ...]
    capital: float  # of the priced items
    complete: bool  # every item priced and the power too: else every cost is a lower bound
    years: float
    capital_per_h: float
    facility_kw: float  # IT load x PUE
    power_per_h: float | None  # None: no price_per_kwh
    opex_per_h: float
    gpus: int

    @property
    def per_h(self) -> float:
        return self.capital_per_h + (self.power_per_h or 0) + self.opex_per_h

    @property
    def per_gpu_h(self) -> float | None:
        return self.per_h / self.gpus if self.gpus else None


def bill_items(plan: Plan) -> dict[str, tuple[str, int]]:
    """cost.prices key -> (what it is, quantity): servers by platform, switches by model, PDUs by
    profile, power shelves by model, cables by network ('cable.<network>')."""
    items: dict[str, tuple[str, int]] = {}
    for name, n in Counter(node.node_type for node in plan.nodes).items():
        key = plan.node_types[name].platform
        items[key] = ("server", items.get(key, ("", 0))[1] + n)
    for model, n in Counter(s.model for s in plan.switches).items():
        items[model] = ("switch", n)
    for (kind, model), n in Counter((d.kind, d.model) for d in plan.power_devices).items():
        items[model] = ("rack PDU" if kind == "pdu" else kind, n)
    table = plan.links
    by_network: Counter[str] = Counter()
    for start, stop in runs(table.network, table.tier):  # a tier's cables lie together
        by_network[table.network[start]] += stop - start
    for network, n in by_network.items():
        items[f"cable.{network}"] = ("cable and transceivers", n)
    return dict(sorted(items.items()))


def costs(plan: Plan) -> Costs | None:
    """The cluster's costs, or None when the spec gives no price at all."""
    cost = plan.settings.cost
    if not cost.prices and cost.price_per_kwh is None and not cost.opex_per_year:
        return None
    items = tuple(Item(key, kind, qty, cost.prices.get(key))
                  for key, (kind, qty) in bill_items(plan).items())
    capital = sum(i.total for i in items if i.total is not None)
    facility_kw = sum(rack_loads_w(plan).values()) / 1000 * plan.settings.power.pue
    power = facility_kw * cost.price_per_kwh if cost.price_per_kwh is not None else None
    return Costs(currency=cost.currency, items=items, capital=capital,
                 complete=(all(i.price is not None for i in items)
                           and cost.price_per_kwh is not None),
                 years=cost.amortization_years,
                 capital_per_h=capital / (cost.amortization_years * HOURS_A_YEAR),
                 facility_kw=facility_kw, power_per_h=power,
                 opex_per_h=cost.opex_per_year / HOURS_A_YEAR, gpus=plan.gpu_count)


def per_useful_gpu_h(c: Costs, g: Goodput) -> float | None:
    """Cost of one useful GPU-hour in a partition: its GPUs' cost over its job's useful GPUs."""
    if c.per_gpu_h is None or not g.useful or not g.job.gpus:
        return None
    return c.per_gpu_h * g.job.partition_gpus / (g.job.gpus * g.useful)
