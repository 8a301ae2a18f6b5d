"""The Ethernet fabric switch model (plan/switching.py, compile/plan_switches.py) and its FRR
writer (emit/frr.py): the ASN plan, ECMP width, ports and MTUs from the cable table, /31
numbering, identities kept by the lock through growth, and lock edits refused at their line.
Real FRR runs these files in tests/real/test_frr_real.py."""

from __future__ import annotations

import difflib
import importlib
import re
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.compile import compile_plan
from cluster_iac.emit import avd, frr
from cluster_iac.emit.avd_inputs import HostPorts, fabric_inputs, fabric_name
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.load.loader import load_spec_text
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan import Plan
from cluster_iac.render import Build, PipelineError, build
from cluster_iac.spec.parse import parse_spec
from tests.benchmarks import bench_scale
from tests.conftest import EXAMPLE_IDS, example_build

ROOT = Path(__file__).parents[1]
EXAMPLE = ROOT / "examples" / "spectrum-x-roce.yaml"
# a line a new port or session of a spine brings (its description names the new leaf)
NEW_PORT_LINE = re.compile(r"\+ (interface p\d+|  neighbor p\d+ activate|auto p\d+|"
                           r" neighbor p\d+ interface remote-as 42\d{8}|"
                           r"iface p\d+|    mtu 9216|!|exit|)")
PRIVATE_4_BYTE = range(4_200_000_000, 4_294_967_295)  # RFC 6996


def _spec(tmp_path: Path, name: str, change: Any = None) -> Path:
    data = YAML(typ="safe").load(EXAMPLE.read_text())
    if change is not None:
        change(data)
    path = tmp_path / f"{name}.yaml"
    with path.open("w") as handle:
        YAML(typ="safe").dump(data, handle)
    return path


def _numbered(data: dict[str, Any]) -> None:
    data["fabric"]["compute"]["underlay"]["bgp"] = "numbered"


@pytest.fixture(scope="module")
def example() -> Build:
    return build(EXAMPLE)


def test_asn_plan_follows_rfc_7938(example: Build) -> None:
    """Each leaf its own private 4-byte ASN, the spines of the 2-tier fabric one ASN, no
    leaf sharing the spines'; every loopback distinct."""
    configs = example.plan.switch_configs
    leaves = [c for c in configs.values() if c.role == "leaf"]
    spines = [c for c in configs.values() if c.role == "spine"]
    assert len(leaves) == 16 and len(spines) == 2
    assert len({c.asn for c in leaves}) == len(leaves)
    assert len({c.asn for c in spines}) == 1
    assert not {c.asn for c in leaves} & {c.asn for c in spines}
    assert all(c.asn in PRIVATE_4_BYTE for c in configs.values())
    assert len({c.loopback for c in configs.values()}) == len(configs)
    assert all(c.bgp.router_id == c.loopback for c in configs.values())


def test_ecmp_ports_and_mtus_follow_the_cable_table(example: Build) -> None:
    plan = example.plan
    cables = plan.cables
    ends = {(b, bp): (a, ap, c) for n, a, ap, b, bp, c in zip(
        cables.network, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
        cables.cable_id, strict=True) if n == "compute"}
    for config in plan.switch_configs.values():
        uplinks = config.uplinks
        assert config.bgp.maximum_paths >= max(1, len(uplinks))
        for port in config.interfaces:
            assert port.mtu == (9000 if port.kind == "host" else 9216)
            if port.kind != "uplink":
                assert ends[(config.name, port.name)] == (port.peer, port.peer_port,
                                                          port.cable_id)
            assert port.description == f"{port.peer}:{port.peer_port} {port.cable_id}"
        if config.role == "leaf":
            assert len(uplinks) == 8 and len(config.host_ports) == 16
            assert all(p.name.startswith("p") and "s" in p.name for p in config.host_ports)
            # every session's remote ASN is the far switch's own
            assert {n.remote_asn for n in config.bgp.neighbors} == {
                plan.switch_configs[u.peer].asn for u in uplinks}


