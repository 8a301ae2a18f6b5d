"""`cluster-iac fabric export TREE --format ibdm -o DIR`: the IBDM topology file of each
InfiniBand fabric holds every cable of the tree's topology.ibnetdiscover, from both ends, in
the system types its .ibnl files define; the same tree gives the same bytes; a tree that is
not render's, a topology edited since, a name the IBDM files cannot carry: located errors,
nothing written. tests/real/test_ibdm_export_real.py has ibutils' IBDM library read them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cluster_iac.cli.main import main
from cluster_iac.emit.subnet_manager import render
from cluster_iac.formats.ibdm import host_ibnl, natural, switch_ibnl
from cluster_iac.formats.ibnetdiscover import Topology, parse
from cluster_iac.plan import Plan
from cluster_iac.write.manifest import MANIFEST, with_manifest
from tests.conftest import example_build

TOPOLOGY = "opensm/compute/topology.ibnetdiscover"
_LINE = re.compile(r"   (\S+) -> (\S+) (\S+) (\S+)")


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def tree_of(folder: Path, plan: Plan) -> Path:
    """A tree as render writes it, as far as `fabric export` reads one: each fabric's
    topology.ibnetdiscover and the manifest with their digests."""
    files = with_manifest({path: text for path, text in render(plan).items()
                           if path.endswith("/topology.ibnetdiscover")})
    return write_tree(folder, files)


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def plug(top: Topology, node_id: str, port: int) -> tuple[str, str]:
    """(system, port name) of a node's port, as the plan names them."""
    node = top.nodes[node_id]
    if node.kind == "Switch":
        return node.description, f"P{port}"
    host, name = node.description.split(" ")
    return host, name


def expected_links(top: Topology) -> set[tuple[str, str, str, str]]:
    """Every cable of the topology from both ends: (system, port, far system, far port)."""
    return {(*plug(top, a.node_id, a.port), *plug(top, b.node_id, b.port))
            for a, b in top.links.items()}


def read_topo(text: str) -> tuple[dict[str, str], set[tuple[str, str, str, str]]]:
    """An IBDM topology file read by its grammar (ibdm-topo-file(1)): system -> type, and
    the cables; each far end's type must be the type its own section declares."""
    types: dict[str, str] = {}
    links: set[tuple[str, str, str, str]] = set()
    far_types: list[tuple[str, str]] = []
    for section in text.rstrip("\n").split("\n\n"):
        head, *lines = section.split("\n")
        kind, system = head.split(" ")
        assert system not in types
        types[system] = kind
        for line in lines:
            match = _LINE.fullmatch(line)
            assert match, line
            port, far_type, far, far_port = match.groups()
            far_types.append((far, far_type))
            assert (system, port, far, far_port) not in links
            links.add((system, port, far, far_port))
    assert all(types[far] == kind for far, kind in far_types)
    return types, links


@pytest.mark.parametrize("name", ["hgx-h200", "mixed-a100-h100", "dgx-h100-superpod-4su"])
def test_every_cable_is_in_both_ends_sections(name: str, tmp_path: Path) -> None:
    plan = example_build(name).plan
    tree = tree_of(tmp_path / "tree", plan)
    top = parse((tree / TOPOLOGY).read_text())
    result = _cli("fabric", "export", tree, "--format", "ibdm", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    types, links = read_topo((tmp_path / "out" / "compute.topo").read_text())
    assert links == expected_links(top)
    assert len(links) == len(top.links)  # each end once: the cable from both sides
    systems = {plug(top, i, 1)[0] for i in top.nodes}
    assert set(types) == systems and list(types) == sorted(types, key=natural)
    written = {p.name for p in (tmp_path / "out" / "ibnl").iterdir()}
    assert written == {f"{kind}.ibnl" for kind in types.values()}
    for node in top.nodes.values():
        if node.kind == "Switch":
            assert types[node.description] == f"IB_SWITCH_{node.ports}"
    again = _cli("fabric", "export", tree, "--format", "ibdm", "-o", tmp_path / "again")
    assert again.exit_code == 0
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "again" / path.relative_to(
                tmp_path / "out")).read_bytes()


def test_the_system_types_are_ibnl() -> None:
    assert switch_ibnl(2) == "TOPSYSTEM IB_SWITCH_2\n\nNODE SW 2 IB_SWITCH_2 U1\n" \
                             "   1 -> P1\n   2 -> P2\n"
    assert host_ibnl(["ib0", "ib1"]) == ("TOPSYSTEM IB_HOST_ib0_ib1\n\n"
                                         "NODE CA 1 Adapter U1\n   1 -> ib0\n\n"
                                         "NODE CA 1 Adapter U2\n   1 -> ib1\n")


def _error(result: Result, code: str, where: str) -> str:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and result.stdout == ""
    assert f"{where}: error[{code}]" in result.output, result.output
    assert "= hint: " in result.output and "nothing written" in result.output
    return result.output


