"""The built-in catalog is its YAML files; builtin.json, their parsed copy, is read only while
it is current, and a release ships it current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster_iac.catalog import builtin_catalog, snapshot
from cluster_iac.catalog.snapshot import SNAPSHOT, snapshot_text

CATALOG = Path(__file__).resolve().parent.parent / "cluster_iac" / "catalog"


def test_snapshot_is_the_yaml_files() -> None:
    shipped = (CATALOG / SNAPSHOT).read_text()
    assert shipped == snapshot_text(), (
        "cluster_iac/catalog/builtin.json is stale: run 'python -m cluster_iac.catalog "
        "> cluster_iac/catalog/builtin.json'")


def test_snapshot_holds_every_catalog_file() -> None:
    names = set(json.loads((CATALOG / SNAPSHOT).read_text())["files"])
    assert names == {p.name for p in CATALOG.glob("*.yaml")}
    assert "dgx-h100" in builtin_catalog().platforms


def test_a_stale_copy_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalog file edited since the copy was made: its YAML is what the tool reads, so an
    added platform works before anyone makes the copy again."""
    snapshot._snapshot.cache_clear()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(snapshot, "yaml_digest", lambda: "edited since")
            patched.setattr(snapshot, "parsed_yaml", lambda: {"gpus.yaml": {"edited": True}})
            assert snapshot.builtin_file("gpus.yaml") == {"edited": True}
    finally:
        snapshot._snapshot.cache_clear()
    assert "edited" not in snapshot.builtin_file("gpus.yaml")  # the current copy again
