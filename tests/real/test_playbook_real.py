"""The rendered playbook (ansible/site.yml, emit/playbook.py) run by real ansible-playbook, its
actions carried out on real slurmctld/slurmd (tests/real/playbook_harness.py says what the
sandbox changes and why).

One sequence per Slurm release, on the minimal example through the CLI's commands as an operator
runs them (`cluster-iac changes ... --format json` before `cluster-iac render`, in-process, then
ansible-playbook):
1. a first deployment: the bring-up order runs, slurmctld and slurmd come up with no error line,
   every file is in place with its owner and mode;
2. the same again: 0 changed tasks and no action;
3. a rack added (the example's node group grown by a rack's worth of nodes, r01's two, into a
   new rack r02 with its PDU): --check --diff shows exactly the files that changed, the run
   makes the new nodes known to slurmctld, puts every file in place and restarts only what the
   plan names (process ids); Prometheus, started by the bring-up, sees the new nodes' targets
   without a reload (file_sd);
4. a health-check-only change: the script is replaced (0755) and nothing is restarted;
5. a breaker's rating changed: only the power alert rules change; the plan says
   ``reload-prometheus``, the playbook reloads Prometheus (same process) and nothing else, and
   Prometheus serves the new rules.

Where each step's ansible-playbook runs (a run of this example is ~15 s of CPU on 2 cores:
running steps 2, 4 and 5 once instead of three times took the file from 347 to 258 s of CPU,
measured under load):
- steps 1 and 3 run on every release: their plans differ by release (the bring-up's restarts;
  a rack added is ``restart-slurmctld`` + ``restart-slurmd`` on 22.05, ``reconfigure`` on 24.11
  and 26.05, both then ``start-slurmd``), their actions reach that release's slurmctld and slurmd
  (the slurm.conf it accepts, its scontrol's answers, its log's error lines), and step 3's
  --check run asks that release's scontrol for the nodes of its own kinds (a query check mode
  runs) and must run none of them;
- steps 2, 4 and 5 run ansible-playbook on ``EVERY_STEP`` only: their plans are the same on every
  release (no action; ``none``; ``reload-prometheus``), and what their runs assert touches no
  Slurm daemon: the playbook's idempotence (which files it copies, the same tasks whatever the
  release), a file's mode, Prometheus's reload. Their change plans are still taken and asserted
  on every release (in-process, ~1 s each), so a release whose table planned a restart there
  fails its own test.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.base.hostlist import expand
from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.slurm_actions import entry
from cluster_iac.change.actions import actions as change_actions
from cluster_iac.change.change_plan import as_json, change_plan
from cluster_iac.cli.main import main
from cluster_iac.plan.host_rails import host_rails, rail_config
from tests.conftest import EXAMPLE_IDS, example_build
from tests.real import netns
from tests.real.change_harness import LiveSlurm
from tests.real.playbook_harness import (
    RequestServer,
    Services,
    ansible_playbook,
    changed_files,
    extra_vars,
    netplan_stand_in,
    recap,
    run_playbook,
)
from tests.real.test_change_actions_real import require
from tests.slurm_fixtures import example_data

pytestmark = pytest.mark.real

RELEASES = ("22.05", "24.11", "26.05")
EVERY_STEP = RELEASES[-1]  # the release whose test also runs steps 2, 4 and 5 (see above)
EXAMPLE = "minimal"
CONTROLLER = "head1"
LIVE_NODE = "gpu01"
ACCOUNTING_EXAMPLE = "seed-64gpu-h100"
IMEX_EXAMPLE = "gb200-nvl72"


def cli(*args: str) -> str:
    """The CLI command, run in this process (click's CliRunner: the same command and
    options an operator's ``cluster-iac`` runs; the entry point itself is tested by
    tests/test_cli.py and tests/real/test_wheel.py): a subprocess per call spent ~1.3 s of
    CPU starting Python and importing the tool again, 39 calls in this file."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0 and "error[" not in result.stderr, (
        result.stderr, result.exception)
    return result.stdout


class Deployment:
    """The spec, its rendered tree and the hosts, moved on one change at a time."""

    def __init__(self, work: Path, release: str) -> None:
        self.work, self.release = work, release
        self.spec = work / "spec" / "cluster.yaml"
        self.spec.parent.mkdir()
        self.tree = work / "tree"
        self.data: dict[str, Any] = example_data(EXAMPLE, release)
        self.step = 0

    def change(self) -> tuple[dict[str, Any], Path, dict[str, str]]:
        """The spec written (JSON is YAML), its change plan taken, then the tree rendered;
        the plan, its file, and the rendered files that changed {path: text}."""
        self.step += 1
        self.spec.write_text(json.dumps(self.data))
        before = _files(self.tree)
        plan_path = self.work / f"changes-{self.step}.json"
        plan_path.write_text(cli("changes", str(self.spec), "-o", str(self.tree), "--format",
                                 "json", "--release", self.release))
        cli("render", str(self.spec), "-o", str(self.tree))
        after = _files(self.tree)
        changed = {p: t for p, t in after.items() if before.get(p) != t}
        return json.loads(plan_path.read_text()), plan_path, changed


def _files(tree: Path) -> dict[str, str]:
    if not tree.exists():
        return {}
    return {str(p.relative_to(tree)): p.read_text() for p in tree.rglob("*")
            if p.is_file() and p.name != ".cluster-iac-manifest"}


