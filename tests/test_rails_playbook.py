"""The GPU nodes' RoCE rails delivered by the playbook (emit/ansible.py ``roce_rails``,
emit/playbook.py's rails play, which installs them) and applied by the change plan on drained
nodes (change/actions.py ``apply-netplan`` between ``drain`` and ``resume``, emit/
playbook_actions.py, which also removes the file of a node that left the routed fabric).
tests/real/test_playbook_real.py runs them with ansible-playbook and real netplan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cluster_iac.change.actions import actions, rail_hosts
from cluster_iac.compile import compile_plan
from cluster_iac.emit import ansible
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.load.loader import load_spec_text
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan.host_rails import host_rails, rail_config
from cluster_iac.render import build
from cluster_iac.spec.parse import parse_spec
from tests.benchmarks import bench_scale
from tests.conftest import example_build

EXAMPLE = "spectrum-x-roce"
ROOT = Path(__file__).parents[1]


def _yaml(text: str) -> object:
    return YAML(typ="safe").load(text)


def test_each_gpu_node_has_its_rails_in_the_inventory() -> None:
    built = example_build(EXAMPLE)
    rails = host_rails(built.plan)
    hosts = _yaml(built.files["ansible/inventory.yml"])["all"]["hosts"]  # type: ignore[index]
    with_rails = {name for name, hv in hosts.items() if "roce_rails" in hv}
    assert with_rails == set(rails) and len(rails) == 32  # not the controller, not a switch
    for host, nics in rails.items():
        assert hosts[host]["roce_rails"] == {r.interface: rail_config(r) for r in nics}
        assert list(hosts[host]) == sorted(hosts[host])  # keys sorted, as every host's


def test_the_inventory_lays_its_rails_out_as_the_plain_data_writes_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """render() writes each host's roce_rails from one template per node type
    (ansible.RailsTemplates); the plain data (ansible.plain_rails, the oracle) through the
    same writer gives the same bytes: on the example and on the benchmark's RoCE spec of
    4,096 GPUs (512 hosts of eight rails)."""
    monkeypatch.setattr(bench_scale, "fabric_choice", "roce")
    bench = compile_plan(parse_spec(load_spec_text(bench_scale.spec_yaml(4096))[0]))
    for plan in (example_build(EXAMPLE).plan, bench):
        text = ansible.render(plan)["ansible/inventory.yml"]
        assert text == yaml_text(ansible.inventory(plan), [GENERATED_BY])
        assert text.count("roce_rails:") == len(plan.rails["compute"]) >= 32
        # the render writes it in pieces (render_chunks): a few hosts or groups a piece
        monkeypatch.setattr(ansible, "PIECE", 7)
        pieces = list(ansible.render_chunks(plan)["ansible/inventory.yml"])
        assert "".join(pieces) == text and len(pieces) > len(plan.devices) // 7
        monkeypatch.undo()
        monkeypatch.setattr(bench_scale, "fabric_choice", "roce")


def test_the_rails_play_installs_the_netplan_file_and_applies_nothing() -> None:
    """netplan apply under running jobs breaks their RDMA connections: the install play only
    writes the file (its handler says how it is applied), the change plan applies it."""
    site = _yaml(example_build(EXAMPLE).files["ansible/site.yml"])
    plays = [p for p in site if p.get("tags") == ["rails"]]  # type: ignore[union-attr]
    assert len(plays) == 1
    play = plays[0]
    assert play["hosts"] == "type_h200"
    copy = next(t for t in play["tasks"] if "ansible.builtin.copy" in t)
    assert copy["ansible.builtin.copy"]["dest"].endswith(
        "/etc/netplan/60-cluster-iac-rails.yaml")
    assert copy["ansible.builtin.copy"]["mode"] == "0600"
    assert copy["notify"] == play["handlers"][0]["name"] == "the rails are applied drained"
    assert list(play["handlers"][0]) == ["name", "ansible.builtin.debug"]  # runs nothing
    assert "command" not in str(play) and "netplan apply" not in str(play["tasks"])
    # the plays after it: the change plan's actions, which know apply-netplan
    assert site.index(play) == len(site) - 2  # type: ignore[union-attr]


def test_no_rails_play_without_a_routed_roce_fabric() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su"):
        files = example_build(name).files
        assert "roce_rails" not in files["ansible/inventory.yml"]
        assert "netplan" not in files["ansible/site.yml"].replace("apply-netplan", "")


def test_a_rails_change_drains_applies_and_resumes_its_nodes(tmp_path: Path) -> None:
    """A compute leaf's p2p block moved in the lock moves the rail 0 addresses of its 16
    nodes: the change plan drains exactly them, applies netplan there, then resumes them,
    on every release."""
    lock = (ROOT / "examples" / f"{EXAMPLE}.lock").read_text()
    line = "p2p compute eth-leaf-su1-r1 10.254.0.0\n"
    spec = tmp_path / "c.yaml"
    spec.write_text((ROOT / "examples" / f"{EXAMPLE}.yaml").read_text())
    (tmp_path / "c.lock").write_text(sealed(unsealed(lock).replace(
        line, "p2p compute eth-leaf-su1-r1 10.255.128.0\n")))
    old = example_build(EXAMPLE).files
    new = build(spec, lock_file=tmp_path / "c.lock").files
    seeds = "cloud-init/seeds/h200.jsonl"
    assert rail_hosts(old[seeds], new[seeds]) == {f"gpu-{n:02d}" for n in range(1, 17)}
    for release in ("22.05", "24.11", "26.05"):
        found = {a.kind: a for a in actions(old, new, release)}
        assert found["apply-netplan"].hosts == "gpu-[01-16]"
        assert found["apply-netplan"].causes == (seeds,)
        assert found["apply-netplan"].tested
        assert found["drain"].hosts == found["resume"].hosts == "gpu-[01-16]"
        kinds = [a.kind for a in actions(old, new, release)]
        assert kinds.index("drain") < kinds.index("apply-netplan") < kinds.index("resume")
    assert "apply-netplan" not in {a.kind for a in actions(old, old, "24.11")}


def test_rail_hosts_ignores_the_other_networks_and_names_hosts_that_lose_their_rails(
        ) -> None:
    rail = {"addresses": ["10.254.0.1/31"], "mtu": 9000, "routes": [],
            "routing-policy": [{"from": "10.254.0.1", "table": 101, "priority": 1010}]}

    def line(host: str, eth0: str, **nics: object) -> str:
        return json.dumps({"hostname": host, "network-config": {"network": {
            "version": 2, "ethernets": {"eth0": {"addresses": [eth0]}, **nics}}}}) + "\n"

    old = line("a", "10.0.0.1/24", rdma0=rail) + line("b", "10.0.0.2/24", rdma0=rail)
    new = line("a", "10.0.0.9/24", rdma0=rail) + line("b", "10.0.0.2/24")
    # a's management address is no rail's; b left the routed fabric: its file is removed
    assert rail_hosts(old, new) == {"b"}
    assert rail_hosts(old, line("a", "10.0.0.1/24", rdma0=rail)) == set()  # b removed
    new = line("a", "10.0.0.1/24", rdma0={**rail, "mtu": 4200}) + line("c", "10.0.0.3/24",
                                                                        rdma0=rail)
    assert rail_hosts(old, new) == {"a", "c"}


def test_apply_netplan_removes_the_file_of_a_node_without_rails_then_applies() -> None:
    """actions/apply-netplan.yml: the action's nodes expanded by scontrol, the rails file
    removed on those whose inventory has no roce_rails (at the node's own root), then
    netplan apply on each, delegated to it."""
    files = example_build(EXAMPLE).files
    tasks = _yaml(files["ansible/actions/apply-netplan.yml"])
    nodes, remove, apply = tasks  # type: ignore[misc]
    assert nodes["register"] == "_nodes" and "planned.hosts" in str(nodes)
    assert remove["ansible.builtin.file"] == {
        "path": "{{ hostvars[item].cluster_iac_root | default('') }}"
                "/etc/netplan/60-cluster-iac-rails.yaml", "state": "absent"}
    assert remove["when"] == "hostvars[item].roce_rails is not defined"
    assert "netplan', 'apply'" in apply["ansible.builtin.command"]["argv"]
    assert remove["delegate_to"] == apply["delegate_to"] == "{{ item }}"
    assert remove["loop"] == apply["loop"] == "{{ _nodes.stdout_lines | default([]) }}"


def test_a_first_deployment_applies_the_rails_before_slurmd_starts() -> None:
    files = example_build(EXAMPLE).files
    steps = actions(None, files, "24.11")
    kinds = [a.kind for a in steps]
    applied = steps[kinds.index("apply-netplan")]
    assert applied.hosts == "gpu-[01-32]"
    assert kinds.index("apply-netplan") < kinds.index("restart-slurmd")
    assert "apply-netplan" not in [a.kind for a in actions(
        None, example_build("seed-64gpu-h100").files, "24.11")]
