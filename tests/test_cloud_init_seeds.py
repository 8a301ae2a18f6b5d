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

from cluster_iac.compile import compile_plan
from cluster_iac.emit import cloud_init
from cluster_iac.emit.cloud_init import host_networks, host_row, seed_line
from cluster_iac.load.loader import load_spec_text
from cluster_iac.plan import Plan
from cluster_iac.plan.host_rails import host_rails
from cluster_iac.spec.parse import parse_spec
from tests.benchmarks import bench_scale
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


def _plain_tables(plan: Plan) -> dict[str, str]:
    """Each node type's seed table as json.dumps writes each host's row (seed_line of
    host_row): what the render's tables, laid out from one template per shape, must be."""
    boot, management = plan.boot, plan.addresses["management"]
    assert boot is not None
    networks, rails = host_networks(plan, boot), host_rails(plan)
    tables: dict[str, str] = {}
    for host in boot.hosts:
        if host.hostname in management:
            path = f"cloud-init/seeds/{host.node_type}.jsonl"
            tables[path] = tables.get(path, "") + seed_line(host_row(
                plan, boot, host, management[host.hostname], networks,
                rails.get(host.hostname, ())))
    return tables


@pytest.mark.parametrize("name", [n for n in EXAMPLE_IDS if n != "minimal"])
def test_each_table_is_byte_for_byte_json_dumps_of_each_hosts_row(name: str) -> None:
    built = example_build(name)
    tables = {p: t for p, t in built.files.items() if p.endswith(".jsonl")}
    assert tables == _plain_tables(built.plan)


def test_so_are_the_tables_of_a_roce_cluster_of_4096_gpus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's spec on a routed RoCE fabric: 512 GPU nodes of eight rails each, the
    rows host_line lays out from one template."""
    monkeypatch.setattr(bench_scale, "fabric_choice", "roce")
    plan = compile_plan(parse_spec(load_spec_text(bench_scale.spec_yaml(4096))[0]))
    assert sum(len(r) == 8 for r in host_rails(plan).values()) == 512
    tables = {p: t for p, t in cloud_init.render(plan).items() if p.endswith(".jsonl")}
    assert tables == _plain_tables(plan)
    assert sum(t.count("\n") for t in tables.values()) > 512


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
