"""A first deployment (cluster_iac/change/actions.py: ``actions(None, files, release)``) brings the
seed example up on real MariaDB, slurmdbd, slurmctld and slurmd of 22.05, 24.11 and 26.05 in
the planned order, with no error line; then a change of accounting.sh is applied as planned.

The order matters on 26.05: its slurmctld refuses to start while a partition's AllowQos names
QOS slurmdbd does not have (22.05 and 24.11 log 'Ignoring invalid Allow/DenyQOS value' and
ignore them until a restart), and accounting.sh refuses to run before slurmctld has registered
the gres/gpu TRES. So the plan creates the QOS names with sacctmgr (slurmdbd only) before
slurmctld starts, and runs accounting.sh after; test_old_order_fails_on_26_05 shows why.
The sandbox is tests/real/policy_cluster.py's (its rewrites listed in rewrites.txt).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.change.actions import Action, actions
from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data
from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness
from tests.real.change_harness import listening
from tests.real.policy_cluster import _database_user, _password_file, require_consumers
from tests.real.test_slurm_policy_real import (
    CTLD_NOISE,
    DBD_NOISE,
    ROOT_DBD_FIRST,
    ROOT_DBD_MODIFY,
)
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

RELEASES = ("22.05", "24.11", "26.05")
EXAMPLE = "seed-64gpu-h100"


@dataclass
class Deployed:
    release: str
    plan: Plan
    files: dict[str, str]
    steps: list[Action]
    box: ah.Sandbox
    cluster: harness.SlurmCluster
    outputs: list[tuple[str, Any]]  # (command, its CompletedProcess) of each command run
    db: ah.MariaDB
    dbd: Any = None  # the running slurmdbd's Popen

    def sacctmgr_qos(self) -> set[str]:
        out = self.cluster.run("sacctmgr", "--noheader", "--parsable2", "show", "qos",
                               "format=Name")
        return set(out.split())


def _render(release: str, change: Callable[[dict[str, Any]], None] | None = None
            ) -> tuple[Plan, dict[str, str]]:
    data = example_data(EXAMPLE, release)
    if change is not None:
        change(data)
    plan = compile_data(data)
    return plan, render_all(plan)


def _write(files: dict[str, str], directory: Path) -> Path:
    for rel, text in files.items():
        if rel.startswith("slurm/"):
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            (directory / rel).write_text(text)
    return directory / "slurm"


def _commands(box: ah.Sandbox, action: Action, outputs: list[tuple[str, Any]]) -> None:
    """Run the action's sacctmgr/sh commands in the sandbox, as an admin on the controller."""
    for command in action.commands:
        result = box.run(shlex.split(command), timeout=300)
        outputs.append((command, result))


def _up(release: str, tmp: Path, order: str = "planned") -> Iterator[Deployed]:
    runtime = require_consumers(release)
    plan, files = _render(release)
    steps = actions(None, files, release)
    rendered = _write(files, tmp)
    dbd_port = harness.free_port()
    box = ah.prepare(rendered, tmp / "run", dbd_port=dbd_port, runtime=runtime)
    db = ah.MariaDB(box.work / "db")
    cluster = harness.SlurmCluster(harness.SlurmConf(box.etc, box.etc, box.node_names),
                                   box.work, runtime)
    up = Deployed(release, plan, files, steps, box, cluster, [], db)
    if order == "slurmctld first":  # the order before this plan: slurmctld right after slurmdbd
        ctld = next(s for s in steps if s.kind == "restart-slurmctld")
        steps = [s for s in steps if s is not ctld]
        steps.insert(next(i for i, s in enumerate(steps) if s.kind == "accounting"), ctld)
    try:
        for step in steps:
            if step.kind == "restart-database":
                db.start(rendered / "mariadb-slurmdbd.cnf")
                _database_user(db, plan)
            elif step.kind == "restart-slurmdbd":
                _password_file(box, plan)  # the step's first command, with the test's password
                up.dbd = ah.start_slurmdbd(box, db, dbd_port)
            elif step.kind == "accounting":
                _commands(box, step, up.outputs)
            elif step.kind == "restart-slurmctld":
                cluster.start()
            elif step.kind == "restart-slurmd":
                cluster.register("compute01", 2, 64, 2, 8)
        yield up
    finally:
        cluster.stop()
        if up.dbd is not None:
            harness._stop(up.dbd)
        db.stop()


@pytest.fixture(scope="module", params=RELEASES)
def deployed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Deployed]:
    yield from _up(request.param, tmp_path_factory.mktemp(f"first-{request.param}"))