def test_an_edited_topology_is_no_source(tmp_path: Path) -> None:
    tree = tree_of(tmp_path / "tree", example_build("hgx-h200").plan)
    file = tree / TOPOLOGY
    good = file.read_bytes()
    file.write_bytes(good.replace(b'"h200-01 ib0"', b'"h200-09 ib0"'))
    out = tmp_path / "out"
    text = _error(_cli("fabric", "export", tree, "--format", "ibdm", "-o", out),
                  "IBDM-STALE", f"{file}:1:1")
    assert "the manifest records" in text and not out.exists()
    file.write_bytes(good)  # the hint's way out: the file render wrote
    assert _cli("fabric", "export", tree, "--format", "ibdm", "-o", out).exit_code == 0


def test_a_folder_render_did_not_write_is_no_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _error(_cli("fabric", "export", tmp_path / "none", "--format", "ibdm", "-o", out),
           "IBDM-TREE", f"{tmp_path / 'none'}:1:1")
    tree = tree_of(tmp_path / "tree", example_build("hgx-h200").plan)
    (tree / TOPOLOGY).unlink()
    _error(_cli("fabric", "export", tree, "--format", "ibdm", "-o", out), "IBDM-TREE",
           f"{tree / TOPOLOGY}:1:1")
    (tree / MANIFEST).unlink()
    _error(_cli("fabric", "export", tree, "--format", "ibdm", "-o", out), "IBDM-TREE",
           f"{tree / MANIFEST}:1:1")
    roce = write_tree(tmp_path / "roce", with_manifest({"cabling/cables.csv": "cable_id\n"}))
    text = _error(_cli("fabric", "export", roce, "--format", "ibdm", "-o", out), "IBDM-TREE",
                  f"{roce / MANIFEST}:1:1")
    assert "no InfiniBand fabric" in text and not out.exists()


_HOSTILE = '''switchguid=0x200deab109bebd6(200deab109bebd6)
Switch	2 "S-0200deab109bebd6"		# "{switch}" enhanced port 0 lid 0 lmc 0
[1]	"H-0201a760d235535e"[1](201a760d235535f)		# "{host}"

caguid=0x201a760d235535e
Ca	1 "H-0201a760d235535e"		# "{host}"
[1](201a760d235535f)	"S-0200deab109bebd6"[1]		# "{switch}"
'''


@pytest.mark.parametrize(("switch", "host", "line", "column", "why"), [
    ("leaf 1", "h1 ib0", 2, 35, "system name 'leaf 1'"),
    ("leaf-1", "h1 ib0 X", 3, 50, "not 'HOST PORT'"),
    ("leaf-1", "h1 ib-0", 3, 50, "port name 'ib-0'"),
    ("leaf-1", "h/1 ib0", 3, 50, "system name 'h/1'"),
    ("leaf-1", "-> ib0", 3, 50, "system name '->'"),
    ("h1", "h1 ib0", 3, 50, "two devices of the fabric have this name"),
])
def test_a_name_the_files_cannot_carry_is_located(tmp_path: Path, switch: str, host: str,
                                                  line: int, column: int, why: str) -> None:
    text = _HOSTILE.format(switch=switch, host=host)
    tree = write_tree(tmp_path / "tree", with_manifest({TOPOLOGY: text}))
    out = tmp_path / "out"
    said = _error(_cli("fabric", "export", tree, "--format", "ibdm", "-o", out), "IBDM-NAME",
                  f"{tree / TOPOLOGY}:{line}:{column}")
    assert why in said and not out.exists()
    shown = said.split("\n")
    caret = next(i for i, s in enumerate(shown) if s.strip().endswith("^"))
    assert shown[caret - 1].split(" | ", 1)[1] == text.split("\n")[line - 1]
    assert shown[caret].index("^") - shown[caret].index("|") - 2 == column - 1


def test_a_topology_that_is_no_ibnetdiscover_is_located(tmp_path: Path) -> None:
    """A file the manifest vouches for (a tree of another tool's) that is not ibnetdiscover's
    format: the line that is not."""
    text = _HOSTILE.format(switch="leaf-1", host="h1 ib0").replace("Ca\t1", "Ca\tone")
    tree = write_tree(tmp_path / "tree", with_manifest({TOPOLOGY: text}))
    said = _error(_cli("fabric", "export", tree, "--format", "ibdm", "-o", tmp_path / "out"),
                  "IBDM-STALE", f"{tree / TOPOLOGY}:6:1")
    assert "not ibnetdiscover's format" in said and "    6 | Ca\tone" in said


def test_an_export_over_an_older_one_leaves_none_of_its_files(tmp_path: Path) -> None:
    """A fabric or a system type the tree no longer has is removed from -o DIR (IBDM reads
    every .ibnl on its path); a file not of the export's forms is the user's, kept."""
    tree = tree_of(tmp_path / "tree", example_build("hgx-h200").plan)
    out = tmp_path / "out"
    for name in ("storage.topo", "ibnl/IB_SWITCH_7.ibnl", "notes.txt"):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("old\n")
    result = _cli("fabric", "export", tree, "--format", "ibdm", "-o", out)
    assert result.exit_code == 0, result.output
    assert not (out / "storage.topo").exists()
    assert not (out / "ibnl" / "IB_SWITCH_7.ibnl").exists()
    assert (out / "notes.txt").read_text() == "old\n"
    assert (out / "compute.topo").exists()
