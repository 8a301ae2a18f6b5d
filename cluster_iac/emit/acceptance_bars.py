"""The acceptance jobs' bars (emit/acceptance.py writes the jobs): each threshold's constant with
its source, the all_reduce steps of a unit with their predicted busbw (plan/collectives), the
perftest line rate, the PDU lines' expected current and the burn-in's turns. Each bar goes into
the partition's bars.json, which `cluster-iac acceptance check` reads (acceptance/check.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from cluster_iac.base.hostlist import fold
from cluster_iac.plan import Node, PartitionPlan, Plan
from cluster_iac.plan.collectives import JobPrediction, predict, size_text
from cluster_iac.plan.collectives.shape import domain_groups, nvlink_owners
from cluster_iac.plan.durations import time_limit_seconds
from cluster_iac.plan.power_tables import PowerLine

# --- the bars' constants, each with its source -------------------------------------------------

NCCL_MARGIN = 0.15
"""all_reduce bar = predicted busbw x (1 - 0.15): the model is held within 15 % of published
nccl-tests results (tests/test_busbw_references.py), so a run below that is the cluster's fault."""
PERFTEST_EFFICIENCY = 0.90
"""ib_write_bw bar = line rate x 0.90: RDMA write of large messages reaches 95-98 % of the
line rate on ConnectX-7 NDR (NVIDIA perftest guidance, 'ib_write_bw --report_gbits'); 0.90
leaves room for the 64b/66b-era encodings and a busy host, and still catches a link trained
at a lower width or speed (NDR x2 is 50 %)."""
LATENCY_SAME_LEAF_US = 2.5
"""ib_send_lat bar, one leaf between the pair: t_typical of 2-byte sends is about 1 us
back to back on ConnectX-6/7 plus the switch's port-to-port latency (Quantum-2 QM9700 data
sheet: 130 ns per hop); 2.5 us catches a link that retrains or a host on the wrong NUMA node."""
LATENCY_PER_HOP_US = 0.5
"""Added to the latency bar per switch hop beyond the leaf (leaf-spine-leaf: two more hops)."""
STORAGE_MARGIN = 0.20
"""fio aggregate bar = derived Lustre bound x (1 - 0.20): the bound is a max flow of the
drives, the servers' and clients' NICs and the fabric (plan/lustre_bandwidth.py); streaming
IO with 16 MiB requests reaches 80-90 % of it (Lustre Operations Manual, 'Benchmarking Lustre
File System Performance')."""
POWER_METER_TOLERANCE = 0.05
"""A PDU line may read up to 5 % above its expected current (a clamp meter's class accuracy
and PDU metering's +-1 %, IEC 62053-21 class 1, with rounding) before it is a failure."""
DCGM_PHASES = ((1, 15 * 60), (3, 60 * 60), (4, 4 * 3600))
"""(run level, time limit in seconds): DCGM diagnostics levels 1 (quick, about a minute),
3 (long, about 30 minutes) and 4 (extended, 1-2 hours) as the DCGM user guide's 'Run Levels'
table gives them, each limit doubled for a slow start."""
BURN_IN_S = 48 * 3600
"""GPU burn-in length: 48 hours, the build-out's step 34 (48-72 hours to catch infant
mortality); a partition whose MaxTime is shorter runs it as a job array of chunks, in turn."""
POWER_STEP_S = 20 * 60
"""The power step's full load: 20 minutes, long enough for the GPUs' and PSUs' draw to settle
(a clamp-meter or PDU-SNMP reading is taken in the last 5)."""
NCCL_TIME_S = 2 * 3600
IB_DURATION_S = 10  # seconds per perftest run (-D 10)
IB_TIME_S = 2 * 3600

ACCEPTANCE_CONSTANTS = {
    "nccl_margin": NCCL_MARGIN, "perftest_efficiency": PERFTEST_EFFICIENCY,
    "latency_same_leaf_us": LATENCY_SAME_LEAF_US, "latency_per_hop_us": LATENCY_PER_HOP_US,
    "storage_margin": STORAGE_MARGIN, "power_meter_tolerance": POWER_METER_TOLERANCE}