def test_the_order_is_the_same_on_every_release() -> None:
    files = _render("22.05")[1]
    orders = {r: [a.kind for a in actions(None, _render(r)[1], r)] for r in RELEASES}
    assert orders["22.05"] == orders["24.11"] == orders["26.05"]
    kinds = orders["22.05"]
    assert kinds.index("restart-slurmdbd") < kinds.index("accounting") < kinds.index(
        "restart-slurmctld") < len(kinds) - 1 - kinds[::-1].index("accounting") < kinds.index(
        "restart-slurmd")
    qos = next(a for a in actions(None, files, "22.05") if a.kind == "accounting")
    assert qos.commands == ("sacctmgr -i add qos normal,high,scavenger",)


def test_every_command_of_the_plan_ran_cleanly(deployed: Deployed) -> None:
    assert deployed.outputs, "the plan ran no command"
    for command, result in deployed.outputs:
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        assert result.stderr == "", (command, result.stderr)


def test_slurmctld_started_with_no_error_line(deployed: Deployed) -> None:
    """No error at all on the first start, 'Ignoring invalid Allow/DenyQOS' included."""
    errors = [e for e in deployed.cluster.log_errors("slurmctld")
              if not re.search(CTLD_NOISE, e)]
    assert errors == []


def test_slurmdbd_log_is_clean(deployed: Deployed) -> None:
    noise = [DBD_NOISE] + ([ROOT_DBD_FIRST, ROOT_DBD_MODIFY]
                           if deployed.box.runtime.root is not None else [])
    assert ah.log_errors(deployed.box.work / "log" / "slurmdbd.log", *noise) == []


def test_partitions_allow_the_spec_qos_from_the_first_start(deployed: Deployed) -> None:
    record = deployed.cluster.records("partitions")[0]
    assert sorted(record["AllowQos"].split(",")) == ["high", "normal", "scavenger"]


def test_an_accounting_change_is_applied_by_accounting_sh(deployed: Deployed) -> None:
    """A QOS added to the spec: the plan re-runs accounting.sh; a reconfigure does not make
    the QOS (the lesser action), the plan does."""
    _, new = _render(deployed.release, lambda d: d["slurm"]["qos"].append({"name": "debug"}))
    plan = actions(deployed.files, new, deployed.release)
    (deployed.box.etc / "accounting.sh").write_text(new["slurm/accounting.sh"])
    deployed.cluster.scontrol("reconfigure")
    assert "debug" not in deployed.sacctmgr_qos()
    outputs: list[tuple[str, Any]] = []
    for action in plan:
        if action.kind == "reconfigure":
            deployed.cluster.scontrol("reconfigure")
        elif action.kind != "none":
            assert action.kind == "accounting", f"this test cannot run {action.kind}"
            _commands(deployed.box, action, outputs)
    assert [r.returncode for _, r in outputs] == [0] * len(outputs)
    assert "debug" in deployed.sacctmgr_qos()


def _set_port(path: Path, key: str, port: int) -> None:
    lines = [f"{key}={port}" if line.startswith(f"{key}=") else line
             for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")


def test_a_slurmdbd_port_change_is_applied_by_restarting_slurmdbd(deployed: Deployed) -> None:
    """The spec's accounting port: slurmdbd.conf's DbdPort and slurm.conf's
    AccountingStoragePort change. A reconfigure alone leaves slurmdbd on the old port; the
    plan (restart slurmdbd, reconfigure) moves it, and sacctmgr and slurmctld reach it there.
    The sandbox gives the new rendered port a free port of its own, in both files."""
    _, new = _render(deployed.release, lambda d: d["slurm"]["accounting"].update(port=6829))
    plan = actions(deployed.files, new, deployed.release)
    etc = deployed.box.etc
    port = harness.free_port()
    _set_port(etc / "slurmdbd.conf", "DbdPort", port)
    _set_port(etc / "slurm.conf", "AccountingStoragePort", port)
    deployed.cluster.scontrol("reconfigure")  # the lesser action
    time.sleep(2.0)
    assert not listening(port)
    for action in plan:
        if action.kind == "restart-slurmdbd":
            harness._stop(deployed.dbd)
            deployed.dbd = ah.start_slurmdbd(deployed.box, deployed.db, port)
        elif action.kind == "reconfigure":
            deployed.cluster.scontrol("reconfigure")
        elif action.kind != "none":
            raise AssertionError(f"this test cannot run {action.kind}")
    assert listening(port)
    assert "normal" in deployed.sacctmgr_qos()  # sacctmgr reaches slurmdbd on the new port
    config = deployed.cluster.scontrol("show", "config")
    assert re.search(rf"^AccountingStoragePort\s*=\s*{port}$", config, re.M), config


def test_old_order_fails_on_26_05(tmp_path: Path) -> None:
    """Why the plan creates the QOS first: slurmctld 26.05 started before them refuses to
    start on the seed's AllowQos."""
    with pytest.raises(harness.HarnessError, match=r"(?i)AllowQOS"):
        for _ in _up("26.05", tmp_path, order="slurmctld first"):
            pass
