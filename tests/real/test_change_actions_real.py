"""The change actions (cluster_iac/change/actions.py, table catalog/slurm_actions.py) on real
slurmctld and slurmd of 22.05, 24.11 and 26.05.

One daemon set per release (tests/real/change_harness.py) takes a sequence of changes of the
seed example's rendered files. For each: the planned actions come from the table for that
release; the files alone change nothing; where the plan restarts a daemon, a reconfigure alone
does not apply the change either (so a table entry that asks for too much fails the test); the
planned actions do (so an entry that asks for too little fails it). What the daemons run is
read back from `scontrol show config|partition|node|topology`, `scontrol ping` and the ports
they listen on.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cluster_iac.base.hostlist import expand
from cluster_iac.change.actions import Action, actions
from cluster_iac.emit import render_all
from tests.facility_fixtures import compile_data
from tests.real import slurm_harness as harness
from tests.real.change_harness import OTHER_SERVICES, LiveSlurm, listening
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

RELEASES = ("22.05", "24.11", "26.05")
EXAMPLE = "seed-64gpu-h100"
DOWN = "<slurmctld does not answer>"
SETTLE_S = 20.0  # how long a change may take to show after the action that applies it
LESSER_S = 5.0  # how long a reconfigure gets to show what the table says needs a restart


def require(release: str) -> harness.Runtime:
    """The release's runtime; fail (never skip silently) when it is missing, unless a
    developer opted out (outside CI only)."""
    if os.environ.get(harness.NO_REAL_ENV) == "1" and os.environ.get("CI") != "true":
        pytest.skip(f"{harness.NO_REAL_ENV}=1: real Slurm tests switched off")
    host = harness.host_runtime() if not harness.missing_tools() else None
    found = {r.name: r for r in harness.root_runtimes()[0]}
    if host is not None:
        found[host.name] = host
    if release not in found:
        pytest.fail(f"Slurm {release} is not installed: .ci/install-deps installs it "
                    f"(or set {harness.NO_REAL_ENV}=1 to opt out)")
    return found[release]


def render(release: str, change: Callable[[dict[str, Any]], None] | None = None
           ) -> dict[str, str]:
    data = example_data(EXAMPLE, release)
    if change is not None:
        change(data)
    return render_all(compile_data(data))


@pytest.fixture(scope="module", params=RELEASES)
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[str, LiveSlurm, dict[str, str]]]:
    """The seed example's files, less its last compute node (test_node_added adds it), in a
    running slurmctld and slurmd (compute01), and the files installed last (each test changes
    them further)."""
    release = request.param
    sandbox = LiveSlurm(tmp_path_factory.mktemp(f"change-{release}"), require(release))
    files = render(release, lambda d: d["node_groups"][0].update(count=7))
    sandbox.install(files)
    try:
        sandbox.start("compute01")
        yield release, sandbox, files
    finally:
        sandbox.stop()


def _observe(read: Callable[[], Any]) -> Callable[[], Any]:
    def observe() -> Any:
        try:
            return read()
        except harness.HarnessError:
            return DOWN
    return observe


def apply(live: tuple[str, LiveSlurm, dict[str, str]], new: dict[str, str],
          read: Callable[[], Any], before: Any, after: Any, **nodes: Any) -> list[Action]:
    """Install ``new`` over the files of ``live``, check that neither the files alone nor
    (where the plan restarts a daemon) a reconfigure applies the change, run the plan, and
    check that it does. Returns the plan."""
    release, sandbox, old = live
    plan = actions(old, new, release, **nodes)
    observe = _observe(read)
    sandbox.install(new)
    assert observe() == before, "the files alone changed what the daemons run"
    if _restart_applies(plan):
        conf = sandbox.work / "etc-before" / "slurm.conf"
        # sent on the old port, where slurmctld still listens. Refused with Slurm's own word
        # that a restart is needed (22.05 on a node's new CPU count, whose new value `show
        # node` prints all the same), it did not apply the change; failed, it did not either
        refused = ""
        try:
            sandbox.reconfigure(conf)
        except harness.HarnessError as error:
            refused = str(error) if "restart" in str(error) else ""
        got = observe() if refused else _settled(observe, after, LESSER_S)
        assert refused or got in (before, DOWN), (
            f"Slurm {release}: a reconfigure applied what the table says needs "
            f"{[a.kind for a in plan]}: {got!r}")
        if sandbox.ctl.controller is None or sandbox.ctl.controller.poll() is not None:
            # it killed slurmctld (22.05 on a new node count): back to the old files, as
            # an operator would, before the plan runs from the start
            sandbox.install(old)
            sandbox.ctl.start()
            sandbox.install(new)
    sandbox.run(plan)
    assert _settled(observe, after) == after, (
        f"Slurm {release}: {[a.kind for a in plan]} did not apply it")
    live[2].clear()
    live[2].update(new)
    return plan


def _settled(observe: Callable[[], Any], want: Any, wait_s: float = SETTLE_S) -> Any:
    """What observe() reads once it reads ``want``, or after ``wait_s``: slurmd re-registers
    a moment after a reconfigure or restart returns (within 2 s here, idle)."""
    deadline = time.monotonic() + wait_s
    got = observe()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.5)
        got = observe()
    return got


def _restart_applies(plan: list[Action]) -> bool:
    """Whether the plan says a restart, not a reconfigure, applies the change: it restarts
    slurmctld, or slurmd for more than starting new nodes and nodes whose equipment changed."""
    starts = ("slurm/slurm.conf: nodes added", "equipment changed")
    return any(a.kind == "restart-slurmctld" or (
        a.kind == "restart-slurmd" and not all(c.startswith(starts) for c in a.causes))
        for a in plan)


def _kinds(plan: list[Action]) -> list[str]:
    return [a.kind for a in plan]


def test_node_added(live: tuple[str, LiveSlurm, dict[str, str]]) -> None:
    """The seed's eighth compute node added (and compute01's equipment changed: drained first).
    22.05: slurmctld and every running slurmd restart (a reconfigure refuses a new node
    count); from 23.11 a reconfigure adds it. The new node's slurmd is started, not restarted
    (start-slurmd); then it registers."""
    release, sandbox, _ = live
    new = render(release)

    def read() -> bool:
        return "compute08" in {r["NodeName"] for r in sandbox.ctl.records("nodes")}

    plan = apply(live, new, read, False, True, nodes_changed=("compute01",))
    started = next(a for a in plan if a.kind == "start-slurmd")
    assert expand(started.hosts) == ["compute08"]  # its slurmd never ran: started, enabled
    restarted = expand(next(a for a in plan if a.kind == "restart-slurmd").hosts)
    # 22.05 restarts every running slurmd; from 23.11 only compute01's (its equipment)
    assert "compute08" not in restarted and "compute01" in restarted
    assert (restarted == [f"compute{n:02d}" for n in range(1, 8)]) == (release == "22.05")
    slurm = [k for k in _kinds(plan) if k not in OTHER_SERVICES]
    assert slurm[0] == "drain" and slurm[-1] == "resume"
    # the new node's HCA joins its Slurm partition's P_Key: OpenSM re-reads partitions.conf
    assert "restart-opensm" in _kinds(plan)
    assert "DRAIN" not in sandbox.ctl.node("compute01")["State"]
    part = sandbox.ctl.records("partitions")[0]
    assert part["Nodes"] == "compute[01-08]"
    sandbox.stop_slurmd()  # one slurmd at a time: the same SlurmdPort
    record = sandbox.start_slurmd("compute08")
    assert "INVAL" not in record["State"], record


def test_partition_and_key_changes(live: tuple[str, LiveSlurm, dict[str, str]]) -> None:
    """A partition's MaxTime and MinJobAge (reconfigure everywhere); SelectTypeParameters and
    TopologyPlugin (22.05: slurmctld keeps the old ones on reconfigure; from 23.11 a
    reconfigure re-executes it and they apply)."""
    release, sandbox, files = live
    new = render(release, lambda d: d["slurm"]["partitions"][0].update(max_time="2-00:00:00"))

    def max_time() -> str:
        return sandbox.ctl.records("partitions")[0]["MaxTime"]

    apply(live, new, max_time, "UNLIMITED", "2-00:00:00")

    def config(key: str) -> Callable[[], str]:
        def read() -> str:
            out = sandbox.ctl.scontrol("show", "config")
            pairs = (line.split("=", 1) for line in out.splitlines() if " = " in line)
            return {k.strip(): v.strip() for k, v in pairs}[key]
        return read

    new = dict(files)  # a key with no entry of its own: the default, reconfigure
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace("MinJobAge=300", "MinJobAge=600")
    apply(live, new, config("MinJobAge"), "300 sec", "600 sec")

    new = dict(files)
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace(
        "SelectTypeParameters=CR_Core_Memory", "SelectTypeParameters=CR_Core")
    apply(live, new, config("SelectTypeParameters"), "CR_CORE_MEMORY", "CR_CORE")

    new = dict(files)
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace(
        "TopologyPlugin=topology/tree\n", "")
    # scontrol prints the topology through its own topology plugin, read from its slurm.conf:
    # it keeps reading the one with topology/tree, so only slurmctld's answer changes
    client = sandbox.work / "etc-client"
    shutil.copytree(sandbox.work / "etc", client, dirs_exist_ok=True)

    def switches() -> bool:
        return "SwitchName=ib-leaf-1" in sandbox.scontrol_with(client / "slurm.conf", "show",
                                                               "topology").stdout

    apply(live, new, switches, True, False)


def test_port_changes(live: tuple[str, LiveSlurm, dict[str, str]]) -> None:
    """SlurmctldPort and SlurmdPort: a reconfigure never moves a listening port (every
    release); the planned restarts do."""
    release, sandbox, files = live
    new = dict(files)
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace(
        "SlurmctldPort=6817", "SlurmctldPort=6827")
    apply(live, new, sandbox.ping, False, True)

    new = dict(files)
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace(
        "SlurmdPort=6818", "SlurmdPort=6828")
    apply(live, new, lambda: listening(sandbox.port("SlurmdPort")), False, True)


def test_gres_change(live: tuple[str, LiveSlurm, dict[str, str]]) -> None:
    """gres.conf binds GPUs 0-3 to socket 0's cores: bound to socket 1's instead, the node's
    Gres shows them there (22.05: slurmctld and the node's slurmd restart; from 23.11 a
    reconfigure)."""
    release, sandbox, files = live
    node = sandbox.live
    assert node is not None
    new = dict(files)
    new["slurm/gres.conf"] = files["slurm/gres.conf"].replace(
        "File=/dev/nvidia[0-3] Cores=0-63", "File=/dev/nvidia[0-3] Cores=64-127")
    apply(live, new, lambda: sandbox.ctl.node(node)["Gres"], "gpu:h100_80gb_hbm3:8(S:0-1)",
          "gpu:h100_80gb_hbm3:8(S:1)")


def test_node_line_changed(live: tuple[str, LiveSlurm, dict[str, str]]) -> None:
    """The compute nodes' CPU count (one thread per core instead of two): slurm.conf(5)'s own
    example of a node change. 22.05: slurmctld and the nodes' slurmd restart; from 23.11 a
    reconfigure."""
    release, sandbox, files = live
    node = sandbox.live
    assert node is not None
    new = dict(files)
    new["slurm/slurm.conf"] = files["slurm/slurm.conf"].replace(
        "CPUs=256 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=2",
        "CPUs=128 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=1")
    apply(live, new, lambda: sandbox.ctl.node(node)["CPUTot"], "256", "128")
