"""ansible/site.yml's install list (emit/playbook.py) against what each example renders, and
its actions' files, one per kind (emit/playbook_actions.py); the real runs are
tests/real/test_playbook_real.py."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.catalog.slurm_actions import KINDS
from cluster_iac.emit import playbook_actions, playbook_files
from tests.conftest import EXAMPLE_IDS, example_build

# Files only some clusters render: the playbook skips them where they are absent.
OPTIONAL = {"slurm/topology.conf", "slurm/topology.yaml", "slurm/slurmdbd-storage-pass.sh",
            *(f"monitoring/{name}" for name in playbook_files.MONITORING_FILES)}


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_rendered_file_is_installed_or_listed_as_not_installed(name: str) -> None:
    """A new emitted file fails here until the playbook installs it (playbook_files.installs)
    or playbook_files.NOT_INSTALLED says why it stays in the tree; no file is both, and every
    install names a file this or another cluster renders."""
    built = example_build(name)
    sources = {f["src"] for files in playbook_files.installs(built.plan).values() for f in files}
    templated = {s for s in sources if "{{" in s}
    assert templated <= {"imex/{{ cluster_iac_imex_domain[inventory_hostname] }}/"
                         "nodes_config.cfg"}
    kept = playbook_files.not_installed(built.plan)
    listed = {p for p in built.files if any(fnmatch.fnmatchcase(p, g) for g in kept)}
    domains = {p for p in built.files if fnmatch.fnmatchcase(p, "imex/*/nodes_config.cfg")}
    neither = set(built.files) - listed - sources - domains
    assert neither == set(), f"rendered, neither installed nor in NOT_INSTALLED: {neither}"
    assert listed & sources == set()
    assert sources - templated - set(built.files) <= OPTIONAL
    assert bool(domains) == bool(templated)
    for path in built.files:
        assert playbook_files.is_installed(path, built.plan) == (path not in listed)


def test_the_install_table_gives_each_file_its_owner_and_mode() -> None:
    """The seed example: slurmdbd.conf readable by SlurmUser only, scripts executable, the
    Lustre format scripts root-only on their own server, the fstab lines merged into
    /etc/fstab, OpenSM's master and standby files on their hosts."""
    plan = example_build("seed-64gpu-h100").plan
    table = {(group, f["src"]): f for group, files in playbook_files.installs(plan).items()
             for f in files}
    dbd = plan.scheduling.accounting.dbd_host  # type: ignore[union-attr]
    assert table[(dbd, "slurm/slurmdbd.conf")]["owner"] == "slurm"
    assert table[(dbd, "slurm/slurmdbd.conf")]["mode"] == "0600"
    assert table[("mds1", "lustre/servers/mds1.sh")]["mode"] == "0700"
    assert table[("compute", "lustre/clients/fstab")]["how"] == "lines"
    assert table[("compute", "lustre/clients/fstab")]["dest"] == "/etc/fstab"
    assert table[("mds1", "opensm/compute/opensm.conf")]["dest"] == "/etc/opensm/opensm.conf"
    assert table[("oss1", "opensm/compute/opensm-standby.conf")]["dest"] == (
        "/etc/opensm/opensm.conf")
    assert table[("controllers[0]", "monitoring/rules/gpu.yml")]["dest"] == (
        "/etc/prometheus/rules/gpu.yml")
    hosts = playbook_files.file_hosts(plan)
    assert hosts["opensm/compute/partitions.conf"] == "mds1:oss1"
    assert hosts["lustre/lnet/oss.yaml"] == "type_oss"


def test_a_fabric_without_subnet_manager_hosts_keeps_its_opensm_files() -> None:
    assert not any(p.startswith("opensm/") for p in example_build("minimal").files)
    plan = example_build("hgx-h200").plan
    assert "opensm/compute/*" in playbook_files.not_installed(plan)
    assert not any(f["src"].startswith("opensm/") for files in
                   playbook_files.installs(plan).values() for f in files)


def test_a_name_holding_a_template_is_refused() -> None:
    """Ansible templates every string of a task: a spec name is plain text or nothing."""
    for text in ("gpu{{ lookup('pipe', 'id') }}", "a}b", "{%x"):
        with pytest.raises(ValueError, match="template"):
            playbook_files.plain(text)
    assert playbook_files.plain("/etc/slurm/healthcheck.sh") == "/etc/slurm/healthcheck.sh"


def _yaml(text: str) -> object:
    return YAML(typ="safe").load(text)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_each_action_kind_has_a_file_of_its_own_tasks(name: str) -> None:
    """ansible/actions/<kind>.yml for every kind the change plan can name but those with
    nothing to run, which the include skips by its own ``when``; no task of a kind's file
    asks for the kind (one file per kind: nothing is skipped for being of another kind)."""
    files = example_build(name).files
    made = {p for p in files if p.startswith("ansible/actions")}
    assert made == {playbook_actions.action_path(k) for k in KINDS
                    if k not in playbook_actions.NOTHING_TO_RUN}
    assert "ansible/actions.yml" not in files
    for path in made:
        tasks = _yaml(files[path])
        assert isinstance(tasks, list) and tasks, path
        for task in tasks:
            assert "planned.kind" not in json.dumps(task.get("when", "")), (path, task)
    site = _yaml(files["ansible/site.yml"])
    include = site[-1]["tasks"][0]  # type: ignore[index]
    assert include["ansible.builtin.include_tasks"] == "actions/{{ planned.kind }}.yml"
    assert include["when"] == "planned.kind not in ['new-jobs', 'none']"
    check = site[0]["tasks"][0]  # type: ignore[index]
    assert check["vars"]["_kinds"] == list(KINDS)  # an unknown kind stops the first play


def test_only_the_kinds_without_tasks_here_fail_the_run() -> None:
    """reload-frr everywhere (the switches are not hosts of this playbook); slurmdbd's kinds
    where the cluster has no accounting; every other kind runs its tasks."""
    def failing(name: str) -> set[str]:
        return {kind for kind, tasks in playbook_actions.actions(example_build(name).plan).items()
                if any("ansible.builtin.fail" in t and "when" not in t for t in tasks)}

    assert example_build("seed-64gpu-h100").plan.scheduling.accounting is not None
    assert failing("seed-64gpu-h100") == {"reload-frr"}
    assert example_build("minimal").plan.scheduling.accounting is None
    assert failing("minimal") == {"reload-frr", "restart-database", "restart-slurmdbd"}


def test_a_unit_restart_runs_on_the_hosts_of_its_files() -> None:
    """Each service kind's one task: systemctl VERB UNIT delegated to each host of the
    patterns of its causes (cluster_iac_file_hosts)."""
    files = example_build("seed-64gpu-h100").files
    for kind, (verb, unit) in playbook_actions.UNITS.items():
        tasks: Any = _yaml(files[playbook_actions.action_path(kind)])
        assert len(tasks) == 1
        task = tasks[0]
        assert task["ansible.builtin.command"]["argv"].endswith(f"+ ['{verb}', '{unit}'] }}}}")
        assert task["delegate_to"] == "{{ item }}"
        assert "cluster_iac_file_hosts" in task["vars"]["_pattern"]
