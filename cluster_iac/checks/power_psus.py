"""PSU checks: a node type's required PSUs carry its draw; no single failure takes down a
device that has spare PSUs (or a busbar that has spare power shelves)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic
from cluster_iac.checks.power_text import case_text
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.power_cap import gpu_limit_w
from cluster_iac.plan.power_tables import PowerOutage


@check("power.psu_redundancy")
def psu_redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """Each node type's required PSUs carry its maximum draw when the spare PSUs have failed
    (DGX H100: 4 of 6 x 3.3 kW carry 10.2 kW)."""
    used = {n.node_type for n in plan.nodes}
    for name in sorted(used):
        nt = plan.node_types[name]
        if nt.psu_count == 0 or nt.psu_required == 0:
            continue  # busbar-fed trays: the power shelves are checked as devices
        per_psu = nt.max_power_w / nt.psu_required
        if nt.psu_required > nt.psu_count or per_psu > nt.psu_rating_w:
            yield Diagnostic(
                "POWER-PSU-REDUNDANCY",
                f"node type {name}: {nt.psu_required} of {nt.psu_count} PSUs carry "
                f"{nt.max_power_w / 1000:.2f} kW at {per_psu / 1000:.2f} kW each, "
                f"{100 * per_psu / nt.psu_rating_w:.0f}% of their {nt.psu_rating_w / 1000:g} kW "
                f"rating; over by {(per_psu - nt.psu_rating_w) / 1000:.2f} kW per PSU",
                (*nt.spec_path, "psus"),
                details={"measured": round(per_psu, 1), "limit": nt.psu_rating_w, "unit": "W"})


@check("power.psu_failover")
def psu_failover(plan: Plan) -> Iterator[Diagnostic]:
    """No single failure (a PDU, its feed or panel down; one PSU failed) leaves a device with
    spare PSUs short of the PSUs it requires, or a busbar short of power shelves: the PSUs
    are split over too few feeds. One finding per node type, switch model or PDU profile,
    naming the first device and the count."""
    if not plan.power_outages:
        return
    kind_of = {n.hostname: n.node_type for n in plan.nodes}
    kind_of.update({s.name: s.model for s in plan.switches})
    profile_of = {r.name: r.pdu_profile for r in plan.racks}
    feeds = {f.pdu: f for f in plan.power_feeds}
    groups: dict[str, list[PowerOutage]] = {}
    for outage in plan.power_outages:
        key = kind_of.get(outage.device, f"busbars of PDU profile {profile_of[outage.rack]}")
        groups.setdefault(key, []).append(outage)
    for key in sorted(groups):
        outages = groups[key]
        worst = min(outages, key=lambda o: o.live_psus - o.required)
        devices = sorted({o.device for o in outages})
        others = f" and {len(devices) - 1} more" if len(devices) > 1 else ""
        if worst.kind == "busbar":
            what = (f"rack {worst.rack} busbar{others} ({key}): with "
                    f"{case_text(worst.case, feeds)}, {worst.live_psus} of its {worst.psus} "
                    f"power shelves stay live and deliver {worst.capacity_w / 1000:.1f} kW of "
                    f"the {worst.draw_w / 1000:.1f} kW its trays draw; the trays go down")
        else:
            what = (f"{worst.device}{others} ({key}): with {case_text(worst.case, feeds)}, "
                    f"{worst.live_psus} of its {worst.psus} PSUs stay live, fewer than the "
                    f"{worst.required} it needs for {worst.draw_w / 1000:.2f} kW; the "
                    f"{worst.kind} goes down")
        yield Diagnostic(
            "POWER-PSU-FAILOVER", what,
            ("power", "pdu_profiles", profile_of[worst.rack], "layout"),
            hint=_failover_hint(plan, key, worst),
            details={"measured": worst.live_psus, "limit": worst.required, "unit": "PSUs"})


def _live_after_loss(psus: int, pdus: int) -> int:
    """PSUs still fed when the PDU with the most of them is down: cords go round-robin over
    the rack's PDUs (compile/build_power.py), so that PDU holds ceil(psus / pdus)."""
    return psus - -(-psus // pdus)


def _failover_hint(plan: Plan, key: str, worst: PowerOutage) -> str:
    """A fix that works for this device: the PDU layout whose single loss leaves it enough
    PSUs, else (a node type) the power cap its PSUs on one surviving side carry, else more
    supplies or feeds."""
    if worst.kind == "busbar":
        return ("spread the power shelves over more PDUs, or add shelves, so that the shelves "
                "on the live feeds carry the trays")
    layout = next((plan.settings.power.pdu_profiles[r.pdu_profile].layout
                   for r in plan.racks if r.name == worst.rack), "ab")
    if layout != "three" and _live_after_loss(worst.psus, 3) >= worst.required:
        return (f"layout 'three' (three PDUs a rack, any two carry it): {worst.psus} PSUs "
                f"keep {_live_after_loss(worst.psus, 3)} live with one PDU down, of the "
                f"{worst.required} required")
    nt = plan.node_types.get(key)
    if nt is not None and nt.psu_rating_w:
        pdus = max((2, 3), key=lambda n: _live_after_loss(worst.psus, n))
        live = _live_after_loss(worst.psus, pdus)
        carried = live * nt.psu_rating_w
        layout = (f"with layout '{'ab' if pdus == 2 else 'three'}' (one PDU down leaves "
                  f"{live} of {worst.psus})")
        limit = gpu_limit_w(nt.platform_max_power_w or nt.max_power_w, nt.gpu_count,
                            nt.gpu_max_power_w, carried)
        if limit is not None and limit < (nt.gpu_power_limit_w or nt.gpu_max_power_w):
            return (f"cap the GPUs so the node draws what {live} PSUs carry ({live} x "
                    f"{nt.psu_rating_w:g} W = {carried:g} W): node_types.{key}."
                    f"gpu_power_limit_w: {limit} (of {nt.gpu_max_power_w} W), {layout}; the "
                    f"cap slows the GPUs (POWER-GPU-CAP says how much). Or feed the PSUs from "
                    f"more PDUs")
        return (f"cap the node's draw to what {live} PSUs carry: node_types.{key}.max_power_w: "
                f"{carried:g} ({live} x {nt.psu_rating_w:g} W), {layout}; the cap slows the "
                f"GPUs. Or feed the PSUs from more PDUs")
    return (f"feed the {worst.psus} PSUs from more PDUs, so that one PDU down leaves "
            f"{worst.required} live")
