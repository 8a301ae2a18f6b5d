"""A first deployment (cluster_iac/plan/actions.py: ``actions(None, files, release)``) brings the
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from cluster_iac.plan.actions import Action, actions
from tests.facility_fixtures import compile_data
from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness
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

    def sacctmgr_qos(self) -> set[str]:
        out = self.cluster.run("sacctmgr", "--noheader", "--parsable2", "show", "qos",
                               "format=Name")
        return set(out.split())


def _render(release: str, extra_qos: str | None = None) -> tuple[Plan, dict[str, str]]:
    data = example_data(EXAMPLE, release)
    if extra_qos:
        data["slurm"]["qos"].append({"name": extra_qos})
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
    outputs: list[tuple[str, Any]] = []
    dbd = None
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
                dbd = ah.start_slurmdbd(box, db, dbd_port)
            elif step.kind == "accounting":
                _commands(box, step, outputs)
            elif step.kind == "restart-slurmctld":
                cluster.start()
            elif step.kind == "restart-slurmd":
                cluster.register("compute01", 2, 64, 2, 8)
        yield Deployed(release, plan, files, steps, box, cluster, outputs)
    finally:
        cluster.stop()
        if dbd is not None:
            harness._stop(dbd)
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
    _, new = _render(deployed.release, extra_qos="debug")
    plan = actions(deployed.files, new, deployed.release)
    assert [a.kind for a in plan] == ["accounting"]
    (deployed.box.etc / "accounting.sh").write_text(new["slurm/accounting.sh"])
    deployed.cluster.scontrol("reconfigure")
    assert "debug" not in deployed.sacctmgr_qos()
    outputs: list[tuple[str, Any]] = []
    _commands(deployed.box, plan[0], outputs)
    assert [r.returncode for _, r in outputs] == [0]
    assert "debug" in deployed.sacctmgr_qos()


def test_old_order_fails_on_26_05(tmp_path: Path) -> None:
    """Why the plan creates the QOS first: slurmctld 26.05 started before them refuses to
    start on the seed's AllowQos."""
    with pytest.raises(harness.HarnessError, match=r"(?i)AllowQOS"):
        for _ in _up("26.05", tmp_path, order="slurmctld first"):
            pass
