"""The management and BMC networks' switches in the switch model (plan/switching.py,
compile/plan_access.py) and their writers (emit/frr.py's ifupdown2 bridge, emit/avd.py's
AVD inputs): every planned access port exactly once across the generated files with its
network's VLAN and its cable's label, the VLAN ids, the LACP bonds up to the aggregation
pair and down to each access switch, two racks' access switches bonded to each other, the
MTU the spec asks. ifupdown2 and pyavd read these files in tests/real."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cluster_iac.compile.build_management import peer_links
from cluster_iac.emit import frr
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan.switching import DEFAULT_MTU, PEER_LINK_PORTS, VLANS, mlag_system_mac
from cluster_iac.render import Build, PipelineError, build
from tests.benchmarks.bench_scale import spec_yaml
from tests.conftest import EXAMPLE_IDS, example_build

ROOT = Path(__file__).parents[1]
NETWORKS = ("management", "bmc")


def two_racks(tmp_path: Path, mtu: int | None = 9000) -> Path:
    """examples/hgx-h200.yaml on two racks (access switches bonded to each other, no
    aggregation), its management network at ``mtu``."""
    data = YAML(typ="safe").load((ROOT / "examples" / "hgx-h200.yaml").read_text())
    data["node_groups"][0].update(count=2, racks="r01")
    for group in data["node_groups"][1:]:
        group["racks"] = "r02"
    data["rows"][0]["racks"] = [
        {"names": "r01", "pdu": "three-415v", "max_power_kw": 25},
        {"names": "r02", "pdu": "three-415v", "max_power_kw": 20}]
    data["fabric"]["compute"]["racks"] = "r02"
    if mtu is not None:
        data["networks"]["management"]["mtu"] = mtu
    path = tmp_path / "two-racks.yaml"
    with path.open("w") as handle:
        YAML(typ="safe").dump(data, handle)
    return path


def stanzas(text: str) -> list[tuple[str, dict[str, str]]]:
    """An ifupdown2 file's 'iface' stanzas in order: (name, {attribute: value}), comments
    left out."""
    found: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if line.startswith("iface "):
            found.append((line.split()[1], {}))
        elif line.startswith("    ") and found and not line.strip().startswith("#"):
            key, _, value = line.strip().partition(" ")
            attrs = found[-1][1]  # a repeated attribute's values joined, as ifupdown2 does
            attrs[key] = f"{attrs[key]} {value}" if key in attrs else value
    return found


def planned_access_ports(built: Build) -> dict[tuple[str, str], tuple[int, str]]:
    """(switch, port) -> (VLAN, cable label) of every cable of a management network from a
    device (not a switch of that network), read from the plan's cable table."""
    cables = built.plan.cables
    switches = {s.name for s in built.plan.switches if s.network in NETWORKS}
    found = {}
    for net, a, a_port, b, b_port, cable in zip(
            cables.network, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
            cables.cable_id, strict=True):
        if net in NETWORKS and a not in switches:
            assert (b, b_port) not in found, f"two cables on {b} {b_port}"
            found[(b, b_port)] = (VLANS[net], f"{a}:{a_port} {cable}")
    return found


# the examples with a management or BMC network (read from the spec: no build at collection)
MANAGED = [name for name in EXAMPLE_IDS if re.search(
    r"^  (management|bmc): ", (ROOT / "examples" / f"{name}.yaml").read_text(), re.M)]


