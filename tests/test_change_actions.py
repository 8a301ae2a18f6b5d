"""The change-action table (catalog/slurm_actions.py) and actions() (change/actions.py) without
daemons: what each kind of change plans, per release. tests/real/test_change_actions_real.py
and test_first_deployment_real.py run the plans on real Slurm 22.05, 24.11 and 26.05."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cluster_iac.catalog.slurm_actions import ENTRIES, KINDS, entry, readme_table, subjects
from cluster_iac.catalog.slurm_releases import SLURM_RELEASES, parse_version
from cluster_iac.change.actions import actions
from tests.conftest import ROOT, example_build

SEED = "seed-64gpu-h100"
RELEASES = list(SLURM_RELEASES)


def _seed() -> dict[str, str]:
    return dict(example_build(SEED).files)


def _edit(path: str, old: str, new: str) -> dict[str, str]:
    files = _seed()
    assert old in files[path], old
    files[path] = files[path].replace(old, new)
    return files


def _kinds(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.kind for a in plan]


# --- the table -------------------------------------------------------------------------------


def test_every_entry_cites_a_source_and_a_known_release_and_kind() -> None:
    for e in ENTRIES:
        assert e.since in SLURM_RELEASES, e.subject
        assert e.source.strip(), e.subject
        assert all(kind in KINDS for kind, _ in e.needs), e.subject


def test_every_subject_has_an_answer_on_every_release() -> None:
    for subject in subjects():
        for release in RELEASES:
            assert entry(subject, release).subject == subject


def test_entries_of_a_subject_are_in_release_order_without_repeats() -> None:
    for subject in subjects():
        since = [parse_version(e.since) for e in ENTRIES if e.subject == subject]
        assert since == sorted(set(since)), subject
        assert since[0] == parse_version(RELEASES[0]), subject  # every release has an answer


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_backing_test_exists() -> None:
    for e in ENTRIES:
        if e.tested is not None:
            path, _, name = e.tested.partition("::")
            assert name in _test_functions(ROOT / path), e.tested


def test_unknown_release_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown Slurm release"):
        actions(_seed(), _seed(), "21.08")


def test_readme_table_is_the_table() -> None:
    page = (ROOT / "docs" / "slurm-releases.md").read_text()  # the README's table, moved
    section = page.split("## Change actions by Slurm release", 1)[1].split("\n## ", 1)[0]
    table = "".join(line + "\n" for line in section.splitlines() if line.startswith("|"))
    assert table == readme_table()


# --- actions() -------------------------------------------------------------------------------


def test_no_change_plans_nothing() -> None:
    assert actions(_seed(), _seed(), "24.11") == []


@pytest.mark.parametrize("release", RELEASES)
def test_a_health_check_change_needs_nothing(release: str) -> None:
    files = _edit("slurm/healthcheck/h100-hdr.sh", "set -", "# changed\nset -")
    plan = actions(_seed(), files, release)
    assert _kinds(plan) == ["none"]
    assert plan[0].causes == ("slurm/healthcheck/h100-hdr.sh",)


@pytest.mark.parametrize("release", RELEASES)
def test_an_nccl_change_needs_new_jobs_only(release: str) -> None:
    path = next(p for p in _seed() if p.startswith("nccl/") and p.endswith(".env"))
    files = _seed()
    files[path] += "NCCL_DEBUG=INFO\n"
    assert _kinds(actions(_seed(), files, release)) == ["new-jobs"]


def test_files_no_daemon_reads_need_nothing() -> None:
    files = _seed()
    for path in files:
        if (path.split("/")[0] in ("netbox", "cabling", "facility", "ansible", "terraform", "mig")
                or path.startswith(("monitoring/targets/", "lustre/clients/"))
                or path in ("report.md", "lustre/setstripe.sh", "lustre/layouts.json")):
            files[path] += "\n"
    assert _kinds(actions(_seed(), files, "22.05")) == ["none"]


@pytest.mark.parametrize(("path", "kind"), [
    ("lustre/lnet/oss.yaml", "restart-lnet"),
    ("opensm/compute/partitions.conf", "restart-opensm"),
    ("opensm/compute/opensm.conf", "restart-opensm"),
    ("monitoring/rules/gpu.yml", "reload-prometheus"),
    ("monitoring/prometheus.yml", "reload-prometheus"),
    ("monitoring/snmp.yml", "restart-snmp-exporter"),
    ("monitoring/dcgm-counters.csv", "restart-dcgm-exporter"),
])
@pytest.mark.parametrize("release", ["22.05", "26.05"])
def test_a_service_file_change_restarts_its_service_on_every_release(
        path: str, kind: str, release: str) -> None:
    """The file is the cause: the playbook restarts the service on the hosts it installs the
    file on (emit/playbook_files.file_hosts)."""
    files = _seed()
    files[path] += "# changed\n"
    plan = actions(_seed(), files, release)
    assert [(a.kind, a.causes) for a in plan] == [(kind, (path,))]


def test_an_imex_change_restarts_nvidia_imex() -> None:
    old = dict(example_build("gb200-nvl72").files)
    new = {**old, "imex/nvl2/nodes_config.cfg": old["imex/nvl2/nodes_config.cfg"] + "# x\n"}
    assert [(a.kind, a.causes) for a in actions(old, new, "24.11")] == [
        ("restart-imex", ("imex/nvl2/nodes_config.cfg",))]


def test_service_changes_run_in_table_order_beside_slurm_actions() -> None:
    """OpenSM before the drain (the fabric first), LNet after it, Prometheus last."""
    files = _edit("slurm/slurm.conf", "SlurmctldPort=", "SlurmctldPort=1")
    for path in ("lustre/lnet/oss.yaml", "opensm/compute/partitions.conf",
                 "monitoring/rules/gpu.yml"):
        files[path] += "# changed\n"
    files["slurm/cgroup.conf"] += "# changed\n"
    kinds = _kinds(actions(_seed(), files, "22.05"))
    assert kinds == ["restart-opensm", "restart-lnet", "restart-slurmctld", "reconfigure",
                     "reload-prometheus"], kinds


def test_a_first_deployment_starts_the_services_of_its_files() -> None:
    """The fabric's subnet manager and LNet first, the exporters and Prometheus after
    slurmd; each action's causes are its files (the playbook finds their hosts)."""
    plan = actions(None, _seed(), "24.11")
    kinds = _kinds(plan)
    assert kinds[:2] == ["restart-opensm", "restart-lnet"]
    assert kinds.index("restart-slurmd") < kinds.index("restart-dcgm-exporter") < kinds.index(
        "restart-snmp-exporter") < kinds.index("reload-prometheus")
    lnet = next(a for a in plan if a.kind == "restart-lnet")
    assert lnet.causes == tuple(sorted(p for p in _seed() if p.startswith("lustre/lnet/")))
    assert not any(a.tested for a in plan if a.kind in ("restart-opensm", "restart-lnet"))