class Shared:
    """What every unit of one render reads: NVLink domain owners, the PDU lines by rack, and
    the predictions made so far by job shape (shape_key); and what it writes: each partition's
    bars.json as data (path -> bars), made into text together."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.owners = nvlink_owners(plan)
        self.lines: dict[str, list[PowerLine]] = {}
        for line in plan.power_lines:
            self.lines.setdefault(line.rack, []).append(line)
        self.predictions: dict[tuple[object, ...], JobPrediction | None] = {}
        self.folded: dict[tuple[str, ...], str] = {}
        self.bars: dict[str, dict[str, object]] = {}

    def fold(self, hosts: Iterable[str]) -> str:
        """base.hostlist.fold of these names, each distinct list folded once: a unit's
        nodelist is also its scalable_unit step's hosts and, with one node type, its node
        step's."""
        key = tuple(hosts)
        if key not in self.folded:
            self.folded[key] = fold(key)
        return self.folded[key]


def ports(plan: Plan, nodes: Sequence[Node]) -> list[str]:
    """The compute fabric's port names of the unit's first node ('ib0' ...), as the fabric
    pass names the hosts' cables (compile/build_fabric.py)."""
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None or nodes[0].hostname not in wiring:
        return []
    up = wiring.up.get(nodes[0].hostname, ())
    per = wiring.uplinks.get(nodes[0].hostname, (0, 0))[1]
    prefix = "ib" if wiring.link == "infiniband" else "rdma"
    return [f"{prefix}{i}" for i in range(len(up) * per)]


def line_rate(plan: Plan, nodes: Sequence[Node]) -> int:
    """Gb/s of one host cable: the smaller of the NIC's and the switch port's speed."""
    wiring = plan.fabric_wiring["compute"]
    cable = min(wiring.uplinks[n.hostname][0] for n in nodes if n.hostname in wiring)
    nics = [nic.speed_gbps for nt in {n.node_type for n in nodes}
            for nic in plan.node_types[nt].nics_of("compute")]
    return min([cable, *nics])


def nccl_steps(shared: Shared, nodes: list[Node], unit: str) -> list[dict[str, object]]:
    """The unit's all_reduce runs: every node alone, each NVLink domain of several nodes, each
    leaf group that is neither a node nor the unit, and the unit; each with its bar."""
    plan, owners = shared.plan, shared.owners
    steps: list[dict[str, object]] = []
    seen: set[tuple[str, ...]] = set()
    by_type: dict[str, Node] = {}
    for node in nodes:
        by_type.setdefault(node.node_type, node)
    gpus = {n.hostname: plan.node_types[n.node_type].gpu_count for n in nodes}
    members: list[Sequence[str]] = []  # each step's hosts, as the step's hostlist folds them
    for node_type, first in by_type.items():
        bar = step_bar(shared, (first,))
        if bar is not None:
            typed = [n.hostname for n in nodes if n.node_type == node_type]
            steps.append({"scope": "node", "name": node_type, "hosts": shared.fold(typed),
                          "nodes": 0, **bar})
            members.append(typed)
    domains: dict[str, list[Node]] = {}
    for node in nodes:
        if node.hostname in owners:
            domains.setdefault(owners[node.hostname], []).append(node)
    groups = [("nvlink_domain", name, members) for name, members in domains.items()]
    wiring = plan.fabric_wiring.get("compute")
    if wiring is not None and plan.fabrics["compute"].design != "rail-optimized":
        leaves: dict[tuple[str, ...], list[Node]] = {}
        for node in nodes:
            leaves.setdefault(wiring.up.get(node.hostname, ()), []).append(node)
        groups += [("leaf", "+".join(key), members) for key, members in leaves.items() if key]
    groups.append(("scalable_unit", unit, nodes))
    for scope, name, group in groups:
        if len(group) < 2:  # a node alone is the node step's (NVLink domains of one node)
            continue
        key = tuple(n.hostname for n in group)
        if key in seen:
            continue
        seen.add(key)
        bar = step_bar(shared, group)
        if bar is not None:
            steps.append({"scope": scope, "name": name, "hosts": shared.fold(key),
                          "racks": fold({n.rack for n in group}), "nodes": len(group),
                          **bar})
            members.append(key)
    for step, hosts in zip(steps, members, strict=True):
        # srun's tasks per node: one per GPU of the step's smallest node (not a bar: the
        # emitter passes it to the job and leaves it out of bars.json)
        step["gpus"] = min(map(gpus.__getitem__, hosts))
    return steps


