"""The change plan: what a change of the spec does to the running cluster (cluster-iac changes,
and the summary at the top of render --check)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.base.hostlist import expand
from cluster_iac.cli.main import main
from tests.conftest import ROOT


def _cli(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def seed(tmp_path: Path) -> Path:
    """The SuperPOD example rendered into out/, with its lock."""
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "dgx-h100-superpod-4su.yaml", spec)
    shutil.copy(ROOT / "examples" / "dgx-h100-superpod-4su.lock", tmp_path / "cluster.lock")
    code, _, err = _cli("render", spec, "-o", tmp_path / "out")
    assert code == 0, err
    return spec


def _add_compute_node(spec: Path) -> None:
    """dgx-128: the fourth DGX of the last rack."""
    text = spec.read_text()
    assert "count: 127" in text
    spec.write_text(text.replace("count: 127", "count: 128", 1))


def test_a_node_added_is_its_objects_cables_and_the_release_actions(seed: Path) -> None:
    _add_compute_node(seed)
    out = seed.parent / "out"
    order = seed.parent / "order.csv"
    code, text, err = _cli("changes", seed, "-o", out, "--release", "22.05",
                           "--release", "24.11", "--work-order", order)
    assert code == 0, err
    assert "| nodes | 1 | 0 | 0 |" in text and "| switches | 0 | 0 | 0 |" in text
    assert "| Slurm nodes | 1 | 0 | 0 |" in text
    assert "- nodes added: dgx-128" in text
    head_2205, _, head_2411 = text.partition("## Actions for Slurm 24.11")
    assert "**restart-slurmctld**" in head_2205 and "**restart-slurmd**" in head_2205
    assert "**reconfigure**" in head_2411 and "**restart-slurmctld**" not in head_2411
    # the new node's slurmd never ran: started on both, restarted on neither
    for head in (head_2205, head_2411):
        assert "**start-slurmd**" in head
        assert "systemctl enable --now slurmd  # on dgx-128" in head
    assert "**restart-slurmd**" not in head_2411
    rows = list(csv.DictReader(io.StringIO(order.read_text())))
    assert rows and {r["action"] for r in rows} == {"lay"}
    assert {r["a_device"] for r in rows} == {"dgx-128"}  # its data cables and cords
    assert all(r["a_rack"] and r["b_port"] and r["medium"] and r["length_m"] for r in rows)


def test_the_plan_as_json(seed: Path) -> None:
    _add_compute_node(seed)
    code, text, err = _cli("changes", seed, "-o", seed.parent / "out", "--format", "json")
    assert code == 0, err
    data = json.loads(text)
    assert data["version"] == 1 and not data["first_deployment"]
    assert data["objects"]["nodes"]["added"] == ["dgx-128"]
    kinds = [a["kind"] for a in data["actions"]["22.05"]]
    # the new node's access ports first (its management and BMC switches' interfaces), its
    # names (named reloads the zones), then Slurm
    assert kinds[:2] == ["reload-frr", "reload-dns"]
    assert kinds[2:5] == ["restart-slurmctld", "restart-slurmd", "start-slurmd"]
    slurmd = {a["kind"]: a["hosts"] for a in data["actions"]["22.05"]}
    assert slurmd["start-slurmd"] == "dgx-128"
    restarted = expand(slurmd["restart-slurmd"])
    assert "dgx-127" in restarted and "dgx-128" not in restarted


def test_a_first_deployment_is_the_bring_up_order(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / "examples" / "seed-64gpu-h100.yaml", spec)
    code, text, err = _cli("changes", spec, "-o", tmp_path / "out", "--release", "26.05")
    assert code == 0, err
    assert text.startswith("# Change plan: a first deployment")
    kinds = [line.split("**")[1] for line in text.splitlines() if line[:1].isdigit()]
    # the QOS before slurmctld: 26.05's slurmctld refuses AllowQos naming unknown QOS
    assert kinds.index("accounting") < kinds.index("restart-slurmctld") or \
        "sacctmgr -i add qos" in text.split("restart-slurmctld")[0]


def test_render_check_summarises_the_change_above_the_diff(seed: Path) -> None:
    _add_compute_node(seed)
    code, text, _ = _cli("render", seed, "-o", seed.parent / "out", "--check")
    assert code == 1
    assert text.startswith("# Change plan")
    assert "| nodes | 1 | 0 | 0 |" in text and "## Actions for Slurm" in text
    assert text.index("# Change plan") < text.index("--- a/")


def test_a_lustre_target_rewrite_is_refused_unless_the_file_system_is_new(seed: Path) -> None:
    text = seed.read_text()
    assert "fsname: lustre1" in text
    seed.write_text(text.replace("fsname: lustre1", "fsname: lustre2", 1))
    code, _, err = _cli("changes", seed, "-o", seed.parent / "out")
    assert code == 1 and "error[CHANGE-LUSTRE-REWRITE]" in err
    code, _, err = _cli("changes", seed, "-o", seed.parent / "out", "--lustre-new")
    assert code == 0, err


def test_base_reads_the_committed_tree_and_lock(seed: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """--base GITREF starts from what is committed there: the same plan as from the disk
    before the change was rendered."""
    folder = seed.parent
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=folder, check=True, env=env)
    _add_compute_node(seed)
    monkeypatch.chdir(folder)
    on_disk = _cli("changes", "cluster.yaml", "-o", "out")
    assert _cli("render", "cluster.yaml", "-o", "out")[0] == 0  # the tree moves on
    from_git = _cli("changes", "cluster.yaml", "-o", "out", "--base", "HEAD")
    assert from_git[0] == 0 and from_git[1] == on_disk[1]
    assert _cli("changes", "cluster.yaml", "-o", "out")[1].count("| 0 | 0 | 0 |") == 9
    bad = _cli("changes", "cluster.yaml", "-o", "out", "--base", "no-such-ref")
    assert bad[0] == 2 and "is not a commit" in bad[2]
