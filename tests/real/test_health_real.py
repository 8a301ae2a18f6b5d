"""The generated health check under a real slurmd: a node missing a GPU is DRAINED with the
reason, never DOWN, and stays drained when its slurmd registers again; ReturnToService returns
DOWN nodes, never DRAINED ones. The device tools are stand-ins (tests/real/health_harness.py).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster_iac.plan import Node, NodeTypePlan, Plan
from tests.real import health_harness as hh
from tests.real.policy_cluster import Policy

pytestmark = pytest.mark.real


def _node_spec(plan: Plan, nt: NodeTypePlan) -> hh.NodeSpec:
    """What a healthy node of the type shows: its catalog GPUs, the ports of its compute NICs'
    link layer and rate (whatever their role), its installed memory."""
    compute = nt.nics_of("compute")
    link = compute[0].link if compute else None
    rate = compute[0].speed_gbps if compute else 0
    ports = sum(n.count for n in nt.nics if n.link == link and n.speed_gbps == rate)
    return hh.NodeSpec(
        gpus=nt.gpu_count, gpu_model=plan.catalog.gpus[nt.gpu_model].nvml_name,
        ports=ports, rate=rate, layer={"infiniband": "InfiniBand"}.get(link or "", "Ethernet"),
        lustre=plan.lustre.mount if plan.lustre else None,
        memory_kib=nt.memory_gib * 1024 * 1024)


@dataclass
class Health:
    """Stand-in tools and a way to start one node's slurmd with them."""

    policy: Policy
    tools: Path
    memory: dict[str, Path]

    def start(self, node: Node) -> hh.Slurmd:
        plan, box = self.policy.plan, self.policy.box
        nt = plan.node_types[node.node_type]
        program = self.policy.rendered / "healthcheck" / f"{nt.name}.sh"
        program.chmod(0o755)  # installed as the deployment does: slurmd executes it
        daemon = hh.Slurmd(box, node.hostname, self.tools, self.memory[nt.name], nt.gpu_count,
                           (nt.sockets, nt.cores_per_socket, nt.threads_per_core),
                           program=program)
        return daemon

    def nodes(self, count: int) -> list[Node]:
        """Distinct compute nodes for one test (tests share the running slurmctld)."""
        taken = self.__dict__.setdefault("_taken", 0)
        self.__dict__["_taken"] = taken + count
        return list(self.policy.plan.compute_nodes[taken:taken + count])


@pytest.fixture(scope="module")
def health(policy: Policy) -> Iterator[Health]:
    work = policy.box.work
    types = {n.node_type for n in policy.plan.compute_nodes}
    assert len(types) == 1, "the stand-in tools describe one node type per cluster"
    nt = policy.plan.node_types[types.pop()]
    spec = _node_spec(policy.plan, nt)
    tools = hh.install_tools(work / "tools", spec)
    memory = {nt.name: hh.meminfo(work / f"meminfo-{nt.name}", spec.memory_kib)}
    (policy.box.etc / "healthcheck.sh").touch()  # the mount point of each type's program
    yield Health(policy, tools, memory)


def _reason(record: dict[str, str]) -> str:
    """The Reason without Slurm's ' [user@time]' suffix."""
    return re.sub(r"\s*\[[^]]*\]$", "", record.get("Reason", ""))


def _slurmd_errors(policy: Policy, node: str) -> list[str]:
    return policy.cluster.log_errors(f"slurmd-{node}")


def test_a_healthy_node_registers_and_is_not_drained(health: Health) -> None:
    (node,) = health.nodes(1)
    cluster, host = health.policy.cluster, node.hostname
    daemon = health.start(node)
    try:
        record = hh.wait_for(cluster, host, lambda r: hh.registered(r)
                             and (health.tools / "state" / f"{host}.ran").exists(),
                             "registration after a health check", daemon)
        assert "DRAIN" not in record["State"] and "DOWN" not in record["State"], record
        assert record["State"].startswith("IDLE")
    finally:
        daemon.stop()
    assert _slurmd_errors(health.policy, host) == []


