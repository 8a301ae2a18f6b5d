"""Real pyavd (Arista AVD) reads the generated eos_designs inputs of the management and BMC
networks (switches/avd/<network>/, emit/avd.py and emit/avd_access.py) of every example that has
them, and of examples/hgx-h200.yaml on two racks (two access switches bonded to each other, no
aggregation) with a 9000-byte management MTU: validate_inputs accepts every switch's merged
variables with no violation, and get_avd_facts, get_device_structured_config and
get_device_config compile each switch's EOS configuration. That configuration holds the plan
(compile/plan_access.py): the network's VLAN by its id and name; each host port an access port
of it with the cable's label and the network's MTU (``l2 mtu``); each LACP bond a port-channel
numbered as the plan's bond, a trunk allowing the VLAN, over exactly its planned members
(``channel-group <n> mode active``), each member with its cable's label; no BGP (a bridged
switch routes nothing). On each aggregation pair, MLAG: ``mlag configuration`` with the
pair's domain and its peer link (the port-channel of the planned peer-link ports, a trunk
of group MLAG), and each port-channel down to an access switch an MLAG port-channel
(``mlag <n>``, n the plan's clag-id, the same on both switches of the pair).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.emit.avd_inputs import eos_port
from cluster_iac.plan.switching import port_number
from cluster_iac.render import Build, build
from tests.real.test_avd_real import _block, _pyavd, compiled_eos
from tests.test_management_switches import two_racks

pytestmark = pytest.mark.real

EXAMPLES = Path(__file__).parents[2] / "examples"


TWO_RACKS = "two-racks-jumbo"  # access switches bonded to each other, MTU 9000


@cache
def _built(name: str) -> Build:
    if name == TWO_RACKS:
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"avd-mgmt-{os.getpid()}"
        folder.mkdir(exist_ok=True)
        return build(two_racks(folder, 9000))
    return build(EXAMPLES / f"{name}.yaml")


def _cases() -> list[tuple[str, str]]:
    return [(path.stem, network) for path in sorted(EXAMPLES.glob("*.yaml"))
            for network in sorted({c.fabric for c in _built(path.stem).plan
                                   .management_configs.values()})] + [(TWO_RACKS, "management")]


def test_the_examples_have_management_and_bmc_networks() -> None:
    assert {network for _name, network in _cases()} == {"management", "bmc"}


@pytest.mark.parametrize(("name", "network"), _cases())
def test_pyavd_compiles_every_management_switch_as_planned(name: str, network: str) -> None:
    pyavd = _pyavd()
    built = _built(name)
    configs = {n: c for n, c in built.plan.management_configs.items() if c.fabric == network}
    compiled = compiled_eos(pyavd, built.files, network)
    assert set(compiled) == set(configs)
    for host, config in sorted(configs.items()):
        _assert_bridged(compiled[host], config)


def _assert_bridged(eos: str, config: Any) -> None:
    lines = eos.splitlines()
    assert not any(line.startswith("router bgp") for line in lines), config.name
    vlan = config.vlans[0]
    assert f"   name {vlan.name}" in _block(eos, f"vlan {vlan.vid}")
    for port in config.host_ports:
        block = _block(eos, f"interface {eos_port(port.name)}").splitlines()
        for want in (f"   description {port.description}", f"   l2 mtu {port.mtu}",
                     f"   switchport access vlan {vlan.vid}", "   switchport mode access"):
            assert want in block, (config.name, port.name, want, block)
    members = {}
    for bond in config.bonds:
        channel = port_number(bond.members[0])
        block = _block(eos, f"interface Port-Channel{channel}").splitlines()
        allowed = ("   switchport trunk group MLAG" if bond.kind == "peerlink"  # every VLAN
                   else f"   switchport trunk allowed vlan {vlan.vid}")
        for want in (allowed, "   switchport mode trunk",
                     f"   l2 mtu {bond.mtu}", f"   description {bond.description}"):
            assert want in block, (config.name, bond.name, want, block)
        assert (f"   mlag {bond.clag_id}" in block) == bool(bond.clag_id), (config.name, block)
        members.update(dict.fromkeys(bond.members, channel))
    if config.mlag is not None:
        mlag = _block(eos, "mlag configuration").splitlines()
        for want in (f"   domain-id {config.mlag.domain}",
                     f"   peer-link Port-Channel{port_number(config.mlag.ports[0])}"):
            assert want in mlag, (config.name, want, mlag)
    else:
        assert "mlag configuration" not in lines, config.name
    grouped = {port.name: int(line.split()[1]) for port in config.interfaces
               for line in _block(eos, f"interface {eos_port(port.name)}").splitlines()
               if line.startswith("   channel-group ")}
    assert grouped == members, config.name
    for port in config.interfaces:
        if port.kind != "host":
            block = _block(eos, f"interface {eos_port(port.name)}").splitlines()
            assert f"   description {port.description}" in block, (config.name, block)
            assert f"   channel-group {members[port.name]} mode active" in block
