"""Single points of failure: a storage fabric that is one switch, a leaf-spine fabric with
one spine (every path between two leaves crosses it), racks on one power feed, and both
switches of a management aggregation (or core) pair in one rack. (A loop's one CDU is
checks/cooling_loops.py's.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.hostlist import fold
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import link_ends


@check("resilience.fabric_switches")
def fabric_switches(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (SPOF-FABRIC-SWITCH) for a storage fabric built as one switch: every
    storage server and client hangs from it, so its failure (or its firmware upgrade) stops
    all I/O of the cluster, and servers with two storage ports have both on it. A warning
    (SPOF-FABRIC-SPINE) for a leaf-spine fabric with one spine: every path between two
    leaves crosses it, so its failure cuts the fabric into its leaves."""
    for network, fabric in sorted(plan.fabrics.items()):
        switches = [s for s in plan.switches if s.network == network]
        if network == "storage" and fabric.tiers == 1:
            (switch,) = switches
            hosts = sum(1 for _ in plan.fabric_wiring[network].hosts())
            ports = fabric.link_counts.get("node-leaf", 0)
            yield Diagnostic(
                "SPOF-FABRIC-SWITCH",
                f"storage fabric is one switch, {switch.name} ({switch.model}): its "
                f"{hosts} hosts' {ports} ports are all on "
                f"it, so its failure or upgrade stops all storage I/O of the cluster",
                fabric.spec_path, Severity.WARNING,
                hint=f"a storage leaf_switch with fewer than {ports} ports builds leaves and "
                     f"spines, so a switch down stops only its leaf's hosts (the builder "
                     f"cables a host's ports to one leaf); or accept it: policy: {{levels: "
                     f"{{SPOF-FABRIC-SWITCH: info}}}}",
                details={"measured": 1, "limit": 2, "unit": "switches"})
        spines = [s for s in switches if s.tier == "spine"]
        if fabric.tiers == 2 and len(spines) == 1:
            leaves = fabric.switch_counts.get("leaf", 0)
            key = "planned_scalable_units" if network == "compute" else "spine_switch"
            yield Diagnostic(
                "SPOF-FABRIC-SPINE",
                f"{network} fabric has one spine, {spines[0].name} ({spines[0].model}, "
                f"{spines[0].ports} ports): all traffic between its {leaves} leaves crosses "
                f"it, so its failure cuts the fabric into {leaves} islands",
                fabric.spec_path, Severity.WARNING,
                hint=(f"fabric.{network}.planned_scalable_units above its "
                      f"{fabric.scalable_units} unit(s) sizes the spines for more leaves, "
                      f"or a spine_switch with fewer ports: either spreads the uplinks over "
                      f"two or more spines" if key == "planned_scalable_units" else
                      f"a fabric.{network}.spine_switch with fewer ports than the leaves' "
                      f"uplinks spreads them over two or more spines"),
                details={"measured": 1, "limit": 2, "unit": "spines"})


@check("resilience.rack_feeds")
def rack_feeds(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (SPOF-FEED) per PDU profile of layout 'single' that racks use: each such
    rack has one PDU on one feed from one panel, so that feed, panel or PDU down stops every
    device in the rack, whatever their PSUs' redundancy (the failover checks, which take
    one side down, have no other side to move to there)."""
    profiles = plan.settings.power.pdu_profiles
    racks: dict[str, list[str]] = {}
    for rack in plan.racks:
        if profiles[rack.pdu_profile].layout == "single":
            racks.setdefault(rack.pdu_profile, []).append(rack.name)
    devices: dict[str, int] = {}
    for node in plan.nodes:
        devices[node.rack] = devices.get(node.rack, 0) + 1
    for switch in plan.switches:
        devices[switch.rack] = devices.get(switch.rack, 0) + 1
    for name in sorted(racks):
        names = racks[name]
        count = sum(devices.get(r, 0) for r in names)
        yield Diagnostic(
            "SPOF-FEED",
            f"PDU profile {name} is layout 'single': its {len(names)} rack(s) ({fold(names)}) "
            f"each have one PDU on one feed, so that feed, its panel or the PDU down stops "
            f"all {count} hosts and switches in them", ("power", "pdu_profiles", name),
            Severity.WARNING,
            hint="layout: ab (two PDUs on feeds from two panels; the PSUs' cords split over "
                 "them) or layout: three, or accept it: policy: {levels: {SPOF-FEED: info}}",
            details={"measured": 1, "limit": 2, "unit": "feeds"})


@check("resilience.management_pairs")
def management_pairs(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (SPOF-MGMT-AGG-RACK) per management aggregation or core pair whose two
    switches share a rack: every access switch below uplinks to both so that one can fail,
    but that rack's power, cooling or a mistake in it takes both, and with them every rack's
    in-band (or BMC) reach above its access switch."""
    uppers = {s.name: s for s in plan.switches
              if s.network in ("management", "bmc") and s.tier in ("aggregation", "core")}
    shared = []  # the pairs in one rack
    for name, first in sorted(uppers.items()):
        stem, _, n = name.rpartition("-")
        if int(n) % 2 == 0:
            continue
        second = uppers.get(f"{stem}-{int(n) + 1}")
        if second is not None and second.rack == first.rack:
            shared.append((first, second))
    below = _switches_below(plan, uppers) if shared else {}  # read only to word a finding
    for first, second in shared:
        network = first.network
        option = getattr(plan.settings.networks, network).aggregation_racks
        yield Diagnostic(
            "SPOF-MGMT-AGG-RACK",
            f"{network} {first.tier} pair {first.name} and {second.name} are both in rack "
            f"{first.rack}: its {below.get(first.name, 0)} downlink switch(es) each uplink to "
            f"both, but that rack's power, cooling or a mistake in it takes the pair down "
            f"together", ("networks", network), Severity.WARNING,
            hint=_pair_hint(plan, network, second.name, option) +
            "; or accept it: policy: {levels: {SPOF-MGMT-AGG-RACK: info}}",
            details={"measured": 1, "limit": 2, "unit": "racks"})


def _switches_below(plan: Plan, uppers: Iterable[str]) -> dict[str, int]:
    """How many switches of the management networks each of ``uppers`` has below it."""
    wanted = set(uppers)
    switches = {s.name for s in plan.switches}
    below: dict[str, int] = {}
    for _, device, switch, _ in link_ends(plan.links, ("management", "bmc")):
        if switch in wanted and device in switches:
            below[switch] = below.get(switch, 0) + 1
    return below


def _pair_hint(plan: Plan, network: str, second: str, option: str) -> str:
    """What moves the pair's second switch to another rack, in this design."""
    key = f"networks.{network}.aggregation_racks"
    if option == "together":
        return (f"{key}: apart (the default) puts the pair's switches in two racks (two "
                f"network racks, or a service or storage rack beside the first)")
    if plan.lock.exists and plan.lock.get("place", "", second) is not None:
        return (f"the lock places {second} there: 'render --reallocate {second}' lets {key}: "
                f"apart move it to another rack")
    return ("no second rack takes it: a second rack without hosts (a network rack), or a "
            "service or storage rack, takes the pair's second switch")
