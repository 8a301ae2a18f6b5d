"""The GPU nodes' RoCE rails delivered by the playbook (emit/ansible.py ``roce_rails``,
emit/playbook.py's rails play) and named by the change plan (change/actions.py
``apply-netplan``). tests/real/test_playbook_real.py runs the play with ansible-playbook and
real netplan."""

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


def test_the_rails_play_installs_the_netplan_file_and_applies_it_by_handler() -> None:
    site = _yaml(example_build(EXAMPLE).files["ansible/site.yml"])
    plays = [p for p in site if p.get("tags") == ["rails"]]  # type: ignore[union-attr]
    assert len(plays) == 1
    play = plays[0]
    assert play["hosts"] == "type_h200"
    copy = next(t for t in play["tasks"] if "ansible.builtin.copy" in t)
    assert copy["ansible.builtin.copy"]["dest"].endswith(
        "/etc/netplan/60-cluster-iac-rails.yaml")
    assert copy["ansible.builtin.copy"]["mode"] == "0600"
    assert copy["notify"] == "netplan apply" == play["handlers"][0]["name"]
    # the plays after it: the change plan's actions, which know apply-netplan
    assert site.index(play) == len(site) - 2  # type: ignore[union-attr]


def test_no_rails_play_without_a_routed_roce_fabric() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su"):
        files = example_build(name).files
        assert "roce_rails" not in files["ansible/inventory.yml"]
        assert "netplan" not in files["ansible/site.yml"].replace("apply-netplan", "")


def test_a_rails_change_names_netplan_apply_on_its_nodes(tmp_path: Path) -> None:
    """A compute leaf's p2p block moved in the lock moves the rail 0 addresses of its 16
    nodes: the change plan's apply-netplan names exactly them, on every release."""
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
    assert "apply-netplan" not in {a.kind for a in actions(old, old, "24.11")}


def test_rail_hosts_ignores_the_other_networks_and_hosts_left_without_rails() -> None:
    rail = {"addresses": ["10.254.0.1/31"], "mtu": 9000, "routes": [],
            "routing-policy": [{"from": "10.254.0.1", "table": 101, "priority": 1010}]}

    def line(host: str, eth0: str, **nics: object) -> str:
        return json.dumps({"hostname": host, "network-config": {"network": {
            "version": 2, "ethernets": {"eth0": {"addresses": [eth0]}, **nics}}}}) + "\n"

    old = line("a", "10.0.0.1/24", rdma0=rail) + line("b", "10.0.0.2/24", rdma0=rail)
    new = line("a", "10.0.0.9/24", rdma0=rail) + line("b", "10.0.0.2/24")
    assert rail_hosts(old, new) == set()  # a's management address, b's rails gone
    new = line("a", "10.0.0.1/24", rdma0={**rail, "mtu": 4200}) + line("c", "10.0.0.3/24",
                                                                        rdma0=rail)
    assert rail_hosts(old, new) == {"a", "c"}