def test_a_node_missing_a_gpu_is_drained_with_the_reason_and_stays_drained(
        health: Health) -> None:
    (node,) = health.nodes(1)
    cluster, host = health.policy.cluster, node.hostname
    gpus = health.policy.plan.node_types[node.node_type].gpu_count
    hh.set_state(health.tools, host, gpus=gpus - 1)
    daemon = health.start(node)
    try:
        drained = hh.wait_for(cluster, host, lambda r: hh.registered(r) and "DRAIN" in
                              r["State"], "a drain by the health check", daemon)
    finally:
        daemon.stop()
    assert "DOWN" not in drained["State"], drained["State"]
    assert _reason(drained) == f"healthcheck: GPU count {gpus - 1}, expected {gpus}"
    shown = cluster.run("sinfo", "-h", "-N", "-n", host, "-o", "%T|%E").strip()
    assert shown.startswith("drained|healthcheck: GPU count"), shown
    # the GPU is back and slurmd starts again: the node registers anew and stays drained
    hh.set_state(health.tools, host, gpus=None)
    time.sleep(1.1)  # SlurmdStartTime counts whole seconds: a new start shows a new one
    daemon = health.start(node)
    try:
        again = hh.wait_for(cluster, host, lambda r: hh.registered(r) and r["SlurmdStartTime"]
                            != drained["SlurmdStartTime"], "a second registration", daemon)
    finally:
        daemon.stop()
    assert "DRAIN" in again["State"] and "DOWN" not in again["State"], again["State"]
    assert _reason(again) == _reason(drained)
    assert _slurmd_errors(health.policy, host) == []


def test_return_to_service_returns_a_down_node_but_never_a_drained_one(
        health: Health) -> None:
    """The guide marks a bad node DOWN: ReturnToService=1 (generated) keeps it DOWN when its
    slurmd registers again; the guide's 2 puts it back in service. A node the health check
    DRAINED stays drained under both."""
    down, drained = health.nodes(2)
    policy, cluster = health.policy, health.policy.cluster
    cluster.scontrol("update", f"NodeName={down.hostname}", "State=DOWN", "Reason=ECC_Errors")
    gpus = policy.plan.node_types[drained.node_type].gpu_count
    hh.set_state(health.tools, drained.hostname, gpus=gpus - 1)
    _restart(health, drained, lambda r: "DRAIN" in r["State"])
    hh.set_state(health.tools, drained.hostname, gpus=None)
    assert "DOWN" in _restart(health, down)["State"]  # ReturnToService=1, as generated
    conf = policy.box.etc / "slurm.conf"
    generated = conf.read_text()
    try:
        # the guide's ReturnToService=2, for this test only
        conf.write_text(re.sub(r"(?m)^ReturnToService=1$", "ReturnToService=2", generated))
        cluster.scontrol("reconfigure")
        assert _restart(health, down)["State"].startswith("IDLE")
        record = _restart(health, drained)
        assert "DRAIN" in record["State"] and _reason(record).startswith("healthcheck: GPU")
    finally:
        conf.write_text(generated)
        cluster.scontrol("reconfigure")


def _restart(health: Health, node: Node, until=hh.registered) -> dict[str, str]:  # type: ignore
    """Start the node's slurmd, wait for a registration (and ``until``), stop it."""
    cluster = health.policy.cluster
    before = cluster.node(node.hostname).get("SlurmdStartTime")
    time.sleep(1.1)  # SlurmdStartTime counts whole seconds: a new start shows a new one
    daemon = health.start(node)
    try:
        return hh.wait_for(cluster, node.hostname,
                           lambda r: hh.registered(r) and r["SlurmdStartTime"] != before
                           and until(r), "a registration", daemon)
    finally:
        daemon.stop()


def test_slurmctld_logged_no_error_while_nodes_were_drained(policy: Policy,
                                                           health: Health) -> None:
    """Explained: a fresh state directory; and 24.11's `scontrol reconfigure` (the test's
    ReturnToService=2 step) re-executes slurmctld, which then counts the RPCs to nodes it left
    behind: here nodes whose slurmd the sandbox never ran or has just stopped."""
    errors = [e for e in policy.cluster.log_errors("slurmctld")
              if not re.search(r"No fed_mgr state file|agent_fini: left \d+ agent threads "
                               r"active", e)]
    assert errors == [], errors
