"""Growth moves no cable in service on the storage and management fabrics (issue 39): a new
row of racks listed before the rows already on the floor (a scalable unit beside its
siblings) took the floor place of the network row, so every storage, management and BMC
cable from the compute rows to it came out longer and was listed to pull and lay again.
The lock keeps each row's floor place (``row`` lines); a new row goes to the end."""

from __future__ import annotations

import copy
import csv
import re
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from tests.conftest import ROOT
from tests.test_lock_edges import Spec, render, write

SMALL: Spec = {  # compute racks in one row, the storage fabric's switch in another
    "cluster": {"name": "pod", "slurm_version": "22.05"},
    "node_types": {"dgx": {"platform": "dgx-h100"}, "head": {"platform": "mgmt-1u"}},
    "node_groups": [
        {"name": "dgx", "node_type": "dgx", "count": 8, "hostname": "dgx-##",
         "racks": "r[1-2]", "per_rack": 4},
        {"name": "head", "role": "controller", "node_type": "head", "count": 1,
         "hostname": "head#", "racks": "net1"}],
    "rows": [
        {"name": "compute", "racks": [{"names": "r[1-2]", "height_u": 48, "pdu": "p"}]},
        {"name": "network", "racks": [{"names": "net1", "height_u": 48, "pdu": "p",
                                       "max_power_kw": 60}]}],
    "power": {"pdu_profiles": {"p": {"layout": "three", "voltage_v": 415, "phases": 3,
                                     "breaker_a": 63, "rated_100_percent": True,
                                     "outlets": 60}}},
    "fabric": {"storage": {"technology": "infiniband", "leaf_switch": "qm9700",
                           "racks": "net1"}},
    "networks": {"management": {"cidr": "10.0.0.0/22"}, "bmc": {"cidr": "10.1.0.0/22"},
                 "storage": {"cidr": "10.3.0.0/24"}},
    "slurm": {"partitions": [{"name": "batch", "node_groups": ["dgx"], "default": True}]},
    "policy": {"air_cooled_rack_kw": 45},
}


def grown(data: Spec) -> Spec:
    """Four more nodes in a new rack, its row listed between the compute and network rows."""
    data = copy.deepcopy(data)
    data["node_groups"][0].update(count=12, racks="r[1-3]")
    data["rows"].insert(1, {"name": "compute2",
                            "racks": [{"names": "r3", "height_u": 48, "pdu": "p"}]})
    return data


def work_order(tmp_path: Path) -> list[dict[str, str]]:
    """Render the small spec, grow it, and read the change's cabling work order."""
    spec, out = tmp_path / "pod.yaml", tmp_path / "out"
    assert render(write(SMALL, spec), out).exit_code == 0
    write(grown(SMALL), spec)
    order = tmp_path / "work.csv"
    result = CliRunner().invoke(main, ["changes", str(spec), "-o", str(out),
                                       "--work-order", str(order)])
    assert result.exit_code == 0, result.output
    with order.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_row_listed_before_the_network_row_moves_no_cable_in_service(tmp_path: Path) -> None:
    rows = work_order(tmp_path)
    pulled = Counter(row["network"] for row in rows if row["action"] == "pull")
    laid = Counter(row["network"] for row in rows if row["action"] == "lay")
    assert pulled == Counter()  # before: 16 storage, 4 management and 4 BMC cables re-laid
    # the new nodes' cables are laid: two storage ports each, and their management access
    assert laid["storage"] == 8
    assert laid["management"] > 0 and laid["bmc"] > 0


def test_the_lock_holds_each_rows_floor_place_and_a_new_row_takes_the_next(
        tmp_path: Path) -> None:
    work_order(tmp_path)  # renders the small spec, then the grown one's plan: lock unchanged
    spec, out = tmp_path / "pod.yaml", tmp_path / "out"
    assert render(spec, out).exit_code == 0
    lock = lock_path(spec).read_text()
    rows = [line for line in lock.splitlines() if line.startswith("row ")]
    assert rows == ["row compute 0", "row compute2 2", "row network 1"]


