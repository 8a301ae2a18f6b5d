"""Real ifupdown2 reads the generated management and BMC switch configurations
(switches/<name>/interfaces of a bridged switch, emit/frr.py) in network namespaces.

A sample of each case: the network's first two access switches and the aggregation pair
above them (and examples/hgx-h200.yaml on two racks, its two access switches bonded to each
other, at a 9000-byte MTU), one namespace each holding the switch's planned ports (veth
pairs, their peers loose in the namespace). In each, ifupdown2 ``ifup -a --syntax-check``
parses the file and runs every addon's attribute validation (bond-mode values, VLAN ids
1-4094, bridge and bond attributes, MTU on a bridge): no warning, no error, exit 0. Then
``ifquery -a -o json`` (ifupdown2's own reading of the file) holds the plan: each host port
``bridge-access`` its VLAN with the cable's label as alias, each bond 802.3ad over its
planned members, tagged with the VLAN, the bridge VLAN-aware over the host ports and bonds,
every MTU the network's; on the aggregation pair, its MLAG (Cumulus CLAG): the ``peerlink``
bond over the planned peer-link ports, ``peerlink.4094`` with ``clagd-peer-ip linklocal``
and the pair's system MAC (the same on both), and each bond down to an access switch with
``clag-id``, the same on both switches of the pair. A file with a VLAN id out of range is
refused by the same check (so the check can fail).

What this sandbox cannot do: apply the files to the kernel. Its kernel is built without
bonding (CONFIG_BONDING), 802.1Q (CONFIG_VLAN_8021Q) and bridge VLAN filtering (``ip link
add type bridge vlan_filtering 1``: Operation not supported), which ``ifup -a`` needs; and
Cumulus's clagd (with the ifupdown2 addon that validates the ``clagd-*`` attributes) is not
in Debian: Debian's ifupdown2 reads ``clag-id`` and ``clagd-*`` without checking their
values (an attribute it does not know is no error to ``--syntax-check``), so what is proved
here is that ifupdown2 reads the MLAG lines as planned, not that clagd accepts them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster_iac.plan.switching import port_number
from cluster_iac.render import build
from tests.real import netns
from tests.real.netns import Lab
from tests.test_management_switches import two_racks

pytestmark = pytest.mark.real

EXAMPLES = Path(__file__).parents[2] / "examples"
# examples/hgx-h200.yaml on two racks: two access switches bonded to each other, MTU 9000
TWO_RACKS = "two-racks-jumbo"
CASES = [("spectrum-x-roce", "management"), ("mixed-a100-h100", "bmc"), (TWO_RACKS, "management")]


def _sample(plan: Any, network: str) -> list[str]:
    """Two access switches and the switches above them (the aggregation pair; with two racks,
    none: the two are bonded to each other)."""
    configs = {n: c for n, c in plan.management_configs.items() if c.fabric == network}
    access = [n for n, c in configs.items() if c.role == "access"][:2]
    above = sorted({u.peer for n in access for u in configs[n].uplinks} - set(access))
    assert len(access) == 2 and len(above) in (0, 2), (access, above)
    assert all(configs[n].bonds for n in access)
    return [*access, *above]


def _ports(lab: Lab, config: Any) -> None:
    """The switch's planned ports, as veth ends whose peers stay loose in its namespace."""
    for port in config.interfaces:
        lab.link((config.name, port.name), (config.name, f"x{port.name}"))


def _syntax_check(lab: Lab, name: str, text: str) -> tuple[int, str]:
    done = netns.ifupdown2(lab, name, text, "ifup", "-a", "--syntax-check", timeout=60)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize(("example", "network"), CASES)
