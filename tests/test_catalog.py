"""The built-in catalog is read from a JSON snapshot of its YAML files: the two must agree."""

from __future__ import annotations

from pathlib import Path

from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.snapshot import SNAPSHOT, snapshot_text

CATALOG = Path(__file__).resolve().parent.parent / "cluster_iac" / "catalog"


def test_snapshot_is_the_yaml_files() -> None:
    shipped = (CATALOG / SNAPSHOT).read_text()
    assert shipped == snapshot_text(), (
        "cluster_iac/catalog/builtin.json is stale: run 'python -m cluster_iac.catalog "
        "> cluster_iac/catalog/builtin.json'")


def test_snapshot_holds_every_catalog_file() -> None:
    import json

    names = set(json.loads((CATALOG / SNAPSHOT).read_text()))
    assert names == {p.name for p in CATALOG.glob("*.yaml")}
    assert "dgx-h100" in builtin_catalog().platforms