def test_a_row_line_is_input_its_errors_located(tmp_path: Path) -> None:
    """The lock is input: a row moved on the floor by editing its line lengthens the
    cables that cross to it; a line that is not a place is a located error."""
    spec, out = tmp_path / "pod.yaml", tmp_path / "out"
    assert render(write(SMALL, spec), out).exit_code == 0
    before = (out / "cabling" / "cables.csv").read_text()
    lock = lock_path(spec)
    body = unsealed(lock.read_text())
    lock.write_text(sealed(body.replace("row network 1\n", "row network 5\n")))
    assert render(spec, out).exit_code == 0
    after = (out / "cabling" / "cables.csv").read_text()
    longer = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
              if a != b]
    assert longer and all(",storage," in a or ",management," in a or ",bmc," in a
                          or ",power," in a for a, _ in longer)
    lock.write_text(sealed(body.replace("row network 1\n", "row network x\n")))
    result = render(spec, out)
    assert result.exit_code == 1
    assert "LOCK-SYNTAX" in result.output and "position 'x'" in result.output
    assert f"{lock.name}:" in result.output


def _superpod(sus: int, planned: int | None) -> Spec:
    """The SuperPOD example with ``sus`` scalable units (a new unit's row after the
    management row), its storage fabric planned for ``planned`` units of 32 hosts."""
    data: Spec = YAML(typ="safe").load((ROOT / "examples" / "dgx-h100-superpod-4su.yaml")
                                       .read_text())
    data["node_groups"][0].update(count=32 * sus - 1 if sus == 4 else 32 * sus,
                                  racks=f"su[1-{sus}]-r[1-8]")
    compute = [row for row in data["rows"] if row["name"].startswith("su")]
    data["rows"] = [row for row in data["rows"] if not row["name"].startswith("su")]
    data["rows"][:0] = compute[:3]
    data["rows"] += compute[3:sus]
    if planned:
        data["fabric"]["storage"].update(scalable_unit_nodes=32, planned_scalable_units=planned)
    return data


def _storage_pulls(tmp_path: Path, planned: int | None) -> tuple[int, str]:
    """Render three units, grow to four, and count the storage cables the change pulls;
    and what the render of three said."""
    tmp_path.mkdir()
    spec, out = tmp_path / "pod.yaml", tmp_path / "out"
    first = render(write(_superpod(3, planned), spec), out)
    assert first.exit_code == 0, first.output
    write(_superpod(4, planned), spec)
    order = tmp_path / "work.csv"
    result = CliRunner().invoke(main, ["changes", str(spec), "-o", str(out),
                                       "--work-order", str(order)])
    assert result.exit_code == 0, result.output
    with order.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return sum(row["action"] == "pull" and row["network"] == "storage" for row in rows), \
        first.output


def test_a_storage_fabric_planned_as_its_warning_says_moves_no_cable_when_a_unit_is_added(
        tmp_path: Path) -> None:
    """The issue's case: three scalable units grown to four re-spread the storage fabric's
    leaf-spine uplinks over twice the spines (220 cables pulled and laid again on the
    InfiniBand storage fabric the issue measured, 223 on the example's Ethernet one), with no
    word. Now the lock keeps each leaf's cables up (links lines) where the new spread still
    has them: 14 leaves had 2 cables to each of 8 spines and now have 1 to each of 16, so
    the 112 second cables move and no other (tests/test_lock_links.py). The render of three
    warns (FABRIC-GROWTH at fabric.storage), and its hint, followed, sizes the spines for
    the final cluster: the fourth unit pulls none."""
    pulled, said = _storage_pulls(tmp_path / "as-is", None)
    assert pulled == 112
    warning = next(line for line in said.splitlines()
                   if "FABRIC-GROWTH" in line and "storage fabric" in line)
    assert "one more compute scalable unit" in warning
    hint = re.search(r"fabric\.storage\.scalable_unit_nodes: (\d+) and "
                     r"planned_scalable_units: N \(.*?(\d+) or more\)", said)
    assert hint is not None, said
    assert hint.group(1) == "32"
    pulled, said = _storage_pulls(tmp_path / "planned", int(hint.group(2)))
    assert pulled == 0
    assert "storage fabric has no room" not in said