def test_unnumbered_leaf_announces_its_hosts_and_numbers_only_them(example: Build) -> None:
    leaf = example.plan.switch_configs["eth-leaf-su1-r1"]
    assert leaf.bgp.unnumbered and all(not p.address for p in leaf.uplinks)
    assert leaf.bgp.networks == (f"{leaf.loopback}/32", *(
        f"{IPv4Address(p.address.split('/')[0])}/31" for p in leaf.host_ports))
    frr = example.files["switches/eth-leaf-su1-r1/frr.conf"]
    assert "neighbor p57 interface remote-as 4200000000\n" in frr
    assert f"router bgp {leaf.asn}\n" in frr and "  maximum-paths 8\n" in frr
    interfaces = example.files["switches/eth-leaf-su1-r1/interfaces"]
    assert "iface p1s1\n    alias gpu-01:rdma0 CF-r01.U01.rdma0\n" in interfaces


def test_numbered_links_share_one_31_between_their_ends(tmp_path: Path) -> None:
    configs = build(_spec(tmp_path, "numbered", _numbered), emit=False).plan.switch_configs
    pairs = 0
    for config in configs.values():
        for port in config.uplinks:
            far = next(p for p in configs[port.peer].interfaces if p.name == port.peer_port)
            mine, theirs = port.address.split("/")[0], far.address.split("/")[0]
            assert port.peer_address == theirs and far.peer_address == mine
            assert int(IPv4Address(mine)) ^ int(IPv4Address(theirs)) == 1  # one /31
            pairs += 1
        assert {n.address for n in config.bgp.neighbors} == {
            p.peer_address for p in config.interfaces if p.kind != "host"}
    assert pairs == 16 * 8


def test_a_new_unit_changes_only_the_ports_and_neighbours_it_adds(tmp_path: Path) -> None:
    """One scalable unit first (the spines sized for two), then the second: no line of any
    existing switch's files is removed or changed, and the new lines are the new leaves'
    ports and sessions only; every ASN, loopback and block is the one the lock holds."""
    def units(count: int) -> Any:
        def change(data: dict[str, Any]) -> None:
            data["fabric"]["compute"]["planned_scalable_units"] = 2
            data["node_groups"][0]["count"] = 16 * count
        return change

    before = build(_spec(tmp_path, "one", units(1)))
    spec = _spec(tmp_path, "two", units(2))
    lock_path(spec).write_text(before.lock.after)
    after = build(spec)
    old, new = before.plan.switch_configs, after.plan.switch_configs
    assert set(old) < set(new)
    for name, config in old.items():
        assert (new[name].asn, new[name].loopback, new[name].p2p_block) == (
            config.asn, config.loopback, config.p2p_block)
        for kind in ("frr.conf", "interfaces"):
            path = f"switches/{name}/{kind}"
            diff = list(difflib.ndiff(before.files[path].splitlines(),
                                      after.files[path].splitlines()))
            removed = [line for line in diff if line.startswith("- ")]
            added = [line for line in diff if line.startswith("+ ")]
            assert not removed, (path, removed)
            if config.role == "leaf":
                assert not added, (path, added)
            else:
                assert added and all("eth-leaf-su2" in line or NEW_PORT_LINE.fullmatch(line)
                                     for line in added), (path, added)


def _edited_lock(tmp_path: Path, edit: Any) -> Path:
    spec = _spec(tmp_path, "edited")
    first = build(spec, emit=False)
    # a deliberate edit, sealed again as docs/lock.md tells (an unsealed one is LOCK-TRAILER)
    lock_path(spec).write_text(sealed(edit(unsealed(first.lock.after))))
    return spec


@pytest.mark.parametrize(("edit", "code"), [
    (lambda text: text.replace("eth-leaf-su1-r2 4200000002", "eth-leaf-su1-r2 4200000001"),
     "FABRIC-ASN-DUPLICATE"),
    (lambda text: text.replace("eth-leaf-su1-r2 4200000002 10.255.0.3",
                               "eth-leaf-su1-r2 4200000002 10.255.0.2"),
     "FABRIC-LOOPBACK-DUPLICATE"),
    (lambda text: text.replace("p2p compute eth-leaf-su1-r2 10.254.1.0",
                               "p2p compute eth-leaf-su1-r2 10.254.0.0"), "LOCK-COLLISION"),
])
def test_a_hand_edited_lock_that_shares_an_identity_is_refused_at_its_line(
        tmp_path: Path, edit: Any, code: str) -> None:
    spec = _edited_lock(tmp_path, edit)
    with pytest.raises(PipelineError) as raised:
        build(spec, emit=False)
    found = [d for d in raised.value.diagnostics if d.code == code]
    assert found, raised.value.diagnostics
    lines = lock_path(spec).read_text().splitlines()
    assert "eth-leaf-su1-r2" in lines[found[0].line - 1]
    assert found[0].hint