def _actions(plan: dict[str, Any], release: str) -> list[dict[str, Any]]:
    return plan["actions"][release]


def _unit_hosts(tree: Path, causes: list[str]) -> list[str]:
    """The hosts the playbook restarts a service on for an action: the inventory hosts of
    its files' patterns (site.yml's cluster_iac_file_hosts), in inventory order."""
    from ruamel.yaml import YAML

    plays = YAML(typ="safe").load((tree / "ansible" / "site.yml").read_text())
    patterns = plays[-1]["vars"]["cluster_iac_file_hosts"]
    groups = _inventory(tree)["all"]["children"]
    hosts: list[str] = []
    for part in ":".join(patterns[c] for c in causes if c in patterns).split(":"):
        if part.endswith("[0]"):
            found = [next(iter(groups[part[:-3]]["hosts"]))]
        else:
            found = list(groups[part]["hosts"]) if part in groups else [part]
        hosts += [h for h in found if h not in hosts]
    all_hosts = list(_inventory(tree)["all"]["hosts"])
    return sorted(hosts, key=all_hosts.index)


UNITS = {"restart-opensm": "opensm", "restart-lnet": "lnet", "restart-imex": "nvidia-imex",
         "restart-dcgm-exporter": "dcgm-exporter",
         "restart-snmp-exporter": "prometheus-snmp-exporter", "reload-prometheus": "prometheus"}


def _expected_log(actions: list[dict[str, Any]], tree: Path) -> list[tuple[str, ...]]:
    """What the service manager must be asked, in order, for the planned actions."""
    log: list[tuple[str, ...]] = []
    for a in actions:
        if a["kind"] == "drain":
            log.append(("scontrol", "update", f"nodename={a['hosts']}", "state=DRAIN",
                        "reason=cluster-iac-change"))
        elif a["kind"] == "resume":
            log.append(("scontrol", "update", f"nodename={a['hosts']}", "state=RESUME"))
        elif a["kind"] == "reconfigure":
            log.append(("scontrol", "reconfigure"))
        elif a["kind"] == "restart-slurmctld":
            log.append(("slurmctld", CONTROLLER))
        elif a["kind"] == "restart-slurmd":
            log += [("slurmd", host) for host in expand(a["hosts"])]
        elif a["kind"] == "start-slurmd":
            log += [("slurmd-start", host) for host in expand(a["hosts"])]
        elif a["kind"] in UNITS:
            log += [(UNITS[a["kind"]], host) for host in _unit_hosts(tree, a["causes"])]
        else:
            assert a["kind"] in ("none", "new-jobs"), f"the minimal example plans {a['kind']}"
    return log


def _assert_installed(roots: Path, tree: Path, inventory: dict[str, Any]) -> None:
    """Every Slurm, health-check and NCCL file on every host that needs it, byte for byte,
    with its mode (0755 for the health check)."""
    hosts = inventory["all"]["children"]
    slurm_hosts = set(hosts["controllers"]["hosts"]) | set(hosts["compute"]["hosts"])
    for host in slurm_hosts:
        for name in ("slurm.conf", "gres.conf", "cgroup.conf"):
            path = roots / host / "etc" / "slurm" / name
            assert path.read_text() == (tree / "slurm" / name).read_text(), (host, name)
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    for host in hosts["compute"]["hosts"]:
        check = roots / host / "etc" / "slurm" / "healthcheck.sh"
        assert check.read_text() == (tree / "slurm" / "healthcheck" / "gpu.sh").read_text()
        assert stat.S_IMODE(check.stat().st_mode) == 0o755
        assert ((roots / host / "etc" / "nccl.conf").read_text()
                == (tree / "nccl" / "gpu.nccl.conf").read_text())
    assert not (roots / CONTROLLER / "etc" / "slurm" / "healthcheck.sh").exists()
    # only the hosts that need files get any (no PDU, no switch)
    assert {p.name for p in roots.iterdir()} == slurm_hosts


