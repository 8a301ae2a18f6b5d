"""The IBDM export (`cluster-iac fabric export TREE --format ibdm`) read by ibutils' IBDM
library, the reader of ibtopodiff, ibdmchk and ibdiagnet -t: ibdmsh (its Tcl shell) parses
the topology file with IBFabric_parseTopology, building each system from the exported .ibnl
types (IBDM_IBNL_PATH), and prints the systems, the cabled front-panel ports with the node
ports IBDM connected behind them, and the counts; they are the plan's, cable for cable.
ibdmtr traces a directed route through the parsed fabric and names the plan's host and port
at its end.

Not tested here: the comparison with a discovered fabric (ibtopodiff, the library's
ibdmMatchFabrics and ibdmMatchFabricsFromEdge). In ibutils 1.5.7 (Debian 12) both matches
abort (buffer overflow detected, SIGABRT) or segfault on the package's own example files
(SingleRhino.topo, FullGnu.topo against its subnet.lst), as on this export against the
opensm-subnet.lst OpenSM writes for it on ibsim."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.formats.ibdm import natural
from cluster_iac.formats.ibnetdiscover import Topology, parse
from tests.conftest import example_build
from tests.real.ibsim_harness import tool
from tests.test_fabric_export import TOPOLOGY, expected_links, plug, tree_of

pytestmark = pytest.mark.real

SCRIPT = Path(__file__).with_name("ibdm_links.tcl")


def _export(name: str, folder: Path) -> tuple[Topology, Path]:
    tree = tree_of(folder / "tree", example_build(name).plan)
    out = folder / "ibdm"
    result = CliRunner().invoke(main, ["fabric", "export", str(tree), "--format", "ibdm",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    return parse((tree / TOPOLOGY).read_text()), out


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IBDM_IBNL_PATH": str(folder / "ibdm" / "ibnl")}
    return subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=folder)


def _node_ports(top: Topology) -> dict[tuple[str, int], str]:
    """(node id, port) -> the node port IBDM builds for it: a switch's U1, port n; a host's
    n-th adapter (its ports in natural order), port 1."""
    hosts: dict[str, list[str]] = {}
    for node_id, node in top.nodes.items():
        if node.kind != "Switch":
            system, port = plug(top, node_id, 1)
            hosts.setdefault(system, []).append(port)
    for ports in hosts.values():
        ports.sort(key=natural)
    made = {}
    for node_id, node in top.nodes.items():
        if node.kind == "Switch":
            made.update({(node_id, n): f"{node.description}/U1:{n}"
                         for n in range(1, node.ports + 1)})
        else:
            system, port = plug(top, node_id, 1)
            made[(node_id, 1)] = f"{system}/U{hosts[system].index(port) + 1}:1"
    return made


@pytest.mark.parametrize("name", ["hgx-h200", "mixed-a100-h100", "dgx-h100-superpod-4su"])
def test_ibdm_builds_the_planned_fabric_from_the_export(name: str, tmp_path: Path) -> None:
    top, out = _export(name, tmp_path)
    done = _run(tmp_path, tool("ibdmsh"), str(SCRIPT), str(out / "compute.topo"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "-E-" not in done.stdout + done.stderr, done.stdout[-3000:]
    lines = done.stdout.splitlines()
    links = [tuple(line.split(" ")[1:]) for line in lines if line.startswith("LINK ")]
    # every cable from both ends, each front-panel port on the node port the plan cables
    made = _node_ports(top)
    want = {(*plug(top, *a), *plug(top, *b), made[a], made[b]) for a, b in top.links.items()}
    assert len(links) == len(set(links)) and set(links) == want
    assert {link[:4] for link in links} == expected_links(top)
    systems = {line.split(" ")[1] for line in lines if line.startswith("SYSTEM ")}
    assert systems == {plug(top, i, 1)[0] for i in top.nodes}
    counts = dict(re.findall(r"(\w+)=(\d+)", lines[-1]))
    assert lines[-1].startswith("COUNTS ") and counts == {
        "systems": str(len(systems)), "nodes": str(len(top.nodes)),
        "ports": str(sum(n.ports for n in top.nodes.values())),
        "links": str(len(top.links) // 2)}


def test_ibdmtr_traces_a_route_to_the_planned_host_port(tmp_path: Path) -> None:
    """From the first host's first adapter out to its leaf, then out of the leaf port that
    cables another host: ibdmtr names that host and port as the plan cables them."""
    top, out = _export("hgx-h200", tmp_path)
    start = min((i for i, n in top.nodes.items() if n.kind != "Switch"),
                key=lambda i: natural(top.nodes[i].description))
    leaf = next(b for a, b in top.links.items() if a.node_id == start)
    out_port, there = next((a, b) for a, b in sorted(top.links.items(), reverse=True)
                           if a.node_id == leaf.node_id and b.node_id != start)
    host, port = plug(top, *there)
    source = _node_ports(top)[(start, 1)].split(":")[0]
    done = _run(tmp_path, tool("ibdmtr"), "-t", str(out / "compute.topo"), "-s", source,
                "-p", "1", "-d", f"0,1,{out_port.port}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    hops = re.findall(r"TO   Host:(\S+) Plug:(\S+)", done.stdout)
    leaf_name = top.nodes[leaf.node_id].description
    assert hops == [(leaf_name, f"P{leaf.port}"), (host, port)], done.stdout[-3000:]
