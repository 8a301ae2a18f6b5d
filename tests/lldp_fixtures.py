"""The RoCE sample the LLDP tests judge: examples/spectrum-x-roce.yaml made small (2 compute
NICs, so 2 rails and 2 leaves, and 4 nodes in 2 racks; 1 spine), and the real lldpd tables
of it saved under tests/data/lldp/ (its README says how they were made)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

SAMPLE = (
    ("{role: compute, model: cx7-400gbe, count: 8}",
     "{role: compute, model: cx7-400gbe, count: 2}"),
    ('count: 32, hostname: "gpu-##", racks: "r[01-08]", per_rack: 4',
     'count: 4, hostname: "gpu-##", racks: "r[01-02]", per_rack: 2'),
    ('{names: "r[01-08]"', '{names: "r[01-02]"'),
)
DATA = ROOT / "tests" / "data" / "lldp"


def sample_spec(folder: Path) -> Path:
    """The RoCE example with SAMPLE's changes (each must apply once), written into folder."""
    text = (ROOT / "examples" / "spectrum-x-roce.yaml").read_text()
    for old, new in SAMPLE:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = folder / "roce-sample.yaml"
    path.write_text(text)
    return path


def saved_tables(folder: Path) -> Path:
    """A copy of the saved real tables (lldpcli's -f json, one per device) in folder/tables."""
    out = folder / "tables"
    out.mkdir()
    for path in sorted(DATA.glob("*.lldp.json")):
        (out / path.name).write_text(path.read_text())
    return out


def entries(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(local interface, record) of a `-f json` table, as lldpcli gives them."""
    found = document["lldp"].get("interface", [])
    items = [found] if isinstance(found, dict) else found
    return [kv for item in items for kv in item.items()]


def edit(path: Path, keep: Any = None, change: Any = None) -> None:
    """Rewrite a table: drop the records keep(interface, record) is false for, and apply
    change(interface, record) to the rest."""
    document = json.loads(path.read_text())
    kept = [{name: record} for name, record in entries(document)
            if keep is None or keep(name, record)]
    for item in kept:
        for name, record in item.items():
            if change is not None:
                change(name, record)
    document["lldp"]["interface"] = kept
    path.write_text(json.dumps(document, indent=2) + "\n")
