"""`cluster-iac labels TREE`: the cables' labels printed from a rendered tree's cables.csv are
the plain labels of the plan's cable table (plan/labels.py's label_columns, what render wrote
as cabling/labels.csv before), byte for byte; a tree that is not render's, a cables.csv edited
or short of a column, a rack or row the tree does not cable: located errors, nothing written."""

from __future__ import annotations

import csv
import dataclasses
import io
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from cluster_iac.cli import labels as labels_cli
from cluster_iac.cli.main import main
from cluster_iac.emit import cabling
from cluster_iac.formats.csv import csv_columns
from cluster_iac.plan import Plan
from cluster_iac.plan.labels import LABEL_COLUMNS, label_columns
from cluster_iac.plan.physical import Cables
from cluster_iac.render import build
from cluster_iac.write.files import text_digest
from cluster_iac.write.manifest import MANIFEST, with_manifest
from tests.conftest import EXAMPLE_IDS, ROOT, example_build
from tests.inventory_fixtures import wired_plan

sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
import bench_scale  # noqa: E402


class TextFile(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _oracle(c: Cables) -> str:
    """The labels render wrote before (cabling/labels.csv): the plain rows of the plan."""
    return csv_columns(LABEL_COLUMNS, label_columns(c))


def _tree(folder: Path, plan: Plan, cables: Cables | None = None) -> Path:
    """A tree as render writes it, as far as `labels` reads one: cables.csv (of ``cables``
    when given) and the manifest with its digest."""
    if cables is not None:
        plan = dataclasses.replace(plan, cables=cables)
    files = with_manifest({"cabling/cables.csv": cabling.render(plan)["cabling/cables.csv"]})
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def _bench_plan(tmp_path: Path, gpus: int, fabric: str) -> Plan:
    spec = tmp_path / f"bench-{fabric}-{gpus}.yaml"
    old, bench_scale.fabric_choice = bench_scale.fabric_choice, fabric
    try:
        spec.write_text(bench_scale.spec_yaml(gpus))
    finally:
        bench_scale.fabric_choice = old
    return build(spec, emit=False).plan


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_labels_of_the_tree_are_the_plans_labels(name: str, tmp_path: Path) -> None:
    plan = example_build(name).plan
    result = _cli("labels", _tree(tmp_path, plan))
    assert result.exit_code == 0, result.output
    assert result.stdout == _oracle(plan.cables)


@pytest.mark.parametrize(("gpus", "fabric"), [(2048, "infiniband"), (1024, "roce")])
def test_labels_of_a_bench_tree_are_the_plans_labels(gpus: int, fabric: str,
                                                     tmp_path: Path) -> None:
    plan = _bench_plan(tmp_path, gpus, fabric)
    assert len(plan.cables) > 2 * gpus
    out = tmp_path / "labels.csv"
    result = _cli("labels", _tree(tmp_path / "tree", plan), "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == _oracle(plan.cables)
    assert f"{2 * len(plan.cables)} labels of {len(plan.cables)} cables" in result.output


def test_odd_ends_are_labelled_as_the_plan_labels_them(tmp_path: Path) -> None:
    """An end with no device (no rack, no U), a device name CSV quotes, one a spreadsheet
    would read as a formula (written with an apostrophe), a 0U device, and a cable id CSV
    neutralises: cell by cell, as the plain rows are written."""
    plan = wired_plan()
    c = plan.cables
    devices = dict(c.devices)
    devices["odd,name"] = devices[c.a_device[1]]._replace(name="odd,name")
    devices["=sum"] = devices[c.a_device[2]]._replace(name="=sum", u=0)
    a_device = ("nowhere", "odd,name", "=sum", *c.a_device[3:])
    id_head = ("-1", *c.id_head[1:])
    changed = dataclasses.replace(c, a_device=a_device, devices=devices, id_head=id_head)
    result = _cli("labels", _tree(tmp_path, plan, changed))
    assert result.exit_code == 0, result.output
    assert result.stdout == _oracle(changed)
    quoted = [line for line in result.stdout.splitlines() if "odd,name:" in line]
    assert quoted and all(line.count('"') == 2 for line in quoted)
    assert "'-1" in result.stdout and "r01 =sum:" in result.stdout


def test_labels_are_written_a_block_at_a_time(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The labels come as pieces of at most _BLOCK cables, whose text is the whole file."""
    plan = example_build("dgx-h100-superpod-4su").plan
    monkeypatch.setattr(labels_cli, "_BLOCK", 100)
    cables = labels_cli.checked_cables(_tree(tmp_path, plan))
    with open(cables, encoding="utf-8", newline="") as handle:
        pieces = list(labels_cli.LabelLines(handle, str(cables)).blocks())
    assert len(pieces) == 2 + len(plan.cables) // 100
    assert max(piece.count("\n") for piece in pieces[1:]) == 200
    assert "".join(pieces) == _oracle(plan.cables)


def test_the_labels_of_an_example_rendered_by_the_cli(tmp_path: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    """The seed example rendered as a user renders it; its labels are a golden file, so a
    reviewer reads a change of label text as a plain diff."""
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"seed-64gpu-h100{suffix}", tmp_path / f"c{suffix}")
    assert _cli("render", tmp_path / "c.yaml", "-o", tmp_path / "out").exit_code == 0
    assert not (tmp_path / "out" / "cabling" / "labels.csv").exists()
    result = _cli("labels", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.stdout == _oracle(example_build("seed-64gpu-h100").plan.cables)
    assert result.stdout == snapshot(extension_class=TextFile)


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_rack_and_row_choose_the_cables_with_an_end_there(tmp_path: Path) -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    tree = _tree(tmp_path, plan)
    every = _cli("labels", tree).stdout.splitlines(keepends=True)
    c = plan.cables
    ends = [(d.rack, d.row) for i in range(len(c))
            for d in (c.devices.get(c.a_device[i]), c.devices.get(c.b_device[i])) if d]
    racks = sorted({rack for rack, _row in ends})
    rows = sorted({row for _rack, row in ends})
    chosen = {racks[0], racks[1]}
    result = _cli("labels", tree, "--rack", ",".join(chosen))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines(keepends=True)
    kept = {i for i in range(len(c))
            if {_rack(c, c.a_device[i]), _rack(c, c.b_device[i])} & chosen}
    assert 0 < len(kept) < len(c)
    assert lines == [every[0]] + [every[1 + 2 * i + e] for i in sorted(kept) for e in (0, 1)]
    by_row = _cli("labels", tree, "--row", rows[0])
    assert by_row.exit_code == 0, by_row.output
    in_row = {r["cable_id"] for r in _rows(by_row.stdout)}
    assert in_row == {c.id_head[i] + c.a_port[i] for i in range(len(c))
                      if rows[0] in {_row(c, c.a_device[i]), _row(c, c.b_device[i])}}


def _rack(c: Cables, name: str) -> str:
    d = c.devices.get(name)
    return d.rack if d else ""


def _row(c: Cables, name: str) -> str:
    d = c.devices.get(name)
    return d.row if d else ""


def _error(result: Result, code: str, where: str) -> str:
    """The one error's text, after checking its code, its place and that it is no
    traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert f"{where}: error[{code}]" in result.output, result.output
    assert "= hint: " in result.output and result.stdout == ""
    return result.output


def test_a_rack_the_tree_does_not_cable_says_which_it_meant(tmp_path: Path) -> None:
    tree = _tree(tmp_path, example_build("dgx-h100-superpod-4su").plan)
    text = _error(_cli("labels", tree, "--rack", "su1-r[1-2],su1-r99"), "LABELS-RACK",
                  "--rack:1:12")
    assert "rack 'su1-r99' has no cable in cabling/cables.csv" in text
    assert "| su1-r[1-2],su1-r99\n" in text and "|            ^\n" in text
    hinted = text.split("did you mean '")[1].split("'")[0]
    assert _cli("labels", tree, "--rack", f"su1-r[1-2],{hinted}").exit_code == 0
    text = _error(_cli("labels", tree, "--row", "nowhere"), "LABELS-ROW", "--row:1:1")
    assert "row 'nowhere' has no cable" in text
    out = tmp_path / "labels.csv"
    _error(_cli("labels", tree, "--rack", "su9-r1", "-o", out), "LABELS-RACK", "--rack:1:1")
    assert not out.exists()


def test_a_rack_list_that_is_no_hostlist_is_a_usage_error(tmp_path: Path) -> None:
    tree = _tree(tmp_path, example_build("seed-64gpu-h100").plan)
    result = _cli("labels", tree, "--rack", "r[1-")
    assert result.exit_code == 2 and "--rack" in result.output


def test_a_hand_edited_cables_csv_is_no_source_of_labels(tmp_path: Path) -> None:
    tree = _tree(tmp_path, example_build("seed-64gpu-h100").plan)
    cables = tree / "cabling" / "cables.csv"
    good = cables.read_bytes()
    assert b",mds1,ib0," in good
    cables.write_bytes(good.replace(b",mds1,ib0,", b",mds2,ib0,", 1))
    text = _error(_cli("labels", tree), "LABELS-STALE", f"{cables}:1:1")
    assert "the manifest records" in text and "git checkout" in text
    cables.write_bytes(good)  # the hint's way out: the file render wrote
    assert _cli("labels", tree).exit_code == 0
    cables.write_bytes(good[: len(good) // 2])  # copied in part
    _error(_cli("labels", tree), "LABELS-STALE", f"{cables}:1:1")


def test_a_folder_render_did_not_write_is_no_tree(tmp_path: Path) -> None:
    _error(_cli("labels", tmp_path / "nothing"), "LABELS-TREE", f"{tmp_path / 'nothing'}:1:1")
    tree = _tree(tmp_path / "t", example_build("minimal").plan)
    (tree / "cabling" / "cables.csv").unlink()
    _error(_cli("labels", tree), "LABELS-TREE", f"{tree / 'cabling' / 'cables.csv'}:1:1")
    (tree / MANIFEST).unlink()
    text = _error(_cli("labels", tree), "LABELS-TREE", f"{tree / MANIFEST}:1:1")
    assert "cluster-iac render SPEC -o" in text


def test_a_cables_csv_short_of_a_column_is_located(tmp_path: Path) -> None:
    """A cables.csv without its b_u column (the manifest saying it is render's, as a tree of
    another version's would): the header line, the columns it lacks."""
    tree = _tree(tmp_path, example_build("seed-64gpu-h100").plan)
    cables = tree / "cabling" / "cables.csv"
    rows = list(csv.reader(io.StringIO(cables.read_text())))
    drop = rows[0].index("b_u")
    text = "".join(",".join(r[:drop] + r[drop + 1:]) + "\n" for r in rows)
    cables.write_text(text)
    (tree / MANIFEST).write_text(f"{text_digest(text)}  cabling/cables.csv\n")
    out = _error(_cli("labels", tree), "LABELS-COLUMN", f"{cables}:1:1")
    assert "no column b_u" in out and "cable_id,network" in out


def test_a_line_short_of_cells_is_located_and_nothing_is_kept(tmp_path: Path) -> None:
    """A line with a cell too few in the middle of cables.csv (its manifest edited with it):
    the error at that line; -o leaves no file, standard output says the labels printed
    before it are cut short."""
    tree = _tree(tmp_path, example_build("seed-64gpu-h100").plan)
    cables = tree / "cabling" / "cables.csv"
    lines = cables.read_text().splitlines(keepends=True)
    middle = len(lines) // 2
    lines[middle] = lines[middle].replace(",", "", 1)
    text = "".join(lines)
    cables.write_text(text)
    (tree / MANIFEST).write_text(f"{text_digest(text)}  cabling/cables.csv\n")
    out = tmp_path / "labels.csv"
    result = _cli("labels", tree, "-o", out)
    found = _error(result, "LABELS-COLUMN", f"{cables}:{middle + 1}:1")
    assert "17 cells where the header names 18" in found and "no labels written" in found
    assert not out.exists()
    printed = _cli("labels", tree, "--rack", "r01")
    assert "no labels written" in _error(printed, "LABELS-COLUMN", f"{cables}:{middle + 1}:1")
    cut = _cli("labels", tree)
    assert cut.exit_code == 1 and "the labels printed are cut short" in cut.stderr