def test_spines_may_share_their_asn_in_the_lock(example: Build) -> None:
    """Two spines with one ASN is the plan, not a duplicate."""
    assert "bgp compute eth-spine-1 4200000000" in example.lock.after
    assert "bgp compute eth-spine-2 4200000000" in example.lock.after


def _ethernet_storage(data: dict[str, Any]) -> None:
    """The example with an Ethernet storage fabric (SN4700, /31 numbered, its own pools)."""
    storage_nic = {"role": "storage", "model": "cx7-200gbe", "count": 1}
    data["node_types"]["h200"]["nics"].append(storage_nic)
    data["node_types"]["head"]["nics"] = [
        {"role": "inband", "model": "cx6lx-25gbe", "count": 1},
        {"role": "bmc", "model": "eth-1g", "count": 1}, storage_nic]
    data["fabric"]["storage"] = {
        "technology": "ethernet", "leaf_switch": "sn4700", "racks": "net[1-2]",
        "underlay": {"bgp": "numbered", "loopback_pool": "10.253.0.0/16",
                     "p2p_pool": "10.252.0.0/16"}}


def test_an_ethernet_storage_fabric_gets_its_own_switch_configs(tmp_path: Path) -> None:
    built = build(_spec(tmp_path, "storage", _ethernet_storage))
    storage = {n: c for n, c in built.plan.switch_configs.items() if c.fabric == "storage"}
    assert {c.role for c in storage.values()} == {"leaf", "spine"}
    assert all(not c.bgp.unnumbered and c.loopback.startswith("10.253.")
               for c in storage.values())
    leaves = [c for c in storage.values() if c.role == "leaf"]
    assert len({c.asn for c in leaves}) == len(leaves)
    assert all(p.address.startswith("10.252.") for c in leaves for p in c.host_ports)
    assert f"bgp storage {leaves[0].name} {leaves[0].asn} {leaves[0].loopback}" in \
        built.lock.after
    assert f"switches/{leaves[0].name}/frr.conf" in built.files


def test_three_tiers_give_each_pod_of_spines_its_own_asn(tmp_path: Path) -> None:
    """Under a core tier a route from one pod to another crosses two spines: one ASN for
    every spine would make the second drop it (AS-path loop), so each pod's spines share
    one ASN, the cores another (RFC 7938, section 5.2.1)."""
    def three_tiers(data: dict[str, Any]) -> None:
        data["fabric"]["compute"]["tiers"] = 3
    configs = build(_spec(tmp_path, "three", three_tiers), emit=False).plan.switch_configs
    spines = [c for c in configs.values() if c.role == "spine"]
    cores = [c for c in configs.values() if c.role == "super-spine"]
    assert cores and len({c.asn for c in cores}) == 1
    pods: dict[int, set[frozenset[str]]] = {}
    for spine in spines:
        below = frozenset(p.peer for p in spine.interfaces if p.kind == "fabric")
        pods.setdefault(spine.asn, set()).add(below)
    assert len(pods) > 1  # one ASN per pod, each pod's spines above the same leaves
    assert all(len(leaf_sets) == 1 for leaf_sets in pods.values())
    assert not {c.asn for c in spines} & {c.asn for c in cores}


# the examples with an Ethernet fabric (read from the spec: no build at collection)
ROUTED = [name for name in EXAMPLE_IDS if re.search(
    r"technology: (roce|ethernet)", (ROOT / "examples" / f"{name}.yaml").read_text())]
VARIANTS = {"numbered": _numbered, "storage": _ethernet_storage,
            "three-tiers": lambda data: data["fabric"]["compute"].update(tiers=3)}


