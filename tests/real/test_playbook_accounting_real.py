"""The rendered playbook (ansible/site.yml) applies accounting changes on real MariaDB, slurmdbd
and slurmctld of 22.05, 24.11 and 26.05: the seed example brought up as
test_first_deployment_real does (its sandbox, policy_cluster's, rewrites listed there), then

1. a QOS added to the spec: the change plan says ``accounting`` only; ansible-playbook installs
   the new accounting.sh on the controller, runs it, and nothing else, and sacctmgr lists the
   QOS (it did not before);
2. the accounting port changed: the plan says ``restart-slurmdbd`` then ``reconfigure``;
   ansible-playbook restarts slurmdbd (a new process, listening on the new port) and
   reconfigures slurmctld, nothing else, and sacctmgr and slurmctld reach slurmdbd there.

The playbook's ``systemctl``, ``scontrol`` and accounting commands reach the sandbox's daemons
through ``Admin`` below (tests/real/playbook_harness.py's request server): it copies what the
playbook installed on the controller into the sandbox's /etc/slurm with the harness's
rewrites (accounting_harness._rewrite_slurm_conf and _rewrite_slurmdbd_conf: this host, the
test's user, free ports: each rendered port is given a free port of its own).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, cast

import pytest

from cluster_iac.change.change_plan import as_json, change_plan
from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness
from tests.real.change_harness import listening
from tests.real.playbook_harness import (
    RequestServer,
    ansible_playbook,
    extra_vars,
    recap,
    run_playbook,
)
from tests.real.test_first_deployment_real import Deployed, _render, _up

pytestmark = pytest.mark.real

RELEASES = ("22.05", "24.11", "26.05")
KEPT = ("SlurmctldPort", "SlurmdPort")  # the free ports the sandbox's daemons listen on


def _keys(text: str, keys: tuple[str, ...]) -> dict[str, str]:
    return {k: v for k, _, v in (line.partition("=") for line in text.splitlines())
            if k in keys}


class Admin(RequestServer):
    """The controller's (and DbdHost's) service manager for the deployed sandbox."""

    def __init__(self, up: Deployed, roots: Path, controller: str, dbd_port: int) -> None:
        super().__init__(up.box.work / "requests", roots)
        self.up, self.controller = up, controller
        self.ports = {self._rendered("slurmdbd.conf", "DbdPort"): dbd_port}

    def _installed(self, name: str) -> Path:
        return self.roots / self.controller / "etc" / "slurm" / name

    def _rendered(self, name: str, key: str) -> int:
        text = (self._installed(name).read_text() if self._installed(name).exists()
                else self.up.files[f"slurm/{name}"])
        found = re.search(rf"^{key}=(\d+)$", text, re.M)
        return int(found.group(1)) if found else 6819  # slurmdbd.conf(5): DbdPort's default

    def _port(self) -> int:
        """The free port that stands for the installed slurmdbd.conf's DbdPort."""
        rendered = self._rendered("slurmdbd.conf", "DbdPort")
        return self.ports.setdefault(rendered, harness.free_port())

    def _sync(self, name: str) -> None:
        target = self.up.box.etc / name
        kept = _keys(target.read_text(), KEPT) if name == "slurm.conf" else {}
        shutil.copy(self._installed(name), target)
        if name == "slurmdbd.conf":
            ah._rewrite_slurmdbd_conf(self.up.box, self._port())
        elif name == "slurm.conf":
            ah._rewrite_slurm_conf(self.up.box, self._port(), self.up.box.runtime)
            # the running daemons' ports stay (the rewrite picks new free ones)
            target.write_text("".join(
                f"{line.split('=', 1)[0]}={kept[line.split('=', 1)[0]]}\n"
                if line.split("=", 1)[0] in kept else line + "\n"
                for line in target.read_text().splitlines()))

    def handle(self, argv: list[str], host: str) -> tuple[int, str]:
        if argv == ["scontrol", "ping"]:
            return 0, self.up.cluster.scontrol("ping")
        self.log.append((*argv, host))
        if argv[:1] in (["sh"], ["sacctmgr"]):
            self._sync("accounting.sh")
            result = self.up.box.run(argv, timeout=300)
            return result.returncode, result.stdout + result.stderr
        if argv == ["restart", "slurmdbd"]:
            self._sync("slurmdbd.conf")
            harness._stop(self.up.dbd)
            self.up.dbd = ah.start_slurmdbd(self.up.box, self.up.db, self._port())
            return 0, ""
        if argv == ["scontrol", "reconfigure"]:
            self._sync("slurm.conf")
            self.up.cluster.scontrol("reconfigure")
            return 0, ""
        return 1, f"the sandbox runs no {argv!r}\n"