@pytest.mark.parametrize("release", RELEASES)
def test_playbook_deploys_grows_and_restarts_only_what_the_plan_names(
        release: str, tmp_path: Path) -> None:
    runtime = require(release)
    ansible_playbook()
    if shutil.which("prometheus") is None:  # the bring-up starts a real one
        if os.environ.get("CI"):
            pytest.fail("prometheus is missing: apt-get install prometheus (.ci/install-deps)")
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    deployment = Deployment(tmp_path, release)
    roots = tmp_path / "roots"
    services = Services(LiveSlurm(tmp_path / "slurm", runtime), roots, CONTROLLER, LIVE_NODE)
    sandbox_vars = extra_vars(tmp_path, services)

    def play(plan_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        result = run_playbook(deployment.tree, plan_path, release, sandbox_vars, tmp_path,
                              *extra)
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr
        assert all(r["failed"] == 0 for r in recap(result.stdout).values()), result.stdout
        return result

    # the daemons are children of the service thread (they die with it): one for the test
    with services:
        _sequence(release, deployment, services, play, roots)


def _sequence(release: str, deployment: Deployment, services: Services,
              play: Callable[..., subprocess.CompletedProcess[str]], roots: Path) -> None:
    try:
        # 1. the first deployment: the bring-up order, no error line
        plan, plan_path, _ = deployment.change()
        assert plan["first_deployment"] is True
        first = play(plan_path)
        installed_before = changed_files(first.stdout)
        assert services.log == _expected_log(_actions(plan, release), deployment.tree)
        assert services.live.ctl.node(LIVE_NODE).get("State", "").startswith("IDLE")
        errors = services.live.ctl.log_errors("slurmctld") + services.live.ctl.log_errors(
            f"slurmd-{LIVE_NODE}")
        assert errors == [], errors
        inventory = _inventory(deployment.tree)
        _assert_installed(roots, deployment.tree, inventory)
        _assert_every_file(roots, deployment.tree, inventory)
        rules = services.prometheus_api("/api/v1/rules")["data"]["groups"]  # type: ignore[index]
        assert {g["file"] for g in rules} == {
            str(roots / CONTROLLER / "etc/prometheus/rules" / p.name)
            for p in (deployment.tree / "monitoring" / "rules").iterdir()}

        # 2. nothing changed: nothing done
        services.log.clear()
        plan, plan_path, changed = deployment.change()
        assert changed == {} and _actions(plan, release) == []
        if release == EVERY_STEP:
            result = play(plan_path)
            assert sum(r["changed"] for r in recap(result.stdout).values()) == 0, result.stdout
            assert services.log == []

        # 3. a rack added: check mode shows the changed files, the run applies the plan
        services.log.clear()
        group = deployment.data["node_groups"][0]
        per_rack = group["count"]  # the example's one rack holds them all: a rack's worth
        group["count"] += per_rack
        group["racks"] = "r[01-02]"
        deployment.data["rows"][0]["racks"][0]["names"] = "r[01-02]"  # its PDU profile too
        pids = services.pids()
        plan, plan_path, changed = deployment.change()
        new_nodes = [f"gpu{n:02d}" for n in range(per_rack + 1, 2 * per_rack + 1)]
        assert plan["objects"]["Slurm nodes"]["added"] == new_nodes, plan["objects"]
        inventory = _inventory(deployment.tree)
        children = inventory["all"]["children"]
        assert set(children["rack_r02"]["hosts"]) & set(children["compute"]["hosts"]) == set(
            new_nodes)  # the new rack holds the new nodes (and its PDUs)
        check = play(plan_path, "--check", "--diff")
        assert services.log == [] and services.pids() == pids  # check mode runs nothing
        assert "--- before" in check.stdout  # the diffs are shown
        every = {(h, src) for h, src in changed_files(first.stdout) if h == LIVE_NODE}
        old_hosts = {h for h, _ in installed_before}
        expected = {(h, p) for h in old_hosts for p in changed if (h, p) in installed_before}
        expected |= {(n, src) for n in new_nodes for _, src in every}  # new hosts: everything
        assert changed_files(check.stdout) == expected, (changed_files(check.stdout), expected)
        causes = [c for a in _actions(plan, release) for c in a["causes"]]
        for _, src in expected - {(n, src) for n in new_nodes for _, src in every}:
            # the plan's files: each a cause, or one whose change needs nothing (file_sd targets)
            nothing = entry(f"file:{src}", release).needs == (("none", ""),)
            assert nothing or any(c.startswith(src) for c in causes), (src, causes)
        play(plan_path)
        actions = _actions(plan, release)
        assert services.log == _expected_log(actions, deployment.tree)
        for node in new_nodes:
            assert "State=" in services.live.ctl.scontrol("show", "node", node)
        _assert_installed(roots, deployment.tree, inventory)
        _assert_every_file(roots, deployment.tree, inventory)
        kinds = {a["kind"]: a for a in actions}
        now = services.pids()
        assert (now["slurmctld"] != pids["slurmctld"]) == ("restart-slurmctld" in kinds)
        restarted = expand(kinds["restart-slurmd"]["hosts"]) if "restart-slurmd" in kinds else []
        assert (now[LIVE_NODE] != pids[LIVE_NODE]) == (LIVE_NODE in restarted)
        assert now["prometheus"] == pids["prometheus"] and "reload-prometheus" not in kinds
        assert services.live.ping()
        _wait_for_targets(services, new_nodes)  # file_sd: no reload needed, none planned

        # 4. a health-check-only change restarts nothing
        services.log.clear()
        deployment.data.setdefault("slurm", {}).setdefault("health_check", {})[
            "tool_timeout"] = "20s"
        pids = services.pids()
        plan, plan_path, changed = deployment.change()
        assert set(changed) == {"slurm/healthcheck/gpu.sh"}, set(changed)
        assert [a["kind"] for a in _actions(plan, release)] == ["none"]
        if release != EVERY_STEP:  # steps 4 and 5 without ansible-playbook: their plans only
            _breaker_changed(deployment, release)
            return
        result = play(plan_path)
        assert services.log == [] and services.pids() == pids
        changed_hosts = {h for h, r in recap(result.stdout).items() if r["changed"]}
        assert changed_hosts == {f"gpu{n:02d}" for n in range(1, 2 * per_rack + 1)}, result.stdout
        _assert_installed(roots, deployment.tree, _inventory(deployment.tree))

        # 5. a breaker changed: only Prometheus's power rules change; it is reloaded (the same
        # process, SIGHUP) and serves the new thresholds; no Slurm daemon is touched
        services.log.clear()
        pids = services.pids()
        plan_path = _breaker_changed(deployment, release)
        play(plan_path)
        assert services.log == [("prometheus", CONTROLLER)] and services.pids() == pids
        _wait_for_rules(services, deployment.tree / "monitoring" / "rules" / "power.yml")
    finally:
        services.live.stop()


def _breaker_changed(deployment: Deployment, release: str) -> Path:
    """Step 5's change and its plan's assertions; the plan's file."""
    deployment.data["power"]["pdu_profiles"]["three-415v"]["breaker_a"] = 40
    plan, plan_path, changed = deployment.change()
    assert "monitoring/rules/power.yml" in changed
    assert [(a["kind"], a["causes"]) for a in _actions(plan, release)] == [
        ("reload-prometheus", ["monitoring/rules/power.yml"])]
    return plan_path


def _wait_for_rules(services: Services, rules: Path) -> None:
    """Prometheus serves the rule file's expressions (it reloads after SIGHUP)."""
    from ruamel.yaml import YAML

    wanted = {r["expr"] for g in YAML(typ="safe").load(rules.read_text())["groups"]
              for r in g["rules"]}
    deadline = time.monotonic() + 60
    served: set[str] = set()
    while time.monotonic() < deadline:
        groups = services.prometheus_api("/api/v1/rules")["data"]["groups"]  # type: ignore[index]
        served = {r["query"] for g in groups if g["file"].endswith("/" + rules.name)
                  for r in g["rules"]}
        if served == wanted:
            return
        time.sleep(0.5)
    raise AssertionError(f"Prometheus serves {sorted(served)}, not {sorted(wanted)}")


def _host_vars(inventory: dict[str, Any], host: str) -> dict[str, Any]:
    found = dict(inventory["all"]["vars"])
    for group in inventory["all"]["children"].values():
        if host in (group.get("hosts") or {}):
            found.update(group.get("vars", {}))
    return found


def _pattern_hosts(inventory: dict[str, Any], pattern: str) -> set[str]:
    groups = inventory["all"]["children"]
    hosts: set[str] = set()
    for part in pattern.split(":"):
        if part.endswith("[0]"):
            hosts.add(next(iter(groups[part[:-3]]["hosts"])))
        else:
            hosts |= set(groups[part]["hosts"]) if part in groups else {part}
    return hosts


def _assert_every_file(roots: Path, tree: Path, inventory: dict[str, Any]) -> None:
    """Every file of site.yml's install plays on every host of the play, read from the
    playbook itself: whole files byte for byte with their mode, merged lines present; and no
    host without an install play got anything."""
    from ruamel.yaml import YAML

    plays = YAML(typ="safe").load((tree / "ansible" / "site.yml").read_text())
    served: set[str] = set()
    for play in plays:
        if not play["name"].startswith("install the rendered files of "):
            continue
        hosts = _pattern_hosts(inventory, play["hosts"])
        served |= hosts
        items = [i for t in play["tasks"] if t["name"] == "the files" for i in t["loop"]]
        for host in hosts:
            values = _host_vars(inventory, host)
            for item in items:
                source = tree / item["src"]
                if not source.is_file():
                    continue
                dest = item["dest"]
                for name, value in values.items():
                    dest = dest.replace(f"{{{{ {name} }}}}", str(value))
                path = roots / host / dest.lstrip("/")
                assert path.read_bytes() == source.read_bytes(), (host, item)
                assert stat.S_IMODE(path.stat().st_mode) == int(item["mode"], 8), (host, item)
    assert {p.name for p in roots.iterdir()} == served


def _wait_for_targets(services: Services, nodes: list[str]) -> None:
    """Prometheus lists the nodes among its node_exporter targets (file_sd re-reads the
    targets files itself; it refreshes every 5 s)."""
    deadline = time.monotonic() + 60
    seen: set[str] = set()
    while time.monotonic() < deadline:
        answer = services.prometheus_api("/api/v1/targets?state=active")
        seen = {t["labels"].get("instance", "") for t in answer["data"]["activeTargets"]}  # type: ignore[index]
        if set(nodes) <= seen:
            return
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never listed {nodes}: {sorted(seen)}")


def _inventory(tree: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load((tree / "ansible" / "inventory.yml").read_text())


def test_a_refused_or_missing_plan_stops_before_anything_is_installed(tmp_path: Path) -> None:
    """The first play fails without a plan for the release, so the check above can fail."""
    ansible_playbook()
    tree = tmp_path / "tree"
    spec = tmp_path / "cluster.yaml"
    spec.write_text(json.dumps(example_data(EXAMPLE)))
    cli("render", str(spec), "-o", str(tree))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "actions": {"22.05": [
        {"kind": "lustre-rewrite", "hosts": "", "why": "", "commands": [], "causes": [],
         "citation": "", "refused": True, "tested": False}]}}))
    roots = tmp_path / "roots"
    sandbox = tmp_path / "vars.json"
    sandbox.write_text(json.dumps({"ansible_connection": "local",
                                   "ansible_python_interpreter": sys.executable,
                                   "cluster_iac_root": f"{roots}/{{{{ inventory_hostname }}}}",
                                   "cluster_iac_netplan_apply": netplan_stand_in(roots)}))
    for release in ("22.05", "24.11"):  # refused; not in the plan
        result = run_playbook(tree, plan, release, sandbox, tmp_path)
        assert result.returncode != 0
        assert "a refused action is applied by hand" in result.stdout, result.stdout
        assert not roots.exists()


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_examples_playbook_passes_the_syntax_check(name: str, tmp_path: Path) -> None:
    """site.yml, and each action kind's file: site.yml includes them by a name known only
    per action (include_tasks, which --syntax-check does not follow), so a playbook beside it
    imports every one (import_tasks: read and checked now)."""
    tree = tmp_path / "tree"
    for path, text in example_build(name).files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    kinds = sorted(p.name for p in (tree / "ansible" / "actions").glob("*.yml"))
    assert len(kinds) > 10
    checked = tree / "ansible" / "syntax-check.yml"
    checked.write_text(json.dumps([
        {"import_playbook": "site.yml"},
        {"hosts": "localhost", "gather_facts": False,
         "tasks": [{"ansible.builtin.import_tasks": f"actions/{kind}"} for kind in kinds]}]))
    result = subprocess.run([ansible_playbook(), "--syntax-check", "-i",
                             str(tree / "ansible" / "inventory.yml"), str(checked)],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "ANSIBLE_CONFIG": str(tmp_path / "none.cfg"),
                                 "ANSIBLE_HOME": str(tmp_path / "home"),
                                 "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout + result.stderr, result.stdout + result.stderr


def _example_tree(name: str, tmp_path: Path) -> tuple[Path, Path, str, Path, Path]:
    """The example rendered by the CLI, its change plan (nothing changed) and its release,
    the sandbox variables (files only: no action runs) and the hosts' roots."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(f"examples/{name}.yaml", spec)
    shutil.copy(f"examples/{name}.lock", tmp_path / "cluster.lock")
    tree, roots = tmp_path / "tree", tmp_path / "roots"
    cli("render", str(spec), "-o", str(tree))
    plan = tmp_path / "plan.json"
    plan.write_text(cli("changes", str(spec), "-o", str(tree), "--format", "json"))
    actions = json.loads(plan.read_text())["actions"]
    release = next(iter(actions))
    assert {a["kind"] for a in actions[release]} <= {"none"}, actions
    sandbox = tmp_path / "vars.json"
    sandbox.write_text(json.dumps({"ansible_connection": "local",
                                   "ansible_python_interpreter": sys.executable,
                                   "cluster_iac_root": f"{roots}/{{{{ inventory_hostname }}}}",
                                   "cluster_iac_netplan_apply": netplan_stand_in(roots)}))
    return tree, plan, release, sandbox, roots


def test_accounting_and_lnet_files_get_their_owner_and_mode(tmp_path: Path) -> None:
    """The seed example (slurmdbd, accounting, a health check, NCCL, LNet, Lustre clients and
    servers, OpenSM, monitoring): each file on the hosts that read it, slurmdbd.conf readable
    by SlurmUser only, the fstab line replacing the old line of its mount point, the format
    scripts root-only, nothing on a PDU; then a rerun changes nothing. One host of each kind
    (--limit: the test machine has 2 cores)."""
    ansible_playbook()
    tree, plan, release, sandbox, roots = _example_tree(ACCOUNTING_EXAMPLE, tmp_path)
    children = _inventory(tree)["all"]["children"]
    dbd = _dbd_host(tree)
    lnet_hosts = {}
    for lnet in sorted((tree / "lustre" / "lnet").iterdir()):
        group = next(g for n, g in children.items() if n.startswith("type_")
                     and g.get("vars", {}).get("cluster_iac_name") == lnet.stem)
        lnet_hosts[next(iter(group["hosts"]))] = lnet
    controller, compute, pdu = (next(iter(children[g]["hosts"]))
                                for g in ("controllers", "compute", "pdus"))
    picked = {controller, compute, pdu, dbd, *lnet_hosts}
    # the client's /etc/fstab before: its own root line, and an old line for the Lustre mount
    fstab = roots / compute / "etc" / "fstab"
    fstab.parent.mkdir(parents=True)
    lustre_line = next(line for line in (tree / "lustre/clients/fstab").read_text().splitlines()
                       if not line.startswith("#"))
    mount_point = lustre_line.split()[1]
    fstab.write_text(f"/dev/sda1 / ext4 defaults 0 1\nold@tcp:/x {mount_point} lustre ro 0 0\n")
    first = run_playbook(tree, plan, release, sandbox, tmp_path, "--limit", ",".join(picked))
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr
    assert fstab.read_text() == f"/dev/sda1 / ext4 defaults 0 1\n{lustre_line}\n"
    for tool in ("lustre-mount.sh", "lustre-tune.sh", "lustre-setstripe.sh"):
        assert stat.S_IMODE((roots / compute / "usr/local/sbin" / tool).stat().st_mode) == 0o755
    for server in (h for h in picked if (tree / "lustre/servers" / f"{h}.sh").exists()):
        format_script = roots / server / "usr/local/sbin/lustre-format-targets.sh"
        assert format_script.read_text() == (tree / "lustre/servers" / f"{server}.sh").read_text()
        assert stat.S_IMODE(format_script.stat().st_mode) == 0o700  # installed, never run
    masters = {"opensm.conf": "mds1", "opensm-standby.conf": "oss1"}  # the seed's SM hosts
    assert set(masters.values()) <= picked
    for name, sm_host in masters.items():
        opensm = roots / sm_host / "etc" / "opensm"
        assert (opensm / "opensm.conf").read_text() == (tree / "opensm/compute" / name).read_text()
        assert (opensm / "partitions.conf").is_file()
    prometheus = roots / controller / "etc" / "prometheus"
    assert ((prometheus / "rules" / "power.yml").read_text()
            == (tree / "monitoring/rules/power.yml").read_text())
    assert (prometheus / "targets" / "node.json").is_file() and (prometheus / "snmp.yml").is_file()
    assert (roots / compute / "etc/dcgm-exporter/dcgm-counters.csv").is_file()
    conf = roots / dbd / "etc" / "slurm" / "slurmdbd.conf"
    assert conf.read_text() == (tree / "slurm" / "slurmdbd.conf").read_text()
    assert (stat.S_IMODE(conf.stat().st_mode), conf.owner()) == (0o600, "slurm")
    script = roots / dbd / "etc" / "slurm" / "slurmdbd-storage-pass.sh"
    assert (stat.S_IMODE(script.stat().st_mode), script.owner()) == (0o700, "root")
    assert (roots / controller / "etc" / "slurm" / "accounting.sh").is_file()
    check = roots / compute / "etc" / "slurm" / "healthcheck.sh"
    assert check.read_text() == next((tree / "slurm" / "healthcheck").iterdir()).read_text()
    assert stat.S_IMODE(check.stat().st_mode) == 0o755
    assert not (roots / compute / "etc" / "slurm" / "slurmdbd.conf").exists()
    for host, lnet in lnet_hosts.items():
        assert (roots / host / "etc" / "lnet.conf").read_text() == lnet.read_text()
    assert {p.name for p in roots.iterdir()} == picked - {pdu}
    again = run_playbook(tree, plan, release, sandbox, tmp_path, "--limit", ",".join(picked))
    assert again.returncode == 0, again.stdout[-6000:]
    assert sum(r["changed"] for r in recap(again.stdout).values()) == 0, again.stdout


def _dbd_host(tree: Path) -> str:
    for line in (tree / "slurm" / "slurmdbd.conf").read_text().splitlines():
        if line.startswith("DbdHost="):
            return line.split("=", 1)[1]
    raise AssertionError("no DbdHost")


def test_each_imex_node_gets_its_own_domains_peers(tmp_path: Path) -> None:
    """gb200-nvl72: config.cfg and the node's own NVLink domain's nodes_config.cfg (two nodes
    of two domains and the controller, --limit: the 72 nodes take minutes on 2 cores)."""
    ansible_playbook()
    tree, plan, release, sandbox, roots = _example_tree(IMEX_EXAMPLE, tmp_path)
    domains = example_build(IMEX_EXAMPLE).plan.imex.domains  # type: ignore[union-attr]
    picked = {domains[0].nodes[0]: domains[0].name, domains[-1].nodes[-1]: domains[-1].name}
    controller = next(iter(_inventory(tree)["all"]["children"]["controllers"]["hosts"]))
    result = run_playbook(tree, plan, release, sandbox, tmp_path,
                          "--limit", ",".join([controller, *picked]))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr
    for node, domain in picked.items():
        etc = roots / node / "etc" / "nvidia-imex"
        assert ((etc / "nodes_config.cfg").read_text()
                == (tree / "imex" / domain / "nodes_config.cfg").read_text())
        assert (etc / "config.cfg").read_text() == (tree / "imex" / "config.cfg").read_text()
    assert len({(roots / n / "etc/nvidia-imex/nodes_config.cfg").read_text() for n in picked}) == 2


class _Recorder(RequestServer):
    """A service manager that records each restart with its host and runs nothing: the
    hosts have no fabric, Lustre or NVLink here; what is checked is where the playbook asks."""

    def handle(self, argv: list[str], host: str) -> tuple[int, str]:
        self.log.append((argv[-1], host))
        return 0, ""


@pytest.mark.parametrize(("name", "edited"), [
    ("seed-64gpu-h100", ("lustre/lnet/oss.yaml", "opensm/compute/partitions.conf",
                         "monitoring/rules/gpu.yml")),
    ("gb200-nvl72", ("imex/nvl2/nodes_config.cfg",)),
])
def test_a_service_restart_runs_on_the_hosts_of_its_files(
        name: str, edited: tuple[str, ...], tmp_path: Path) -> None:
    """The change plan of files edited (cluster_iac.change.change_plan, for the example's release):
    ansible-playbook asks to restart each service on exactly the inventory hosts the changed
    file is installed on, in plan order (OpenSM first, Prometheus last), and nothing else."""
    ansible_playbook()
    tree, _, release, _, roots = _example_tree(name, tmp_path)
    old = dict(example_build(name).files)
    new = {**old, **{path: old[path] + "# changed\n" for path in edited}}
    plan_path = tmp_path / "changes.json"
    plan_path.write_text(json.dumps(as_json(change_plan(old, new, None, "", [release]))))
    planned = json.loads(plan_path.read_text())["actions"][release]
    assert {c for a in planned for c in a["causes"]} == set(edited)
    recorder = _Recorder(tmp_path / "requests", roots)
    sandbox = extra_vars(tmp_path, recorder)
    controller = next(iter(_inventory(tree)["all"]["children"]["controllers"]["hosts"]))
    with recorder:
        result = run_playbook(tree, plan_path, release, sandbox, tmp_path, "--limit", controller)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr
    expected = [(UNITS[a["kind"]], host) for a in planned
                for host in _unit_hosts(tree, a["causes"])]
    assert recorder.log == expected
    inventory = _inventory(tree)["all"]["children"]
    if name == "seed-64gpu-h100":
        assert [u for u, _ in recorder.log] == ["opensm"] * 2 + ["lnet"] * len(
            inventory["type_oss"]["hosts"]) + ["prometheus"]
        assert {h for u, h in recorder.log if u == "opensm"} == {"mds1", "oss1"}
    else:
        nvl2 = example_build(name).plan.imex.domains[1]  # type: ignore[union-attr]
        assert nvl2.name == "nvl2" and [h for _, h in recorder.log] == list(nvl2.nodes)


ROCE_EXAMPLE = "spectrum-x-roce"
RAILS_FILE = "etc/netplan/60-cluster-iac-rails.yaml"


def _rails_spec(spec: Path, netdev: str) -> None:
    """The example's platform given again in the spec's catalog, rail 0's NIC named
    ``netdev`` (tests/test_rail_nics.py): only the GPU nodes' rails change."""
    data = builtin_catalog().platforms["hgx-h200-8gpu"].model_dump(mode="json",
                                                                   exclude_none=True)
    for numa in data["pcie"]["numa_nodes"]:
        for switch in numa["switches"]:
            for dev in switch["devices"]:
                if dev["kind"] == "nic" and dev["index"] == 0:
                    dev["netdev"] = netdev
    out, yaml = io.StringIO(), YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump({"catalog": {"platforms": {"hgx-h200-8gpu": data}}}, out)
    spec.write_text(spec.read_text() + out.getvalue())


def _rails_log(log: Path) -> list[list[str]]:
    lines = log.read_text().splitlines() if log.exists() else []
    log.write_text("")
    return [json.loads(line) for line in lines]


def test_rails_are_installed_then_applied_only_once_their_nodes_are_drained(
        tmp_path: Path) -> None:
    """spectrum-x-roce (a routed RoCE fabric): each GPU node's RoCE NICs (plan/host_rails.py)
    as its netplan file, mode 0600, the same entries as its cloud-init network-config; the
    install play applies nothing (no netplan runs: a node may be running jobs). A rails
    change (rail 0's NIC named by the spec) makes a change plan that drains the nodes,
    applies netplan on them and resumes them: the playbook runs them in that order, netplan
    (real ``netplan generate --root-dir`` the host's root, the sandbox's stand-in for
    ``netplan apply``) reading the new file and writing each rail's rename, address, table
    route and source rule. A rerun changes nothing; a file edited on the node is reported by
    --check, then put back by a run that applies nothing. A node that left the routed fabric
    (its rails gone from the inventory and its seed) has its file removed by the plan's
    apply-netplan, between the drain and the resume, and netplan no longer writes its rails.
    Two GPU nodes and the controller (--limit: 2 cores)."""
    ansible_playbook()
    netns.require("netplan")
    tree, plan, release, sandbox, roots = _example_tree(ROCE_EXAMPLE, tmp_path)
    log = tmp_path / "commands.log"
    record = [sys.executable, str(Path(__file__).parent / "record_command.py"), str(log)]
    variables = json.loads(sandbox.read_text())
    # systemd is not PID 1 here: the QoS unit's daemon-reload and enable answer nothing
    # (tests/real/test_roce_qos_boot_real.py runs the unit under systemd)
    variables |= {"cluster_iac_service": ["true"], "cluster_iac_scontrol": [*record, "scontrol"],
                  "cluster_iac_hostnames": [*record, "hostnames"],
                  "cluster_iac_netplan_apply": [*record, "netplan", str(roots)]}
    sandbox.write_text(json.dumps(variables))
    rails = host_rails(example_build(ROCE_EXAMPLE).plan)
    nodes = sorted(rails)[:2]
    controller = next(iter(_inventory(tree)["all"]["children"]["controllers"]["hosts"]))
    limit = ("--limit", ",".join([controller, *nodes]))
    first = run_playbook(tree, plan, release, sandbox, tmp_path, *limit)
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr
    assert not (roots / controller / RAILS_FILE).exists()  # no RoCE NIC
    for node in nodes:
        installed = roots / node / RAILS_FILE
        assert stat.S_IMODE(installed.stat().st_mode) == 0o600
        text = installed.read_text()
        assert text.startswith("# Generated by cluster-iac"), text
        want = {r.interface: rail_config(r) for r in rails[node]}
        assert YAML(typ="safe").load(text) == {"network": {"version": 2, "ethernets": want}}
        assert not (roots / node / "run").exists()  # installed, not applied
    assert _rails_log(log) == []  # the plan names nothing: no drain, no netplan
    assert "the change plan's apply-netplan action applies it" in first.stdout
    again = run_playbook(tree, plan, release, sandbox, tmp_path, *limit)
    assert again.returncode == 0, again.stdout[-6000:]
    assert sum(r["changed"] for r in recap(again.stdout).values()) == 0, again.stdout

    # a rails change: planned against the tree, rendered over it, then the playbook
    spec = tmp_path / "cluster.yaml"
    _rails_spec(spec, "ens1f0np0")
    plan.write_text(cli("changes", str(spec), "-o", str(tree), "--format", "json"))
    planned = [a["kind"] for a in json.loads(plan.read_text())["actions"][release]]
    assert planned == ["drain", "apply-netplan", "resume"], planned
    cli("render", str(spec), "-o", str(tree))
    changed = run_playbook(tree, plan, release, sandbox, tmp_path, *limit)
    assert changed.returncode == 0, changed.stdout[-6000:] + changed.stderr
    everyone = sorted(rails)  # the plan's hostlist, gpu-[01-32], as scontrol expands it
    hostlist = "gpu-[01-32]"
    assert _rails_log(log) == [
        ["", "scontrol", "update", f"nodename={hostlist}", "state=DRAIN",
         "reason=cluster-iac-change"],
        ["", "hostnames", hostlist],
        *([host, "netplan", str(roots)] for host in everyone),
        ["", "scontrol", "update", f"nodename={hostlist}", "state=RESUME"]]
    for node in nodes:  # what netplan made of the new file
        networkd = roots / node / "run" / "systemd" / "network"
        assert "[Match]\nOriginalName=ens1f0np0\n\n[Link]\nName=rdma0\n" in (
            networkd / "10-netplan-rdma0.link").read_text()
        for name, rail in {r.interface: rail_config(r) for r in rails[node]}.items():
            unit = (networkd / f"10-netplan-{name}.network").read_text()
            route, rule = rail["routes"][0], rail["routing-policy"][0]
            assert f"Address={rail['addresses'][0]}\n" in unit, unit
            assert f"Gateway={route['via']}\nTable={route['table']}\n" in unit, unit
            assert (f"[RoutingPolicyRule]\nFrom={rule['from']}\nTable={rule['table']}\n"
                    f"Priority={rule['priority']}\n") in unit, unit

    # drift: --check reports a hand edit and writes nothing; a run puts it back, applying
    # nothing (its handler says how: drained)
    plan.write_text(cli("changes", str(spec), "-o", str(tree), "--format", "json"))
    edited = roots / nodes[0] / RAILS_FILE
    edited.write_text(edited.read_text().replace("mtu: ", "mtu: 1"))
    drift = edited.read_text()
    checked = run_playbook(tree, plan, release, sandbox, tmp_path, *limit, "--check")
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert recap(checked.stdout)[nodes[0]]["changed"] == 1, checked.stdout  # the file
    assert edited.read_text() == drift
    fixed = run_playbook(tree, plan, release, sandbox, tmp_path, *limit)
    assert fixed.returncode == 0, fixed.stdout[-6000:]
    assert "mtu: 19000" not in edited.read_text() and _rails_log(log) == []

    # a node leaves the routed fabric: the new render has no rails for it (its inventory
    # entry and its seed line without them), and the plan from those files drains it,
    # removes its file and applies, then resumes it
    leaver, stays = nodes[1], nodes[0]
    inventory_path = tree / "ansible" / "inventory.yml"
    inventory = YAML(typ="safe").load(inventory_path.read_text())
    del inventory["all"]["hosts"][leaver]["roce_rails"]
    inventory_path.write_text(json.dumps(inventory))  # YAML reads JSON
    seeds = "cloud-init/seeds/h200.jsonl"
    conf = "slurm/slurm.conf"  # its nodes: the drained ones that are still nodes resume
    old = {seeds: (tree / seeds).read_text(), conf: (tree / conf).read_text()}
    rows = [json.loads(line) for line in old[seeds].splitlines()]
    for row in rows:
        if row["hostname"] == leaver:
            ethernets = row["network-config"]["network"]["ethernets"]
            row["network-config"]["network"]["ethernets"] = {"eth0": ethernets["eth0"]}
    new = {**old, seeds: "".join(json.dumps(row) + "\n" for row in rows)}
    found = change_actions(old, new, release)
    assert [(a.kind, a.hosts) for a in found] == [
        ("drain", leaver), ("apply-netplan", leaver), ("resume", leaver)]
    plan.write_text(json.dumps({"actions": {release: [
        {"kind": a.kind, "hosts": a.hosts, "commands": list(a.commands),
         "causes": list(a.causes), "refused": a.refused} for a in found]}}))
    shutil.rmtree(roots / leaver / "run")
    left = run_playbook(tree, plan, release, sandbox, tmp_path, *limit)
    assert left.returncode == 0, left.stdout[-6000:] + left.stderr
    assert not (roots / leaver / RAILS_FILE).exists()
    assert (roots / stays / RAILS_FILE).exists()
    assert _rails_log(log) == [
        ["", "scontrol", "update", f"nodename={leaver}", "state=DRAIN",
         "reason=cluster-iac-change"],
        ["", "hostnames", leaver],
        [leaver, "netplan", str(roots)],
        ["", "scontrol", "update", f"nodename={leaver}", "state=RESUME"]]
    assert not list((roots / leaver / "run").glob("systemd/network/*rdma*"))
