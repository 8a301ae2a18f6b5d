"""Real consumer: ansible-inventory parses every example's inventory, strictly, with no warning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_IDS, example_build

pytestmark = pytest.mark.real


def _ansible_inventory() -> str:
    path = shutil.which("ansible-inventory")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("ansible-inventory is missing: install ansible-core ('.[test]' extras)")
        pytest.skip("ansible-inventory is not installed (pip install ansible-core)")
    return path


def _strict_env(tmp_path: Path) -> dict[str, str]:
    """Unparsed inventories fatal, duplicate keys errors, YAML plugin only, no local config
    (../shared/reference/slurm-harness.md: by default a broken inventory exits 0 with a warning)."""
    config = tmp_path / "ansible.cfg"
    config.write_text("")
    return {
        **os.environ,
        "ANSIBLE_CONFIG": str(config),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "True",
        "ANSIBLE_DUPLICATE_YAML_DICT_KEY": "error",
        "ANSIBLE_INVENTORY_ENABLED": "yaml",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_HOME": str(tmp_path / "home"),
        "ANSIBLE_NOCOLOR": "1",
    }


def _run(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(text)
    return subprocess.run([_ansible_inventory(), "-i", str(inventory), "--list"],
                          capture_output=True, text=True, env=_strict_env(tmp_path), timeout=300)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_ansible_inventory_lists_every_host_with_its_vars(name: str, tmp_path: Path) -> None:
    built = example_build(name)
    result = _run(tmp_path, built.files["ansible/inventory.yml"])
    assert result.returncode == 0, result.stderr
    assert "[WARNING]" not in result.stderr + result.stdout, result.stderr
    listed = json.loads(result.stdout)
    hostvars = listed["_meta"]["hostvars"]
    plan = built.plan
    assert set(hostvars) == {d.name for d in plan.devices}
    for node in plan.nodes:
        hv = hostvars[node.hostname]
        assert hv["node_type"] == node.node_type
        assert hv["gpu_count"] == plan.node_types[node.node_type].gpu_count
        assert hv["cluster_name"] == plan.cluster.name  # group vars reach every host
        for network, var in (("management", "mgmt_ip"), ("bmc", "bmc_ip"), ("ipoib", "ipoib_ip")):
            assert hv.get(var) == plan.addresses.get(network, {}).get(node.hostname)
    assert set(listed["compute"]["hosts"]) == {n.hostname for n in plan.compute_nodes}


def test_a_broken_inventory_fails(tmp_path: Path) -> None:
    """The strict settings make a broken file fatal (so the test above can fail)."""
    result = _run(tmp_path, "all:\n  hosts:\n    a: {b: 1\n")
    assert result.returncode != 0