def step_bar(shared: Shared, nodes: Sequence[Node]) -> dict[str, object] | None:
    key = shape_key(shared.plan, nodes, shared.owners)
    if key is None:
        return bar_of(predict(shared.plan, nodes, owners=shared.owners))
    if key not in shared.predictions:
        shared.predictions[key] = predict(shared.plan, nodes, owners=shared.owners)
    return bar_of(shared.predictions[key])


def shape_key(plan: Plan, nodes: Sequence[Node],
               owners: dict[str, str]) -> tuple[object, ...] | None:
    """What a job's prediction depends on when all its nodes hang off the same leaves (each
    node type's count and the sizes of its NVLink domains: job_shape's inputs, the path's
    oversubscription being 1 then); None when the nodes reach different leaves (predicted
    one by one). At 100,000 GPUs the 174 units share one prediction."""
    wiring = plan.fabric_wiring.get("compute")
    ups = {wiring.up.get(n.hostname, ()) for n in nodes} if wiring is not None else {()}
    if len(ups) > 1:
        return None
    kinds = Counter(tuple(n.node_type for n in group)
                    for group in domain_groups(plan, nodes, owners).values())
    return tuple(sorted(kinds.items()))


def bar_of(prediction: JobPrediction | None) -> dict[str, object] | None:
    if prediction is None or prediction.chosen is None:
        return None
    busbw = prediction.busbw_gbs
    return {"predicted_busbw_gbs": round(busbw, 2),
            "bar_busbw_gbs": round(busbw * (1 - NCCL_MARGIN), 2),
            "size_bytes": prediction.size_bytes,
            "source": f"predicted all_reduce busbw of {prediction.shape.gpus} GPUs at "
                      f"{size_text(prediction.size_bytes)} ({prediction.chosen.algorithm}, "
                      f"plan/collectives) x (1 - {NCCL_MARGIN})"}


def place(plan: Plan, node: Node) -> str:
    """'<rack> U<nn>' (the rack alone for a node not placed at a U): one line of bars.json."""
    placed = plan.placements.get(node.hostname)
    return f"{node.rack} U{placed.u:02d}" if placed is not None and placed.u else node.rack


def power_bars(shared: Shared, nodes: Sequence[Node]) -> list[dict[str, object]]:
    """The expected current of every PDU line in the unit's racks with the whole rack at full
    load (plan/power_flow.py: each device at its rated maximum, shared across its PSUs)."""
    racks = sorted({n.rack for n in nodes})
    return [{"rack": line.rack, "pdu": line.pdu, "circuit": line.circuit, "line": line.line,
             "expected_a": round(line.normal_a, 2),
             "bar_a": round(line.normal_a * (1 + POWER_METER_TOLERANCE), 2),
             "limit_a": line.limit_a}
            for rack in racks for line in shared.lines.get(rack, [])]


def burn_chunks(partition: PartitionPlan) -> tuple[int, int]:
    """(chunks, seconds each): the burn-in in one job, or in turns that each fit MaxTime (an
    hour of each limit left for start-up and the end)."""
    limit = time_limit_seconds(partition.max_time)
    if limit is None or limit >= BURN_IN_S + 3600:
        return 1, BURN_IN_S
    each = max(limit - 3600, 600)
    return -(-BURN_IN_S // each), each

