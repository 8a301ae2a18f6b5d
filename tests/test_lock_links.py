"""Fabric links kept by the lock (issue 39), through the CLI: growth lays new cables and
moves none the design can keep; where it cannot (more spines, each leaf's cables spread
over them), `cluster-iac changes` moves the fewest and names each with why; shrinking frees
the ports; a lock from before links lines is read and written with them."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from tests.conftest import ROOT
from tests.test_lock_edges import Spec, render, write


def roce(sus: int, planned: int | None = None) -> Spec:
    """The Spectrum-X RoCE example with ``sus`` scalable units of 16 nodes (a new unit's
    racks at the end of the row), its compute fabric planned for ``planned`` units."""
    data: Spec = YAML(typ="safe").load((ROOT / "examples" / "spectrum-x-roce.yaml").read_text())
    data["node_groups"][0].update(count=16 * sus, racks=f"r[01-{4 * sus:02d}]")
    data["networks"]["management"]["cidr"] = "10.60.0.0/22"
    if sus > 2:
        data["rows"][0]["racks"].append({**data["rows"][0]["racks"][0],
                                         "names": f"r[09-{4 * sus:02d}]"})
    if planned:
        data["fabric"]["compute"]["planned_scalable_units"] = planned
    return data


def changes(spec: Path, out: Path) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """`cluster-iac changes` from what is rendered in ``out`` to ``spec``: its work order's
    rows and its plan as JSON."""
    order = spec.with_name("work.csv")
    result = CliRunner().invoke(main, ["changes", str(spec), "-o", str(out), "--format",
                                       "json", "--work-order", str(order)])
    assert result.exit_code == 0, result.output
    with order.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows, json.loads(result.stdout)


def counted(rows: list[dict[str, str]], network: str = "compute") -> Counter[str]:
    return Counter(row["action"] for row in rows if row["network"] == network)


def uplinks(rows: list[dict[str, str]]) -> Counter[str]:
    """The work order's switch-to-switch cables, by action."""
    return Counter(row["action"] for row in rows if "-leaf-" in row["a_device"]
                   and "-spine-" in row["b_device"])


def links_lines(spec: Path) -> dict[str, str]:
    """The lock's links lines by switch."""
    return {line.split()[2]: line for line in lock_path(spec).read_text().splitlines()
            if line.startswith("links ")}


def grow(tmp_path: Path, small: Spec, large: Spec) -> tuple[Path, Path, str]:
    """Render ``small``, then write ``large`` over its spec; and what the render said."""
    spec, out = tmp_path / "x.yaml", tmp_path / "out"
    first = render(write(small, spec), out)
    assert first.exit_code == 0, first.output
    write(large, spec)
    return spec, out, first.output


def test_growth_past_the_spines_moves_the_fewest_cables_and_says_why(tmp_path: Path) -> None:
    """Two units to three on 2 spines: the design now takes 4 and spreads each leaf's 8
    uplinks 2 to each (4 to each of 2 before). Each leaf keeps 2 of its 4 cables to each
    old spine, on their ports: 64 of the 128 move, the figure FABRIC-GROWTH gave, each
    named with why; the new leaves' cables are laid. A lock from before links lines (the
    same lock less them) re-spreads 126 as before this change."""
    spec, out, said = grow(tmp_path, roce(2), roce(3))
    figure = re.search(r"moves (\d+) of its 128 leaf-spine cables", said)
    assert figure is not None, said
    rows, plan = changes(spec, out)
    assert counted(rows)["pull"] == 64 == int(figure.group(1))
    moved = plan["moved_links"]
    assert len(moved) == 64
    assert all(m["why"].startswith(f"the design spreads {m['switch']}'s 8 uplinks evenly over "
                                   f"4 switches: 2 to {m['peer']}, fewer than the lock holds")
               for m in moved)
    pulled = {(row["a_device"], row["a_port"], row["b_device"], row["b_port"])
              for row in rows if row["action"] == "pull"}
    assert pulled == {(m["switch"], m["port"], m["peer"], m["peer_port"]) for m in moved}
    held = links_lines(spec)
    # the lock before links lines: accepted, and the uplinks re-spread as they were
    lock = lock_path(spec)
    lock.write_text(sealed("".join(line for line in unsealed(lock.read_text())
                                   .splitlines(keepends=True) if not line.startswith("links "))))
    rows, plan = changes(spec, out)
    assert counted(rows)["pull"] == 126 and plan["moved_links"] == []
    assert render(spec, out).exit_code == 0
    assert links_lines(spec).keys() >= held.keys()  # written: every leaf's and the new ones