@pytest.mark.parametrize("name", [*ROUTED, *VARIANTS])
def test_routed_writers_write_the_templates_bytes(name: str, tmp_path: Path) -> None:
    """emit/frr.py's routed_frr_text and routed_interfaces_text (lines written in Python,
    what render() uses) against templates/switches/frr.conf.j2 and interfaces.j2, their
    oracles: the same bytes for every fabric switch of every Ethernet example, and of the
    RoCE example numbered, with an Ethernet storage fabric (numbered, host /31s on its
    leaves) and on three tiers (super-spines)."""
    built = (build(_spec(tmp_path, name, VARIANTS[name])) if name in VARIANTS
             else example_build(name))
    assert frr.ROUTED_FRR_WRITER is frr.routed_frr_text
    assert frr.ROUTED_INTERFACES_WRITER is frr.routed_interfaces_text
    configs = built.plan.switch_configs
    assert {c.role for c in configs.values()} >= (
        {"leaf", "spine", "super-spine"} if name == "three-tiers" else {"leaf", "spine"})
    if name in ("numbered", "storage"):  # the numbered sessions' and ports' lines too
        assert any(not c.routing.unnumbered and c.uplinks for c in configs.values())
    for switch, config in configs.items():
        assert built.files[f"switches/{switch}/frr.conf"] == frr.routed_frr_template(config)
        assert built.files[f"switches/{switch}/interfaces"] == \
            frr.routed_interfaces_template(config)
    _avd_inputs_both_ways(built.plan, built.files)


def _avd_inputs_both_ways(plan: Plan, files: dict[str, str] | None = None) -> None:
    """Each Ethernet fabric's AVD inputs with its host ports as HostPorts' template fills
    (what emit/avd.py writes) and as host_port's plain data (the oracle): the same YAML, and
    (``files``: a render's) the group_vars file is that YAML under its header."""
    fabrics = sorted({c.fabric for c in plan.switch_configs.values()})
    assert fabrics
    for network in fabrics:
        configs = [c for _n, c in sorted(plan.switch_configs.items()) if c.fabric == network]
        qos = plan.qos.get(network)
        text = yaml_text(fabric_inputs(network, configs, qos, HostPorts()))
        assert text == yaml_text(fabric_inputs(network, configs, qos))
        assert text.count("ip_address:") >= sum(1 for c in configs for i in c.host_ports
                                                if i.address) > 0
        if files is not None:
            name = fabric_name(network)
            assert files[f"switches/avd/{network}/group_vars/{name}.yml"].endswith(text)


def test_avd_host_ports_of_a_roce_cluster_of_4096_gpus_are_the_plain_datas_bytes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's RoCE spec of 4,096 GPUs (512 hosts of eight rails, 4,096 host ports
    on its leaves): the AVD inputs both ways."""
    monkeypatch.setattr(bench_scale, "fabric_choice", "roce")
    plan = compile_plan(parse_spec(load_spec_text(bench_scale.spec_yaml(4096))[0]))
    files = avd.render(plan)
    _avd_inputs_both_ways(plan, files)
    # the render writes each network's inputs in pieces (render_chunks), a few nodes a piece
    monkeypatch.setattr(avd, "PIECE", 3)
    chunks = avd.render_chunks(plan)
    assert sorted(chunks) == sorted(files)
    for path, text in chunks.items():
        pieces = [text] if isinstance(text, str) else list(text)
        assert "".join(pieces) == files[path]
        if path.endswith("COMPUTE_FABRIC.yml"):
            assert len(pieces) > len(plan.switch_configs) // 3


def test_every_ports_addresses_are_what_ipaddress_gives(tmp_path: Path) -> None:
    """The /31s are made by integer arithmetic (compile/plan_switches.py _dotted); ipaddress
    is the oracle: each numbered port's pair is the numbering switch's block + 2 x the port
    leg's place (its even address the upper end's), on the RoCE example (leaves number their
    host ports) and numbered (every link); _dotted is str(IPv4Address) across the range."""
    plan_switches = importlib.import_module("cluster_iac.compile.plan_switches")
    for value in (0, 1, 255, 256, 65535, 65536, 2**24 - 1, 2**24, 0x0AFE0001, 2**32 - 1):
        assert plan_switches._dotted(value) == str(IPv4Address(value))
    numbered = build(_spec(tmp_path, "numbered", _numbered), emit=False).plan
    for plan in (example_build("spectrum-x-roce").plan, numbered):
        legs = plan.fabrics["compute"].breakout_legs
        checked = 0
        for config in plan.switch_configs.values():
            for port in config.interfaces:
                owner, owner_port = ((port.peer, port.peer_port) if port.kind == "uplink"
                                     else (config.name, port.name))
                block = plan.switch_configs[owner].p2p_block
                if not block:
                    assert port.address == port.peer_address == ""
                    continue
                even = IPv4Address(block) + 2 * plan_switches._leg_index(owner_port, legs)
                mine, theirs = (even + 1, even) if port.kind == "uplink" else (even, even + 1)
                assert (port.address, port.peer_address) == (f"{mine}/31", str(theirs))
                checked += 1
        assert checked >= 32