def _write(files: dict[str, str], tree: Path) -> None:
    shutil.rmtree(tree, ignore_errors=True)
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)


def _plan(old: dict[str, str], new: dict[str, str], release: str, path: Path
          ) -> list[dict[str, Any]]:
    """`cluster-iac changes --format json` of the two trees, for the release."""
    data = as_json(change_plan(old, new, None, "", [release]))
    path.write_text(json.dumps(data))
    return data["actions"][release]  # type: ignore[index, no-any-return]


@pytest.mark.parametrize("release", RELEASES)
def test_the_playbook_runs_exactly_the_planned_accounting_actions(
        release: str, tmp_path: Path) -> None:
    ansible_playbook()
    deployment = cast(Generator[Deployed, None, None], _up(release, tmp_path / "up"))
    up = next(deployment)
    try:
        controller = next(d.name for d in up.plan.devices if d.role == "controller")
        assert up.plan.scheduling.accounting.dbd_host == controller  # type: ignore[union-attr]
        admin = Admin(up, tmp_path / "roots", controller, _dbd_port(up))
        sandbox = extra_vars(tmp_path, admin)

        def play(new: dict[str, str], step: str) -> list[dict[str, Any]]:
            """The change plan of up.files -> new, then ansible-playbook on the controller
            (the DbdHost too) with it; the plan's actions."""
            actions = _plan(up.files, new, release, tmp_path / f"{step}.json")
            tree = tmp_path / "tree"
            _write(new, tree)
            admin.log.clear()
            result = run_playbook(tree, tmp_path / f"{step}.json", release, sandbox,
                                  tmp_path, "--limit", controller)
            assert result.returncode == 0, result.stdout[-6000:] + result.stderr
            assert all(r["failed"] == 0 for r in recap(result.stdout).values())
            up.files = new
            return actions

        # the daemons the server restarts are children of its thread: one for the test
        with admin:
            _steps(release, up, admin, controller, play)
    finally:
        deployment.close()  # stops the daemons


def _steps(release: str, up: Deployed, admin: Admin, controller: str,
           play: Callable[[dict[str, str], str], list[dict[str, Any]]]) -> None:
    # 1. a QOS added: accounting.sh re-run, nothing else
    _, new = _render(release, lambda d: d["slurm"]["qos"].append({"name": "debug"}))
    assert "debug" not in up.sacctmgr_qos()
    actions = play(new, "qos")
    assert [a["kind"] for a in actions] == ["accounting"]
    assert admin.log == [("sh", "/etc/slurm/accounting.sh", "")]
    assert "debug" in up.sacctmgr_qos()

    # 2. the accounting port: slurmdbd restarted (a new process on the new port), then
    # slurmctld reconfigured; nothing else
    dbd_pid = up.dbd.pid
    def port_changed(data: dict[str, Any]) -> None:
        data["slurm"]["qos"].append({"name": "debug"})  # kept from step 1
        data["slurm"]["accounting"].update(port=6829)

    _, new = _render(release, port_changed)
    actions = play(new, "port")
    assert [a["kind"] for a in actions] == ["restart-slurmdbd", "reconfigure"]
    assert admin.log == [("restart", "slurmdbd", controller), ("scontrol", "reconfigure", "")]
    port = admin.ports[6829]
    assert up.dbd.pid != dbd_pid and listening(port)
    assert "debug" in up.sacctmgr_qos()  # sacctmgr reaches slurmdbd on the new port
    config = up.cluster.scontrol("show", "config")
    assert re.search(rf"^AccountingStoragePort\s*=\s*{port}$", config, re.M), config


def _dbd_port(up: Deployed) -> int:
    found = re.search(r"^DbdPort=(\d+)$", (up.box.etc / "slurmdbd.conf").read_text(), re.M)
    assert found, "the sandbox's slurmdbd.conf has no DbdPort"
    return int(found.group(1))