@pytest.mark.parametrize(("release", "kinds"), [
    ("22.05", ["restart-slurmctld", "reconfigure"]),
    ("23.02", ["restart-slurmctld", "reconfigure"]),
    ("23.11", ["reconfigure"]),
    ("26.05", ["reconfigure"]),
])
def test_a_scheduler_key_needs_a_restart_before_23_11(release: str, kinds: list[str]) -> None:
    files = _edit("slurm/slurm.conf", "SchedulerParameters=bf_continue",
                  "SchedulerParameters=bf_continue,bf_max_job_test=500")
    plan = actions(_seed(), files, release)
    assert _kinds(plan) == kinds
    assert "slurm/slurm.conf: SchedulerParameters" in plan[0].causes


@pytest.mark.parametrize("release", RELEASES)
def test_a_listening_port_needs_a_restart_on_every_release(release: str) -> None:
    files = _edit("slurm/slurm.conf", "SlurmdPort=6818", "SlurmdPort=6828")
    plan = actions(_seed(), files, release)
    slurmd = next(a for a in plan if a.kind == "restart-slurmd")
    assert slurmd.hosts == "compute[01-08]"


@pytest.mark.parametrize(("release", "kinds", "restarted"), [
    ("22.05", ["restart-slurmctld", "restart-slurmd", "start-slurmd"], "compute[01-08]"),
    ("24.11", ["reconfigure", "start-slurmd"], None),
])
def test_an_added_node_is_started_and_only_running_ones_restarted(
        release: str, kinds: list[str], restarted: str | None) -> None:
    """compute09's slurmd never ran: it is started (and enabled), not restarted; 22.05 also
    restarts every slurmd that runs."""
    files = _edit("slurm/slurm.conf", "compute[01-08]", "compute[01-09]")
    plan = actions(_seed(), files, release)
    assert _kinds(plan) == kinds
    by_kind = {a.kind: a for a in plan}
    start = by_kind["start-slurmd"]
    assert start.hosts == "compute09"
    assert start.commands == ("systemctl enable --now slurmd  # on compute09",)
    assert start.tested and "slurm/slurm.conf: nodes added: compute09" in start.causes
    assert (by_kind["restart-slurmd"].hosts if "restart-slurmd" in by_kind else None) == restarted


