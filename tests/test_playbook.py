"""ansible/site.yml's install list (emit/playbook.py) against what each example renders; the
real runs are tests/real/test_playbook_real.py."""

from __future__ import annotations

import fnmatch

import pytest

from cluster_iac.emit import playbook
from tests.conftest import EXAMPLE_IDS, example_build

# Rendered files the playbook installs; the rest are not installed yet (README, "Deploying
# with Ansible") or are not host files (drawings, NetBox, reports, the inventory itself).
INSTALLED = ("slurm/*", "nccl/*", "lustre/lnet/*", "imex/*")
# Files only some clusters render: the playbook skips them where they are absent.
OPTIONAL = {"slurm/topology.conf", "slurm/topology.yaml", "slurm/slurmdbd-storage-pass.sh"}


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_host_file_is_installed_and_every_install_is_rendered(name: str) -> None:
    built = example_build(name)
    sources = {f["src"] for files in playbook.installs(built.plan).values() for f in files}
    templated = {s for s in sources if "{{" in s}
    assert templated <= {"imex/{{ cluster_iac_imex_domain[inventory_hostname] }}/"
                         "nodes_config.cfg"}
    host_files = {p for p in built.files if any(fnmatch.fnmatch(p, g) for g in INSTALLED)}
    domains = {p for p in host_files if fnmatch.fnmatch(p, "imex/*/nodes_config.cfg")}
    assert host_files - domains == sources - templated - (OPTIONAL - set(built.files))
    assert bool(domains) == bool(templated)


def test_a_name_holding_a_template_is_refused() -> None:
    """Ansible templates every string of a task: a spec name is plain text or nothing."""
    for text in ("gpu{{ lookup('pipe', 'id') }}", "a}b", "{%x"):
        with pytest.raises(ValueError, match="template"):
            playbook._plain(text)
    assert playbook._plain("/etc/slurm/healthcheck.sh") == "/etc/slurm/healthcheck.sh"
