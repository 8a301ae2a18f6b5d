"""What fails, how a job recovers, and what the cluster costs: the goodput and cost model's inputs.

The built-in failure rates are catalog data (catalog/failure_rates.yaml, each with its source);
this section overrides them, sets the recovery times and hot spares, and gives the prices that
turn the bill of materials into a cost per useful GPU-hour (plan/goodput.py, plan/cost.py).
"""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import Field

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import MAX_NODES, at_most, up_to
from cluster_iac.spec.strings import Name

ComponentClass = Literal["gpu", "hbm", "host", "nic", "link", "switch", "psu", "pdu", "cdu",
                         "software"]
"""The component classes of the failure model (catalog/failure_rates.yaml names each unit)."""

MAX_RATE = 1_000_000
"""Failures per unit per million hours: one an hour per unit, far above any published figure."""
MAX_SECONDS = 31_536_000
"""A year, the longest recovery step accepted."""
MAX_PRICE = 1_000_000_000_000
"""A trillion (currency units) for one item, above any cluster's whole cost."""

Seconds = Annotated[float, up_to(MAX_SECONDS, gt=None, ge=0), at_most(MAX_SECONDS, "seconds")]
Rate = Annotated[float, up_to(MAX_RATE, gt=None, ge=0), at_most(MAX_RATE, "failures per unit "
                                                                         "per million hours")]
Price = Annotated[float, up_to(MAX_PRICE, gt=None, ge=0), at_most(MAX_PRICE, "per item")]


class Reliability(SpecModel):
    """Failure rates (overrides of the built-in ones), recovery times and hot spares."""

    failure_rates: dict[ComponentClass, Rate] = {}
    """Failures that interrupt a job, per unit per million hours, by component class; each
    replaces the built-in figure (catalog/failure_rates.yaml). The unit of each class: gpu
    and hbm per GPU, software per job (once, whatever its size), host and psu per node, nic
    and link per compute-fabric NIC port, switch per switch of the compute fabric and NVLink
    trays, pdu per PDU, cdu per liquid loop."""
    detect_s: Seconds = 600
    """Time from a failure to the job knowing it, s. Default 600: PyTorch's ProcessGroupNCCL
    default timeout (10 minutes since pytorch/pytorch#110947,
    torch.distributed.constants.default_pg_nccl_timeout), after which a hung collective is
    declared failed."""
    drain_s: Seconds = 0
    """Time to drain the failed nodes out of the scheduler and stop the job's other ranks, s.
    Default 0: counted in restart_s, whose published figure covers the whole restore."""
    restart_s: Seconds = 150
    """Time to swap in spares and relaunch the job to its first step, before the checkpoint is
    read, s. Default 150: FlashRecovery's restore of a 4,800-device job (Zhang et al., 2025,
    arXiv 2509.03047), the fast end of what is published."""
    repair_h: Annotated[float, up_to(8760), at_most(8760, "hours")] | None = None
    """Time to repair what a failure took out when the hot spares cannot replace it (a whole
    leaf's hosts, say), hours. Without it such failures are listed but their wait is not
    counted."""
    hot_spare_nodes: dict[Name, Annotated[int, Field(ge=0, le=MAX_NODES)]] = {}
    """Idle nodes kept in each partition to replace failed ones, by partition name; the largest
    job of a partition is its nodes less its spares. Default per partition: what one node
    failure takes out (one node, or a rack's NVLink domain of trays)."""


class Cost(SpecModel):
    """Prices and running costs: capital from the bill of materials, power, other running costs."""

    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    """ISO 4217 code the prices are in."""
    prices: dict[Name, Price] = {}
    """Price of one item, by the key report.md's cost table names: a platform (dgx-h100), a
    switch model (qm9700), a PDU profile, a power shelf model, or 'cable.<network>' for one
    cable with its transceivers on that network (compute, storage, management, bmc). No price is
    built in: an item without one is listed as unpriced and the capital cost is a lower bound."""
    amortization_years: Annotated[float, up_to(50), at_most(50, "years")] = 5
    """Years the capital cost is spread over, straight line. Default 5: the useful life Amazon
    gives a subset of its servers and networking equipment from 2025 (shortened from 6 years
    for the faster pace of AI hardware; Amazon.com 10-K for 2024)."""
    price_per_kwh: Annotated[float, up_to(100, gt=None, ge=0),
                             at_most(100, "per kWh")] | None = None
    """Price of electricity per kWh at the facility meter (IT power x PUE)."""
    opex_per_year: Price = 0
    """Other running costs per year (staff, support contracts, space), in the currency."""