def test_a_new_machine_under_an_old_name_is_started() -> None:
    """A node the caller adds that slurm.conf listed before (a replaced machine) counts as
    added: its slurmd is started, the other restarted nodes' restarted."""
    files = _edit("slurm/slurm.conf", "compute[01-08]", "compute[01-09]")
    plan = actions(_seed(), files, "22.05", nodes_added=["compute03"])
    by_kind = {a.kind: a for a in plan}
    assert by_kind["start-slurmd"].hosts == "compute[03,09]"
    assert by_kind["restart-slurmd"].hosts == "compute[01-02,04-08]"


def test_auth_type_restarts_every_daemon_on_every_release() -> None:
    files = _edit("slurm/slurm.conf", "AuthType=auth/munge", "AuthType=auth/slurm")
    for release in RELEASES:
        plan = actions(_seed(), files, release)
        assert _kinds(plan) == ["restart-slurmctld", "restart-slurmd"], release


def test_a_removed_node_is_drained_and_not_resumed() -> None:
    files = _seed()
    for path in ("slurm/slurm.conf", "slurm/gres.conf", "slurm/topology.conf"):
        files[path] = files[path].replace("compute[01-08]", "compute[01-07]")
    plan = actions(_seed(), files, "24.11")
    assert _kinds(plan) == ["drain", "reconfigure"]
    assert plan[0].hosts == "compute08"


def test_gres_changes_restart_the_nodes_they_name_before_23_11() -> None:
    files = _edit("slurm/gres.conf", "NodeName=compute[01-08] Name=gpu Type=h100_80gb_hbm3 "
                  "File=/dev/nvidia[0-3] Cores=0-63", "NodeName=compute[01-08] Name=gpu "
                  "Type=h100_80gb_hbm3 File=/dev/nvidia[0-3] Cores=0-31")
    plan = actions(_seed(), files, "22.05")
    assert _kinds(plan) == ["restart-slurmctld", "restart-slurmd"]
    assert plan[1].hosts == "compute[01-08]"
    assert _kinds(actions(_seed(), files, "23.11")) == ["reconfigure"]


def test_hardware_changes_drain_restart_and_resume_the_nodes() -> None:
    plan = actions(_seed(), _seed(), "24.11", nodes_changed=["compute03", "not-a-slurm-node"])
    assert _kinds(plan) == ["drain", "restart-slurmd", "resume"]
    assert {a.hosts for a in plan} == {"compute03"}
    assert plan[0].commands == ("scontrol update nodename=compute03 state=DRAIN "
                                "reason=cluster-iac-change",)


@pytest.mark.parametrize("option", ["--fsname=training", "--index=1 ", "--mgsnode=10.10.0.11@o2ib"])
def test_a_lustre_target_rewrite_is_refused_unless_the_file_system_is_new(option: str) -> None:
    changed = {"--fsname=training": "--fsname=train2", "--index=1 ": "--index=7 ",
               "--mgsnode=10.10.0.11@o2ib": "--mgsnode=10.10.0.12@o2ib"}[option]
    files = _edit("lustre/servers/oss1.sh", option, changed)
    plan = actions(_seed(), files, "24.11")
    assert _kinds(plan) == ["lustre-rewrite"] and plan[0].refused
    assert re.search(r"lustre/servers/oss1\.sh: \d+: ost: ", plan[0].causes[0])
    assert not actions(_seed(), files, "24.11", lustre_new=True)[0].refused


def test_other_lustre_script_lines_need_nothing() -> None:
    files = _edit("lustre/servers/oss1.sh", "--chunk=128", "--chunk=256")
    assert _kinds(actions(_seed(), files, "24.11")) == ["none"]


@pytest.mark.parametrize("release", RELEASES)
def test_first_deployment_creates_the_qos_before_slurmctld(release: str) -> None:
    services = ("restart-opensm", "restart-lnet")  # started first: the fabric and LNet
    plan = [a for a in actions(None, _seed(), release) if a.kind not in services]
    kinds = _kinds(plan)
    assert kinds[:6] == ["restart-database", "restart-slurmdbd", "accounting",
                         "restart-slurmctld", "accounting", "restart-slurmd"]
    assert plan[2].commands == ("sacctmgr -i add qos normal,high,scavenger",)
    assert plan[5].hosts == "compute[01-08]"


def test_a_hand_edited_node_line_is_read_as_written() -> None:
    files = _edit("slurm/slurm.conf", "NodeName=compute[01-08]", "NodeName=compute[01-08")
    plan = actions(_seed(), files, "22.05")
    assert "restart-slurmctld" in _kinds(plan)


def test_a_removed_name_slurm_conf_still_lists_is_drained() -> None:
    plan = actions(_seed(), _seed(), "22.05", nodes_removed=["compute04"])
    assert _kinds(plan) == ["drain", "restart-slurmd", "resume"]
    assert plan[0].hosts == "compute04"
