"""ansible/site.yml's install list (emit/playbook.py) against what each example renders; the
real runs are tests/real/test_playbook_real.py."""

from __future__ import annotations

import fnmatch

import pytest

from cluster_iac.emit import playbook_files
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