@pytest.mark.parametrize("name", MANAGED)
def test_every_access_port_appears_once_with_its_vlan(name: str) -> None:
    built = example_build(name)
    assert built.plan.management_configs
    planned = planned_access_ports(built)
    assert planned
    seen: Counter[tuple[str, str]] = Counter()
    access: dict[tuple[str, str], tuple[int, str]] = {}
    for switch in built.plan.management_configs:
        for port, attrs in stanzas(built.files[f"switches/{switch}/interfaces"]):
            seen[(switch, port)] += 1
            if "bridge-access" in attrs:
                access[(switch, port)] = (int(attrs["bridge-access"]), attrs["alias"])
    assert access == planned
    assert max(seen.values()) == 1, [key for key, n in seen.items() if n > 1]
    # and in the AVD inputs: each planned port once, an access port of its VLAN
    avd: Counter[tuple[str, str, int, str]] = Counter()
    for network in {c.fabric for c in built.plan.management_configs.values()}:
        inputs = YAML(typ="safe").load(built.files[
            f"switches/avd/{network}/group_vars/{network.upper()}_FABRIC.yml"])
        for node_type in ("l2leaf", "l2spine"):
            for node in inputs.get(node_type, {}).get("nodes", []):
                for port in node["structured_config"]["ethernet_interfaces"]:
                    if "switchport" in port:
                        avd[(node["name"], port["name"].replace("Ethernet", "swp"),
                             port["switchport"]["access_vlan"], port["description"])] += 1
    assert avd == Counter((s, p, vlan, label) for (s, p), (vlan, label) in planned.items())


def test_vlan_ids_are_fixed_documented_and_valid() -> None:
    assert VLANS == {"management": 10, "bmc": 20, "storage": 30}
    assert len(set(VLANS.values())) == len(VLANS)
    assert all(2 <= vid <= 4094 for vid in VLANS.values())  # not the default VLAN 1
    docs = (ROOT / "docs" / "ethernet-fabric.md").read_text()
    for network, vid in VLANS.items():
        assert f"| {network} | {vid} |" in docs


def test_access_switches_bond_up_to_the_aggregation_pair() -> None:
    built = example_build("mixed-a100-h100")
    for network in NETWORKS:
        configs = {n: c for n, c in built.plan.management_configs.items()
                   if c.fabric == network}
        pair = sorted(n for n, c in configs.items() if c.role == "aggregation")
        assert len(pair) == 2
        access = [c for c in configs.values() if c.role == "access"]
        for config in access:
            (bond,) = config.bonds
            assert (bond.name, bond.kind, sorted(bond.peers)) == ("uplink", "uplink", pair)
            assert bond.members == tuple(u.name for u in config.uplinks)
            assert {p.bond for p in config.uplinks} == {"uplink"}
            assert all(p.bond == "" and p.vlan == VLANS[network] for p in config.host_ports)
        for name in pair:  # one bond per access switch, over its one cable to this switch
            bonds = [b for b in configs[name].bonds if b.kind != "peerlink"]
            assert sorted(b.peers[0] for b in bonds) == sorted(c.name for c in access)
            for bond in bonds:
                (member,) = bond.members
                assert bond.name == f"bond{member.removeprefix('swp')}"
                assert not configs[name].host_ports


def test_two_racks_bond_their_access_switches_to_each_other(tmp_path: Path) -> None:
    built = build(two_racks(tmp_path))
    first, second = (built.plan.management_configs[n] for n in ("mgmt-r01-1", "mgmt-r02-1"))
    (up,), (down,) = first.bonds, second.bonds
    assert (up.name, up.peers) == ("uplink", ("mgmt-r02-1", "mgmt-r02-1"))
    assert (down.name, down.peers) == ("bond47", ("mgmt-r01-1", "mgmt-r01-1"))
    assert up.members == down.members == ("swp47", "swp48")


@pytest.mark.parametrize("mtu", [9000, None])
def test_every_port_and_bond_has_the_networks_mtu(tmp_path: Path, mtu: int | None) -> None:
    built = build(two_racks(tmp_path, mtu))
    want = mtu or DEFAULT_MTU
    for switch in built.plan.management_configs:
        found = stanzas(built.files[f"switches/{switch}/interfaces"])
        assert {attrs["mtu"] for name, attrs in found if name != "bridge"} == {str(want)}
        assert "mtu" not in dict(found)["bridge"]  # a bridge takes its ports' MTU


