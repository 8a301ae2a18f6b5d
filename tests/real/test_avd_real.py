"""Real pyavd (Arista AVD) reads the generated eos_designs inputs (switches/avd/<fabric>/,
emit/avd.py) of every Ethernet example, unnumbered and numbered: validate_inputs accepts every
switch's merged variables with no violation, get_avd_facts, get_device_structured_config and
get_device_config compile each switch's EOS configuration, and that configuration carries the
plan's ASN, loopback, ECMP width, host-port /31s and RoCE QoS (DSCP -> traffic class, PFC
no-drop priority, ECN thresholds, trust DSCP), the same ASN and router-id as the FRR dialect
(switches/<name>/frr.conf). AVD does not refuse two nodes with one loopback, so the loopbacks'
uniqueness is asserted here.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.emit.avd_inputs import QOS_PROFILE, eos_port, fabric_name
from cluster_iac.render import Build, build

pytestmark = pytest.mark.real

EXAMPLES = Path(__file__).parents[2] / "examples"
ETHERNET = re.compile(r"technology:\s*(roce|ethernet)\b")


def _ethernet_examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.yaml") if ETHERNET.search(p.read_text()))


def _pyavd() -> Any:
    """pyavd, or a failure under CI (a skip on a developer's machine without it)."""
    try:
        import pyavd
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("pyavd is not installed: pip install -e '.[test]'")
        pytest.skip("pyavd is not installed (pip install pyavd)")
    return pyavd


@cache
def _built(name: str, underlay: str) -> Build:
    """An example as written ('as-is') or with its fabrics' underlay numbered."""
    spec = EXAMPLES / f"{name}.yaml"
    if underlay == "as-is":
        return build(spec)
    text = spec.read_text().replace("{bgp: unnumbered}", "{bgp: numbered}")
    assert "numbered}" in text, "the example names its underlay"
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"avd-{name}-{os.getpid()}"
    folder.mkdir(exist_ok=True)
    (folder / spec.name).write_text(text)
    return build(folder / spec.name)


def _load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def _host_inputs(files: dict[str, str], network: str) -> dict[str, dict[str, Any]]:
    """Each switch's variables as Ansible merges them: the fabric group, then its role group."""
    base = f"switches/avd/{network}"
    name = fabric_name(network)
    inventory = _load(files[f"{base}/inventory.yml"])["all"]["children"][name]["children"]
    fabric = _load(files[f"{base}/group_vars/{name}.yml"])
    found = {}
    for group, body in inventory.items():
        role = _load(files[f"{base}/group_vars/{group}.yml"])
        for host in body["hosts"]:
            found[host] = {**fabric, **role}
    return found


def compiled_eos(pyavd: Any, files: dict[str, str], network: str) -> dict[str, str]:
    """Each switch of a network's AVD inputs (switches/avd/<network>/), validated by pyavd
    with no violation, and compiled into its EOS configuration: host -> EOS text."""
    inputs = {}
    for host, variables in sorted(_host_inputs(files, network).items()):
        result = pyavd.validate_inputs(variables)
        assert not result.validation_result.violations, (host, [
            (v.path, v.message) for v in result.validation_result.violations][:5])
        inputs[host] = result.validated_data
    facts = pyavd.get_avd_facts(inputs)
    return {host: pyavd.get_device_config(
                pyavd.get_device_structured_config(host, inputs[host], facts))
            for host in inputs}


CASES = [(name, underlay) for name in _ethernet_examples() for underlay in ("as-is", "numbered")]


def test_there_is_an_ethernet_example() -> None:
    assert _ethernet_examples(), "no example has an Ethernet fabric"


@pytest.mark.parametrize(("name", "underlay"), CASES)
def test_pyavd_compiles_every_switch_as_planned(name: str, underlay: str) -> None:
    pyavd = _pyavd()
    built = _built(name, underlay)
    plan = built.plan
    for network in sorted({c.fabric for c in plan.switch_configs.values()}):
        configs = {n: c for n, c in plan.switch_configs.items() if c.fabric == network}
        loopbacks = [c.loopback for c in configs.values()]
        assert len(set(loopbacks)) == len(loopbacks), "two switches share a loopback"
        compiled = compiled_eos(pyavd, built.files, network)
        assert set(compiled) == set(configs)
        for host, config in sorted(configs.items()):
            eos = compiled[host]
            _assert_routing(eos, config)
            _assert_qos(eos, config, plan.qos[network])
            _assert_same_as_frr(built.files[f"switches/{host}/frr.conf"], config)


def _assert_routing(eos: str, config: Any) -> None:
    lines = eos.splitlines()
    assert f"router bgp {config.asn}" in lines
    assert f"   router-id {config.loopback}" in lines
    assert f"   maximum-paths {config.bgp.maximum_paths}" in lines
    assert _block(eos, "interface Loopback0").count(f"ip address {config.loopback}/32") == 1
    for port in config.host_ports:
        block = _block(eos, f"interface {eos_port(port.name)}")
        assert f"   mtu {port.mtu}" in block
        if port.address:
            assert f"   ip address {port.address}" in block
    for neighbor in config.bgp.neighbors:
        if neighbor.address:  # numbered: a session on the far end's /31 address
            assert re.search(rf"^   neighbor {re.escape(neighbor.address)} .*remote-as "
                             rf"{neighbor.remote_asn}$|^   neighbor {re.escape(neighbor.address)}"
                             rf" remote-as {neighbor.remote_asn}$", eos, re.M), neighbor
        else:  # unnumbered: RFC 5549 on the port
            assert (f"   neighbor interface {eos_port(neighbor.interface)} peer-group "
                    f"IPv4-UNDERLAY-PEERS remote-as {neighbor.remote_asn}") in lines, neighbor
    for up in config.uplinks:
        block = _block(eos, f"interface {eos_port(up.name)}")
        assert f"   mtu {up.mtu}" in block
        if up.address:
            assert f"   ip address {up.address}" in block


def _assert_qos(eos: str, config: Any, qos: Any) -> None:
    lines = eos.splitlines()
    assert f"qos map dscp {qos.roce_dscp} to traffic-class {qos.roce_priority}" in lines
    assert f"qos map dscp {qos.cnp_dscp} to traffic-class {qos.cnp_priority}" in lines
    profile = _block(eos, f"qos profile {QOS_PROFILE}")
    assert "   qos trust dscp" in profile
    assert f"   priority-flow-control priority {qos.roce_priority} no-drop" in profile
    ecn = qos.ecn[0]
    assert (f"random-detect ecn minimum-threshold {ecn.min_bytes // 1000} kbytes "
            f"maximum-threshold {ecn.max_bytes // 1000} kbytes") in profile
    for port in config.interfaces:
        block = _block(eos, f"interface {eos_port(port.name)}")
        assert f"   service-profile {QOS_PROFILE}" in block


def _assert_same_as_frr(frr: str, config: Any) -> None:
    lines = frr.splitlines()
    assert f"router bgp {config.asn}" in lines
    assert f" bgp router-id {config.loopback}" in lines


def _block(eos: str, head: str) -> str:
    """The lines of one top-level EOS block (its head to the next '!')."""
    match = re.search(rf"^{re.escape(head)}\n((?:   .*\n|      .*\n)*)", eos, re.M)
    assert match, f"no '{head}' in the compiled configuration"
    return match.group(1)
