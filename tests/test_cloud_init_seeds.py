"""The boot server's cloud-init seeds (emit/cloud_init.py): a render writes each node type's
user-data and one table of its hosts (JSON Lines), not three files per host; the script the
playbook runs on the boot server (cloud-init/cluster-iac-seeds.py) expands them into each
host's NoCloud seed folder, writes only what changed and removes the folder of a host the
tables no longer name. tests/real/test_boot_real.py has cloud-init read what it serves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_IDS, example_build

SEED = "seed-64gpu-h100"
SCRIPT = "cloud-init/cluster-iac-seeds.py"


def _tree(name: str, into: Path) -> Path:
    """The example's cloud-init files written under ``into``; the tables' folder."""
    for path, text in example_build(name).files.items():
        if path.startswith("cloud-init/"):
            (into / path).parent.mkdir(parents=True, exist_ok=True)
            (into / path).write_text(text)
    return into / "cloud-init" / "seeds"


def _expand(tree: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(tree / SCRIPT), str(tree / "cloud-init/seeds"),
                           str(root)], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("name", [n for n in EXAMPLE_IDS if n != "minimal"])  # no networks
def test_a_render_writes_one_table_per_node_type_naming_every_booted_host(name: str) -> None:
    built = example_build(name)
    boot, management = built.plan.boot, built.plan.addresses["management"]
    paths = sorted(p for p in built.files if p.startswith("cloud-init/"))
    types = sorted({h.node_type for h in boot.hosts})
    assert len(paths) <= 2 * len(types) + 1, paths
    rows = [json.loads(line) for path in paths if path.endswith(".jsonl")
            for line in built.files[path].splitlines()]
    assert sorted((r["hostname"], r["address"]) for r in rows) == sorted(
        (h.hostname, management[h.hostname]) for h in boot.hosts if h.hostname in management)
    for row in rows:
        assert row["meta-data"]["local-hostname"] == f"{row['hostname']}.{boot.domain}"
        assert f"{row['address']}/" in json.dumps(row["network-config"])


def test_the_script_expands_the_tables_into_each_hosts_seed(tmp_path: Path) -> None:
    tables = _tree(SEED, tmp_path / "tree")
    root = tmp_path / "www"
    done = _expand(tmp_path / "tree", root)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for table in sorted(tables.glob("*.jsonl"))
            for line in table.read_text().splitlines()]
    assert sorted(p.name for p in root.iterdir()) == sorted(r["address"] for r in rows)
    wrote = f"{len(rows)} hosts: wrote {3 * len(rows)} files, removed 0 folders"
    assert done.stdout.strip() == wrote
    host = rows[0]
    seed = root / host["address"]
    assert json.loads((seed / "meta-data").read_text()) == host["meta-data"]
    assert json.loads((seed / "network-config").read_text()) == host["network-config"]
    node_type = next(t.stem for t in tables.glob("*.jsonl") if host["hostname"] in t.read_text())
    assert (seed / "user-data").read_text() == (tables / f"{node_type}.user-data").read_text()
    assert (seed / "user-data").read_text().startswith("#cloud-config\n")
    # again: nothing to write
    assert _expand(tmp_path / "tree", root).stdout.strip().endswith(
        "wrote 0 files, removed 0 folders")


def test_a_host_no_table_names_loses_its_seed_and_nothing_else(tmp_path: Path) -> None:
    tables = _tree(SEED, tmp_path / "tree")
    root = tmp_path / "www"
    assert _expand(tmp_path / "tree", root).returncode == 0
    (root / "site-notes").mkdir()  # the site's own folder, not a seed: kept
    table = tables / "oss.jsonl"
    first, *rest = table.read_text().splitlines(keepends=True)
    table.write_text("".join(rest))
    done = _expand(tmp_path / "tree", root)
    assert done.stdout.strip().endswith("wrote 0 files, removed 1 folders"), done.stdout
    assert not (root / json.loads(first)["address"]).exists()
    assert (root / "site-notes").is_dir()


def test_an_address_that_is_a_path_is_refused(tmp_path: Path) -> None:
    tables = _tree(SEED, tmp_path / "tree")
    line = json.loads((tables / "head.jsonl").read_text().splitlines()[0])
    (tables / "head.jsonl").write_text(json.dumps({**line, "address": "../../etc"}) + "\n")
    done = _expand(tmp_path / "tree", tmp_path / "www" / "hosts")
    assert done.returncode == 1 and "head.jsonl:1: not a host" in done.stderr, done.stderr
    assert "'../../etc'" in done.stderr
    assert not (tmp_path / "etc").exists() and not (tmp_path / "www").exists()