def test_management_switches_run_no_bgp(tmp_path: Path) -> None:
    built = example_build("spectrum-x-roce")
    for name, config in built.plan.management_configs.items():
        assert config.bgp is None and config.asn == 0
        assert f"switches/{name}/frr.conf" not in built.files
        with pytest.raises(ValueError, match="bridged switch"):
            _ = config.routing
    assert not set(built.plan.management_configs) & set(built.plan.switch_configs)
    lock = (ROOT / "examples" / "spectrum-x-roce.lock").read_text()
    assert "bgp management" not in lock


@pytest.mark.parametrize("name", [*MANAGED, "two-racks"])
def test_bridge_writer_writes_the_templates_bytes(name: str, tmp_path: Path) -> None:
    """emit/frr.py's bridge_text (lines written in Python, what render() uses) against
    templates/switches/bridge.j2 (bridge_template), its oracle: the same bytes for every
    management and BMC switch of every example, and of two racks whose access switches bond
    to each other (an access switch with a bond below it)."""
    built = example_build(name) if name != "two-racks" else build(two_racks(tmp_path))
    assert frr.BRIDGE_WRITER is frr.bridge_text
    configs = built.plan.management_configs
    assert {c.role for c in configs.values()} >= {"access"}
    assert any(b.kind == "fabric" for c in configs.values() for b in c.bonds)
    for switch, config in configs.items():
        text = built.files[f"switches/{switch}/interfaces"]
        assert text == frr.bridge_template(config), switch
@pytest.mark.parametrize("name", ["mixed-a100-h100", "dgx-h100-superpod-4su"])
def test_each_pair_has_one_peer_link_and_each_access_bond_one_clag_id(name: str) -> None:
    """Every aggregation pair: one peer link (PEER_LINK_PORTS cables, the same ports on both,
    kept by the lock), an MLAG on both with the same system MAC (locally administered,
    unicast, different for every pair), and every access switch's uplink bond an MLAG bond
    on the pair: the same clag-id on both peers, on the member cabled to it."""
    built = example_build(name)
    configs = built.plan.management_configs
    links = list(peer_links(built.plan))
    pairs = sorted(n for n, c in configs.items() if c.role == "aggregation")
    assert len(links) * 2 == len(pairs) > 0
    assert sorted(n for _net, a, b, _p in links for n in (a, b)) == pairs
    lock = (ROOT / "examples" / f"{name}.lock").read_text()
    macs = set()
    for network, first, second, ports in links:
        assert len(ports) == PEER_LINK_PORTS
        assert f"peerlink {network} {first} {' '.join(ports)}\n" in lock
        one, two = configs[first], configs[second]
        assert (one.mlag.peer, two.mlag.peer) == (second, first)
        assert one.mlag.system_mac == two.mlag.system_mac
        assert one.mlag.primary and not two.mlag.primary
        assert int(one.mlag.system_mac[:2], 16) & 3 == 2  # locally administered, unicast
        macs.add(one.mlag.system_mac)
        for config in (one, two):
            (peerlink,) = [b for b in config.bonds if b.kind == "peerlink"]
            assert (peerlink.name, peerlink.members, peerlink.clag_id) == ("peerlink", ports, 0)
        clag = [{b.peers[0]: (b.clag_id, b.members) for b in c.bonds if b.kind == "fabric"}
                for c in (one, two)]
        below = [c for c in configs.values() if set(u.peer for u in c.uplinks) == {first,
                                                                                    second}]
        assert below and clag[0].keys() == clag[1].keys() == {c.name for c in below}
        for child in below:
            (uplink,) = [b for b in child.bonds if b.kind == "uplink"]
            assert uplink.clag_id == 0 and sorted(uplink.peers) == [first, second]
            ids = {clag[0][child.name][0], clag[1][child.name][0]}
            assert len(ids) == 1 and ids != {0}, (child.name, clag[0][child.name])
            ports_there = {u.peer_port for u in child.uplinks}
            assert {clag[0][child.name][1], clag[1][child.name][1]} == {tuple(ports_there)}
    assert len(macs) == len(links)
    # the pairs compile/build_management hands over are the cabled peer links, each placed
    # as its switches' names say (level 1: aggregation, pair n: switches 2n-1 and 2n)
    mlag_pairs = built.plan.mlag_pairs
    assert [(p.network, p.first, p.second, p.ports) for p in mlag_pairs] == links
    for p in mlag_pairs:
        head = p.domain.removesuffix(f"-pair{p.number}")
        assert head.endswith(f"-agg{p.level}") and p.level == 1
        assert (p.first, p.second) == (f"{head}-{2 * p.number - 1}", f"{head}-{2 * p.number}")
        assert configs[p.first].mlag.system_mac == mlag_system_mac(p.network, 1, p.number)
    assert mlag_system_mac("bmc", 1, 1) == "02:4d:14:01:00:01"
    assert mlag_system_mac("management", 2, 300) == "02:4d:0a:02:01:2c"