def test_ifupdown2_reads_the_generated_management_switches(example: str, network: str,
                                                           tmp_path: Path) -> None:
    netns.require("ip", "ifup", "ifquery", "unshare")
    built = build(two_racks(tmp_path, 9000) if example == TWO_RACKS
                  else EXAMPLES / f"{example}.yaml")
    configs, files = built.plan.management_configs, built.files
    sample = _sample(built.plan, network)
    read: dict[str, dict[str, Any]] = {}
    with Lab(sample) as lab:
        for name in sample:
            _ports(lab, configs[name])
            text = files[f"switches/{name}/interfaces"]
            code, said = _syntax_check(lab, name, text)
            assert code == 0 and "warning" not in said and "error" not in said, said
            shown = netns.ifupdown2(lab, name, text, "ifquery", "-a", "-o", "json").stdout
            _assert_read_as_planned(configs[name], json.loads(shown))
            read[name] = {s["name"]: s["config"] for s in json.loads(shown)}
        _assert_mlag_pair(configs, read)
        broken = files[f"switches/{sample[0]}/interfaces"].replace(
            f"bridge-access {configs[sample[0]].vlans[0].vid}", "bridge-access 5000")
        with pytest.raises(netns.LabError, match='bridge-access: value of out range "5000"'):
            _syntax_check(lab, sample[0], broken)  # exit 1


def _assert_read_as_planned(config: Any, shown: list[dict[str, Any]]) -> None:
    """ifupdown2's reading of one switch's file against the plan."""
    stanzas = {s["name"]: s["config"] for s in shown}
    vlan = config.vlans[0]
    for port in config.interfaces:
        found = stanzas.pop(port.name)
        want = {"alias": port.description, "mtu": str(vlan.mtu)}
        if port.kind == "host":
            want["bridge-access"] = str(vlan.vid)
        assert found == want, (config.name, port.name, found)
    for bond in config.bonds:
        found = stanzas.pop(bond.name)
        assert found["bond-slaves"] == " ".join(bond.members), found
        assert found["bond-mode"] == "802.3ad" and found["bridge-vids"] == str(vlan.vid)
        assert found["mtu"] == str(vlan.mtu)
        assert found.get("clag-id") == (str(bond.clag_id) if bond.clag_id else None), found
        if config.mlag is not None and bond.kind == "fabric":
            assert int(found["clag-id"]) == port_number(bond.members[0])  # the child's port
    if config.mlag is not None:
        control = stanzas.pop("peerlink.4094")
        assert control["clagd-peer-ip"] == "linklocal"
        assert control["clagd-sys-mac"] == config.mlag.system_mac
        peerlink = next(b for b in config.bonds if b.name == "peerlink")
        assert peerlink.members == config.mlag.ports
    bridge = stanzas.pop("bridge")
    assert bridge["bridge-vlan-aware"] == "yes" and bridge["bridge-vids"] == str(vlan.vid)
    members = [*(p.name for p in config.host_ports), *(b.name for b in config.bonds)]
    ports = bridge["bridge-ports"]  # a line per port, in port order; one line: a string
    assert ([ports] if isinstance(ports, str) else ports) == members, bridge
    assert not stanzas, f"{config.name}: stanzas the plan has not: {sorted(stanzas)}"


def _assert_mlag_pair(configs: dict[str, Any], read: dict[str, dict[str, Any]]) -> None:
    """As ifupdown2 read them: both switches of the sampled pair name one system MAC, bond
    the same peer-link ports, and give each access switch's bond one clag-id."""
    pair = sorted(n for n in read if configs[n].mlag is not None)
    if not pair:
        return
    one, two = (read[n] for n in pair)
    assert one["peerlink.4094"]["clagd-sys-mac"] == two["peerlink.4094"]["clagd-sys-mac"]
    assert one["peerlink"]["bond-slaves"] == two["peerlink"]["bond-slaves"]
    for switch in read:
        if configs[switch].role != "access":
            continue
        ids = {name: next(stanza["clag-id"] for stanza in read[name].values()
                          if stanza.get("alias") == switch and "clag-id" in stanza)
               for name in pair}
        assert len(set(ids.values())) == 1, (switch, ids)
