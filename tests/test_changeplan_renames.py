"""The change plan shows a rename as one, and its totals apart (issue 39): a host renamed by the
spec's ``moved`` list is 'old -> new', not a removal and an addition, its cables and cords
stay and are relabelled; the work order's totals keep data cables and power cords apart and
count a cable pulled and laid again once, as a re-lay."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from tests.conftest import ROOT
from tests.test_lock_edges import render, write
from tests.test_lock_rows import SMALL


def _minimal(tmp_path: Path) -> Path:
    """The minimal example (gpu01, gpu02, head1 in r01) rendered into out/ with its lock."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "minimal.yaml", spec)
    shutil.copy(ROOT / "examples" / "minimal.lock", lock_path(spec))
    assert render(spec, tmp_path / "out").exit_code == 0
    return spec


def _changes(spec: Path, *extra: str) -> tuple[str, list[dict[str, str]]]:
    order = spec.parent / "order.csv"
    result = CliRunner().invoke(main, ["changes", str(spec), "-o", str(spec.parent / "out"),
                                       "--work-order", str(order), *extra])
    assert result.exit_code == 0, result.output
    return result.stdout, list(csv.DictReader(io.StringIO(order.read_text())))


def test_a_rename_is_shown_as_a_rename_and_its_cords_are_relabelled(tmp_path: Path) -> None:
    spec = _minimal(tmp_path)
    text = spec.read_text()
    assert 'hostname: "gpu##"' in text
    spec.write_text(text.replace('hostname: "gpu##"', 'hostname: "node##"')
                    + 'moved:\n  - {from: "gpu##", to: "node##"}\n')
    plan, rows = _changes(spec)
    # before: '| nodes | 2 | 0 | 2 |', nodes added node01, node02 and removed gpu01, gpu02,
    # and 12 cords to pull and lay again
    assert "| nodes | 0 | 0 | 0 | 2 |" in plan
    assert "| Slurm nodes | 0 | 0 | 0 | 2 |" in plan
    assert "- nodes renamed: gpu01 -> node01, gpu02 -> node02" in plan
    assert "- nodes added" not in plan and "- nodes removed" not in plan
    assert "| cords and outlets | 0 | 0 | 0 | 12 |" in plan
    assert {row["action"] for row in rows} == {"relabel"}
    assert {row["a_device"] for row in rows} == {"node01", "node02"}
    assert "power cords: 0 to lay, 0 to pull, 0 to re-lay (pulled and laid again), " \
           "12 to relabel" in plan
    # the JSON says the same
    result = CliRunner().invoke(main, ["changes", str(spec), "-o", str(tmp_path / "out"),
                                       "--format", "json"])
    assert '"gpu01 -> node01"' in result.stdout


def test_a_removal_and_an_addition_in_one_change_are_no_rename(tmp_path: Path) -> None:
    """gpu02 removed and a new host added in its place: gpu02's lines are retired, so the
    new host is new, whatever it is given."""
    spec = _minimal(tmp_path)
    text = spec.read_text()
    line = '  - {name: gpu, node_type: gpu, count: 2, hostname: "gpu##", racks: r01}\n'
    assert line in text
    spec.write_text(text.replace(line, line.replace("count: 2", "count: 1") +
                                 '  - {name: new, node_type: gpu, count: 1, hostname: "new#", '
                                 'racks: r01}\n'))
    plan, _ = _changes(spec, "--reallocate", "retired")
    assert "| nodes | 1 | 0 | 1 | 0 |" in plan
    assert "- nodes added: new1" in plan and "- nodes removed: gpu02" in plan
    assert "renamed:" not in plan


def test_the_totals_keep_cables_and_cords_apart_and_count_a_relay_once(tmp_path: Path) -> None:
    """A row moved on the floor (its lock line edited): the cables that cross to it are
    longer, each pulled and laid again; the totals say so once per cable."""
    spec, out = tmp_path / "pod.yaml", tmp_path / "out"
    assert render(write(SMALL, spec), out).exit_code == 0
    lock = lock_path(spec)
    lock.write_text(sealed(unsealed(lock.read_text()).replace("row network 1\n",
                                                              "row network 5\n")))
    plan, rows = _changes(spec)
    pulled = {row["cable_id"] for row in rows if row["action"] == "pull"}
    laid = {row["cable_id"] for row in rows if row["action"] == "lay"}
    assert pulled and pulled == laid  # every one re-laid, none new, none gone
    cords = {row["cable_id"] for row in rows if row["network"] == "power"}
    found = re.search(r"data cables: (\d+) to lay, (\d+) to pull, (\d+) to re-lay "
                      r"\(pulled and laid again\), 0 to relabel; power cords: (\d+) to lay, "
                      r"(\d+) to pull, (\d+) to re-lay", plan)
    assert found is not None, plan
    assert [int(n) for n in found.groups()] == [0, 0, len(pulled - cords), 0, 0,
                                                len(pulled & cords)]