def test_two_racks_have_no_mlag(tmp_path: Path) -> None:
    built = build(two_racks(tmp_path))
    assert not list(peer_links(built.plan)) and not built.plan.mlag_pairs
    assert all(c.mlag is None and all(b.clag_id == 0 for b in c.bonds)
               for c in built.plan.management_configs.values())


def test_a_peer_link_the_lock_holds_elsewhere_is_a_located_conflict(tmp_path: Path) -> None:
    """The lock keeps the peer link's ports: a lock naming others (a switch model with another
    port count) stops the compile at that lock line, never moving the link silently."""
    for suffix in (".yaml", ".lock"):
        text = (ROOT / "examples" / f"mixed-a100-h100{suffix}").read_text()
        if suffix == ".lock":
            assert "peerlink bmc oob-agg1-1 swp45 swp46\n" in text
            text = sealed(unsealed(text).replace("peerlink bmc oob-agg1-1 swp45 swp46\n",
                                                 "peerlink bmc oob-agg1-1 swp43 swp44\n"))
        (tmp_path / f"m{suffix}").write_text(text)
    with pytest.raises(PipelineError) as raised:
        build(tmp_path / "m.yaml")
    (problem,) = [d for d in raised.value.diagnostics if d.code == "LOCK-CONFLICT"]
    assert "oob-agg1-1's bmc MLAG peer link would move from swp43 swp44 to swp45 swp46" \
        in problem.message
    assert problem.file is not None and problem.file.endswith("m.lock") and problem.line > 0


def test_a_lock_from_before_the_peer_link_moves_no_switch_silently(tmp_path: Path) -> None:
    """A lock written when pairs took 46 switches below them (no 'peerlink' lines) placed
    switches on the ports the peer link now takes: with more than 44 under a pair, the
    compile stops at the first such switch's lock line instead of moving it."""
    spec = tmp_path / "big.yaml"
    spec.write_text(spec_yaml(2048))  # 65 racks: two aggregation pairs per network
    lock = tmp_path / "big.lock"
    lock.write_text(build(spec, emit=False).lock.after)
    held = unsealed(lock.read_text())
    assert "\npeerlink management mgmt-agg1-1 swp45 swp46\n" in held
    lock.write_text(sealed("".join(line for line in held.splitlines(keepends=True)
                                   if not line.startswith("peerlink "))))
    with pytest.raises(PipelineError) as raised:
        build(spec, emit=False)
    (problem,) = raised.value.diagnostics
    assert problem.code == "LOCK-CONFLICT" and problem.file == str(lock)
    assert "(position 44) and every switch after it would move" in problem.message
    assert problem.excerpt is not None and problem.excerpt.endswith(" agg1 44")
