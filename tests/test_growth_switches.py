"""A rack added to the RoCE example, through the CLI with its lock: no existing switch's line
changes in the FRR, ifupdown2 and AVD outputs (switches/), and every line added is the stanza
of a port now cabled to a new host, or the leaf's announcement of that port's /31.

tests/test_growth.py checks every output of the SuperPOD example grown in process (its storage
fabric is Ethernet); this one renders examples/spectrum-x-roce.yaml as a user does, `cluster-iac
render` twice on one spec file, so the second render reads the lock the first wrote.
"""

from __future__ import annotations

import difflib
import re
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.conftest import ROOT

# Where a stanza of a switch file starts: FRR's 'interface', ifupdown2's 'auto', an AVD list
# item, a bridge member's comment (its cable), a BGP 'network' announcement.
_STANZA = re.compile(r"^(interface |auto |\s*- name: |\s*# |\s+network )")
_NETWORK = re.compile(r"^\s+network (\S+)$")


def _render(tmp_path: Path, data: dict[str, Any], out: str) -> dict[str, str]:
    spec = tmp_path / "cluster.yaml"  # one spec file: the second render reads its lock
    with spec.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / out)])
    assert result.exit_code == 0, result.output
    tree = tmp_path / out / "switches"
    return {str(p.relative_to(tree)): p.read_text() for p in sorted(tree.rglob("*"))
            if p.is_file()}


def _grown(tmp_path: Path) -> tuple[dict[str, str], dict[str, str], set[str], set[str]]:
    """The switch files of the example without its last rack, then with it; the new hosts
    and the /31 networks of their ports."""
    large = YAML(typ="safe").load((ROOT / "examples" / "spectrum-x-roce.yaml").read_text())
    small = YAML(typ="safe").load((ROOT / "examples" / "spectrum-x-roce.yaml").read_text())
    group = small["node_groups"][0]
    assert (group["count"], group["racks"]) == (32, "r[01-08]")
    group["count"], group["racks"] = 28, "r[01-07]"
    before = _render(tmp_path, small, "small")
    after = _render(tmp_path, large, "large")
    hosts = {f"gpu-{n}" for n in range(29, 33)}
    networks = set()
    for path, text in after.items():
        if path.endswith("/interfaces"):
            for stanza in text.split("\n\n"):
                address = re.search(r"address (\S+/31)", stanza)
                if address and any(re.search(rf"\b{h}:", stanza) for h in hosts):
                    networks.add(str(IPv4Network(address[1], strict=False)))
    return before, after, hosts, networks


def _unexplained(before: dict[str, str], after: dict[str, str], hosts: set[str],
                 networks: set[str]) -> list[str]:
    """Each removed or changed line of an existing switch file, and each added stanza that
    names no new host and announces no new host port."""
    assert set(before) <= set(after)
    problems = []
    for path in sorted(before):
        old, new = before[path].splitlines(), after[path].splitlines()
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op in ("replace", "delete"):
                problems += [f"{path}: - {line}" for line in old[i1:i2]]
            if op not in ("replace", "insert"):
                continue
            if op == "insert":
                j1, j2 = _aligned(new, j1, j2)
            stanzas: list[list[str]] = []
            for line in new[j1:j2]:
                if _STANZA.match(line) or not stanzas:
                    stanzas.append([])
                stanzas[-1].append(line)
            for stanza in stanzas:
                text = "\n".join(stanza)
                network = _NETWORK.match(stanza[0])
                new_port = (network[1] in networks if network
                            else any(re.search(rf"\b{h}:", text) for h in hosts))
                if not new_port:
                    problems += [f"{path}: + {line}" for line in stanza]
    return problems


def _aligned(lines: list[str], j1: int, j2: int) -> tuple[int, int]:
    """An inserted block slid to start at a stanza: a diff may show the new stanza's lines
    from the middle of the one before it (``service_profile ... - name: ...``), the same
    lines repeating; the block means the same text at either place."""
    start, end = j1, j2
    while start > 0 and lines[start - 1] == lines[end - 1] and not _STANZA.match(lines[start]):
        start, end = start - 1, end - 1
    if _STANZA.match(lines[start]):
        return start, end
    start, end = j1, j2
    while end < len(lines) and lines[start] == lines[end] and not _STANZA.match(lines[start]):
        start, end = start + 1, end + 1
    return (start, end) if _STANZA.match(lines[start]) else (j1, j2)


def test_a_rack_added_changes_only_its_ports_on_every_switch(tmp_path: Path) -> None:
    before, after, hosts, networks = _grown(tmp_path)
    assert _unexplained(before, after, hosts, networks) == []
    # the new ports are there: each new host's eight rails on their leaves (FRR, ifupdown2),
    # its management port, and their /31s announced; the AVD inputs carry them too
    frr = "".join(text for path, text in after.items() if path.endswith("/frr.conf"))
    assert sum(f"description {h}:rdma" in frr for h in hosts) == len(hosts)
    assert len(re.findall(r"description gpu-(29|3[0-2]):rdma", frr)) == 8 * len(hosts)
    assert len(networks) == 8 * len(hosts)
    assert all(f"network {n}" in frr for n in networks)
    avd = after["avd/compute/group_vars/COMPUTE_FABRIC.yml"]
    assert len(re.findall(r"description: 'gpu-(29|3[0-2]):rdma", avd)) == 8 * len(hosts)
    assert "gpu-29:eth0" in after["avd/management/group_vars/MANAGEMENT_FABRIC.yml"]
    # the check can fail: an existing port's line rewritten, an existing host's /31 no longer
    # announced, a stanza added for no new host
    planted = dict(after)
    leaf = "eth-leaf-su1-r1/frr.conf"
    planted[leaf] = planted[leaf].replace("description gpu-01:rdma0", "description gpu-01:x", 1)
    spine = "eth-spine-1/frr.conf"
    planted[spine] = planted[spine].replace("exit\n!\n", "exit\n!\ninterface p64\nexit\n!\n", 1)
    found = _unexplained(before, planted, hosts, networks)
    assert {line.split(":")[0] for line in found} == {leaf, spine}, found