def test_planned_growth_lays_only_new_cables_and_every_link_stays(tmp_path: Path) -> None:
    """Planned for three units, the third adds 16 hosts (8 cables each) and 8 leaves (8
    uplinks each): 192 compute cables laid, none pulled, every links line kept."""
    spec, out, _ = grow(tmp_path, roce(2, planned=3), roce(3, planned=3))
    before = links_lines(spec)
    rows, plan = changes(spec, out)
    assert counted(rows) == Counter(lay=16 * 8 + 8 * 8)
    assert plan["moved_links"] == []
    assert render(spec, out).exit_code == 0
    after = links_lines(spec)
    assert {name: after[name] for name in before} == before
    assert len(after) == len(before) + 8


def test_infiniband_growth_moves_the_fewest(tmp_path: Path) -> None:
    """`init --platform dgx-h100` in units of 4: 8 nodes fill one spine (16 leaves x 4
    uplinks); 12 take two, each leaf 2 cables to each: 2 of each leaf's 4 move (32, the
    figure tests/test_fabric_growth.py checks, where the spread re-laid them all);
    planned for three units, none moves. (The hosts' own cables are re-laid here for
    another reason: `init`'s layout of 12 nodes gives the racks other places.)"""
    def spec(nodes: int, planned: int | None = None) -> Spec:
        text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes",
                                         str(nodes)]).output
        data: Spec = YAML(typ="safe").load(text)
        data["fabric"]["compute"].update({"scalable_unit_nodes": 4})
        if planned:
            data["fabric"]["compute"]["planned_scalable_units"] = planned
        data["rows"][0]["racks"][2]["names"] = data["fabric"]["compute"]["racks"] = "net[1-3]"
        return data

    (tmp_path / "a").mkdir()
    rows, plan = changes(*grow(tmp_path / "a", spec(8), spec(12))[:2])
    assert uplinks(rows)["pull"] == 32 and len(plan["moved_links"]) == 32
    (tmp_path / "b").mkdir()
    rows, plan = changes(*grow(tmp_path / "b", spec(8, 3), spec(12, 3))[:2])
    assert plan["moved_links"] == []
    assert uplinks(rows) == Counter(lay=8 * 4)  # the new unit's 8 rail leaves, 4 uplinks each


def test_shrinking_frees_the_ports_and_growing_back_takes_them(tmp_path: Path) -> None:
    """Three planned units to two: the third unit's hosts are retired (their fabric places
    held, so the leaves and every links line stay); with their identities freed (a render
    with --reallocate retired) its leaves go, and their links lines with them (not retired:
    the spines' ports are free), the others kept; three again: the same lines as at
    first."""
    spec, out, _ = grow(tmp_path, roce(3, planned=3), roce(2, planned=3))
    first = links_lines(spec)
    rows, plan = changes(spec, out)
    assert counted(rows) == Counter(pull=16 * 8) and plan["moved_links"] == []
    assert render(spec, out).exit_code == 0
    assert links_lines(spec) == first  # the retired hosts' places keep the leaves
    assert render(spec, out, "--reallocate", "retired").exit_code == 0
    assert "retired links" not in lock_path(spec).read_text()
    shrunk = links_lines(spec)
    assert {name: first[name] for name in shrunk} == shrunk
    assert len(shrunk) == len(first) - 8
    write(roce(3, planned=3), spec)
    assert render(spec, out).exit_code == 0
    assert links_lines(spec) == first


def test_a_links_line_is_input_its_errors_located(tmp_path: Path) -> None:
    """A person moves a cable by editing its line: one put on a leaf's host port is moved
    back with why; a line that is not a list of cables is a located error."""
    spec, out = tmp_path / "x.yaml", tmp_path / "out"
    assert render(write(roce(2), spec), out).exit_code == 0
    lock = lock_path(spec)
    body = unsealed(lock.read_text())
    line = next(line for line in body.splitlines() if line.startswith("links "))
    port = line.split()[3].split(",")[0].split(":")[0]
    lock.write_text(sealed(body.replace(line, line.replace(f" {port}:", " p1:", 1))))
    _rows, plan = changes(spec, out)
    assert [(m["port"], m["why"]) for m in plan["moved_links"]] == [
        ("p1", f"p1 of {line.split()[2]} is a host's port now")]
    lock.write_text(sealed(body.replace(line, line.replace(f" {port}:", " p1;", 1))))
    result = render(spec, out)
    assert result.exit_code == 1
    number = body.splitlines().index(line) + 1
    assert f"{lock.name}:{number}:" in result.output and "LOCK-SYNTAX" in result.output
    assert "not a switch's cables up" in result.output
