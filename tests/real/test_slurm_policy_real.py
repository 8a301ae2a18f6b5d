"""Real consumers of the scheduling policy: MariaDB, slurmdbd, sacctmgr and slurmctld read the
examples' rendered files (tests/real/policy_cluster.py starts them). What `sacctmgr show
qos/assoc` and `scontrol show config/partition` print is compared with the spec, read here on
its own terms (not through the emitters).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from cluster_iac.spec.scheduling import Account
from tests.real import accounting_harness as ah
from tests.real.policy_cluster import Policy, accounting_script

pytestmark = pytest.mark.real

# slurmctld's first registration on a new cluster: slurmdbd calls slurmctld back before
# slurmctld listens on its port (every first start does this, sandbox or not)
DBD_NOISE = r"error: update cluster: Connection refused to \S+ at 127\.0\.0\.1"
# Only for a Debian root's release (24.11). Its MariaDB client library asks for TLS first,
# which the test's MariaDB (Debian 12's 10.11, no certificate) cannot give, and slurmdbd
# connects at its retry 5 s later (trixie's own MariaDB 11.8 makes a certificate itself).
# Its slurmdbd misses a new cluster's root association when slurmctld adds the cluster.
ROOT_DBD_FIRST = (r"mysql_real_connect failed: 2026 TLS/SSL error: SSL is required, but the "
                  r"server does not support it|The database must be up when starting the MYSQL "
                  r"plugin|We can't find assoc 1 on cluster")
# And it logs this at every change of the root account's associations, whatever the change:
# a bare `sacctmgr -i modify account where name=root cluster=C set DefaultQOS=normal` or
# `modify user where name=root set defaultaccount=root` logs it too (tried here); the change
# is made (sacctmgr show assoc equals the spec below).
ROOT_DBD_MODIFY = r"SLURMDB_MODIFY_ASSOC: assoc 2\(\(null\), \(null\), \(null\)\) not found"
# a fresh StateSaveLocation holds no federation state yet
CTLD_NOISE = r"No fed_mgr state file .* to recover"
QOS_FIELDS = ("Name,Priority,Preempt,PreemptMode,GraceTime,MaxWall,MaxJobsPU,MaxSubmitPU,"
              "MaxTRESPU,MaxTRES,GrpTRES,UsageFactor,Flags,Description")
ASSOC_FIELDS = "Account,User,ParentName,Share,QOS,DefaultQOS,GrpTRES"


# --- the daemons start on the generated files ------------------------------------------------


def test_slurmdbd_runs_on_the_generated_files_without_errors(policy: Policy) -> None:
    log = policy.box.work / "log" / "slurmdbd.log"
    assert "slurmdbd version" in log.read_text()
    noise = [DBD_NOISE] + ([ROOT_DBD_FIRST, ROOT_DBD_MODIFY]
                           if policy.box.runtime.root is not None else [])
    assert ah.log_errors(log, *noise) == []


def test_slurmctld_starts_on_the_generated_files_without_errors(policy: Policy) -> None:
    """The restart on the same files logs no error. The first start, before accounting.sh
    has created the QOS, may only say that a partition's AllowQos names QOS slurmdbd does
    not know yet: Slurm then ignores them, until they exist (deployment order, README)."""
    errors = [e for e in policy.restart_errors if not re.search(CTLD_NOISE, e)]
    assert errors == []
    qos = "|".join(q.name for q in policy.slurm.qos) or "-"
    explained = re.compile(rf"Ignoring invalid Allow/DenyQOS value(\(s\))?:? ({qos})\b|"
                           rf"We have no QOS on the system|{CTLD_NOISE}")
    assert [e for e in policy.first_start_errors if not explained.search(e)] == []


def test_accounting_script_ran_cleanly(policy: Policy) -> None:
    assert policy.script.returncode == 0, policy.script.stdout + policy.script.stderr
    assert policy.script.stderr == ""


# --- slurmctld read what the spec meant ----------------------------------------------------


def _config(policy: Policy) -> dict[str, str]:
    out = policy.cluster.scontrol("show", "config")
    pairs = (line.split("=", 1) for line in out.splitlines() if " = " in line)
    return {k.strip(): v.strip() for k, v in pairs}


def _seconds(duration: str) -> int:
    """'7d', '1h', '5m', '90s' in seconds: the test's own reading of the spec's text."""
    match = re.fullmatch(r"(\d+)([smhd])", duration)
    assert match, f"the examples write durations as <n><unit>: {duration}"
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def _clock(duration: str) -> str:
    """'7d' -> '7-00:00:00', '1h' -> '01:00:00', '5m' -> '00:05:00' (scontrol's print form)."""
    days, rest = divmod(_seconds(duration), 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def test_slurmctld_reads_priority_and_health_keys_in_the_units_meant(policy: Policy) -> None:
    config, slurm = _config(policy), policy.slurm
    prio, weights = slurm.priority, slurm.priority.weights
    assert config["PriorityType"] == "priority/multifactor"
    assert config["PriorityDecayHalfLife"] == _clock(prio.decay_half_life)
    assert config["PriorityCalcPeriod"] == _clock(prio.calc_period)
    assert config["PriorityMaxAge"] == _clock(prio.max_age)
    assert config["PriorityUsageResetPeriod"] == prio.usage_reset.upper()
    for key, weight in (("Age", weights.age), ("FairShare", weights.fairshare),
                        ("JobSize", weights.job_size), ("Partition", weights.partition),
                        ("QOS", weights.qos), ("Assoc", weights.assoc)):
        assert config[f"PriorityWeight{key}"] == str(weight), key
    assert config["PreemptType"] == "preempt/qos"
    assert config["PreemptMode"] == slurm.preemption.mode.upper()
    assert config["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert "gres/gpu" in config["AccountingStorageTRES"].split(",")
    assert config["AccountingStorageEnforce"] == ",".join(slurm.accounting.enforce)
    check = slurm.health_check
    assert config["HealthCheckInterval"] == f"{_seconds(check.interval)} sec"
    assert config["HealthCheckProgram"] == check.program
    assert config["HealthCheckNodeState"] == "ANY"
    # 24.11 lists Epilog as an array (several programs may run): 'Epilog[0] = ...'
    assert config.get("Epilog", config.get("Epilog[0]")) == check.program
    assert config["ReturnToService"] == str(slurm.return_to_service)


def test_partitions_show_the_allowed_qos_and_per_gpu_defaults(policy: Policy) -> None:
    nodes = {r["NodeName"]: r for r in policy.cluster.records("nodes")}
    for spec_part, part in zip(policy.slurm.partitions, policy.plan.partitions, strict=True):
        shown = policy.cluster.records("partitions")
        record = next(r for r in shown if r["PartitionName"] == part.name)
        allowed = spec_part.allow_qos or [q.name for q in policy.slurm.qos]
        if spec_part.allow_qos:
            assert sorted(record["AllowQos"].split(",")) == sorted(allowed)
        else:
            assert record["AllowQos"] == "ALL"
        # a job asking for every GPU of a node and nothing else fits on the node
        defaults = dict(d.split("=") for d in record["JobDefaults"].split(","))
        per_gpu_mem = int(defaults["DefMemPerGPU"])
        per_gpu_cpu = int(defaults["DefCpuPerGPU"])
        if spec_part.def_mem_per_gpu_gib:
            assert per_gpu_mem == int(spec_part.def_mem_per_gpu_gib * 1024)
        for host in part.nodes:
            gpus = int(nodes[host]["Gres"].split(":")[2].split("(")[0])
            assert per_gpu_mem * gpus <= int(nodes[host]["RealMemory"]), host
            assert per_gpu_cpu * gpus <= int(nodes[host]["CPUTot"]), host


# --- sacctmgr shows the spec ----------------------------------------------------------------


def _tres(**limits: int | None) -> str:
    """sacctmgr's TRES list: 'node=N' before 'gres/gpu=M' (TRES id order), limits only."""
    names = (("node", "node"), ("gpu", "gres/gpu"))
    return ",".join(f"{shown}={limits[key]}" for key, shown in names
                    if limits.get(key) is not None)


def _expected_qos(qos) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        "Name": qos.name, "Priority": str(qos.priority), "Preempt": ",".join(qos.preempt),
        "PreemptMode": qos.preempt_mode or "cluster",
        "GraceTime": _clock(qos.grace_time) if qos.grace_time else "00:00:00",
        "MaxWall": _clock(qos.max_wall) if qos.max_wall else "",
        "MaxJobsPU": str(qos.max_jobs_per_user or ""),
        "MaxSubmitPU": str(qos.max_submit_jobs_per_user or ""),
        "MaxTRESPU": _tres(gpu=qos.max_gpus_per_user),
        "MaxTRES": _tres(gpu=qos.max_gpus_per_job, node=qos.max_nodes_per_job),
        "GrpTRES": _tres(gpu=qos.grp_gpus, node=qos.grp_nodes),
        "UsageFactor": f"{qos.usage_factor:.6f}", "Flags": ",".join(qos.flags),
        "Descr": (qos.description or qos.name).lower(),
    }


def test_sacctmgr_show_qos_equals_the_spec(policy: Policy) -> None:
    shown = {row["Name"]: row for row in policy.sacctmgr("qos", f"format={QOS_FIELDS}")}
    expected = {q.name: _expected_qos(q) for q in policy.slurm.qos}
    assert sorted(shown) == sorted(expected)  # 'normal', which slurmdbd creates, is declared
    for name, row in expected.items():
        assert shown[name] == row, name


def _walk(accounts: list[Account], parent: str) -> Iterator[tuple[Account, str]]:
    for account in accounts:
        yield account, parent
        yield from _walk(account.accounts, account.name)


def _expected_assoc(policy: Policy) -> set[tuple[str, ...]]:
    """(Account, User, ParentName, Share, QOS, DefaultQOS, GrpTRES) rows: QOS and default QOS
    inherited down the tree, every QOS allowed at the root."""
    slurm = policy.slurm
    names = sorted(q.name for q in slurm.qos)
    root_default = slurm.default_qos or "normal"
    qos, default = {"root": names}, {"root": root_default}
    rows = {("root", "", "", "1", ",".join(names), root_default, ""),
            ("root", "root", "", "1", ",".join(names), root_default, "")}
    for account, parent in _walk(slurm.accounts, "root"):
        qos[account.name] = sorted(account.qos) if account.qos else qos[parent]
        default[account.name] = account.default_qos or default[parent]
        allowed = ",".join(qos[account.name])
        rows.add((account.name, "", parent, str(account.fairshare), allowed,
                  default[account.name], _tres(gpu=account.max_gpus)))
        rows |= {(account.name, user, "", "1", allowed, default[account.name], "")
                 for user in account.users}
    return rows


def _shown_assoc(policy: Policy) -> set[tuple[str, ...]]:
    rows = policy.sacctmgr("association", "where", f"cluster={policy.plan.cluster.name}",
                           f"format={ASSOC_FIELDS}")
    return {tuple(r[k] for k in ("Account", "User", "ParentName", "Share", "QOS", "Def QOS",
                                 "GrpTRES")) for r in rows}


def test_sacctmgr_show_assoc_equals_the_spec(policy: Policy) -> None:
    assert _shown_assoc(policy) == _expected_assoc(policy)


def test_users_default_account_is_the_first_listing_them(policy: Policy) -> None:
    first: dict[str, str] = {}
    for account, _ in _walk(policy.slurm.accounts, "root"):
        for user in account.users:
            first.setdefault(user, account.name)
    shown = {r["User"]: r["Def Acct"] for r in policy.sacctmgr(
        "user", "format=User,DefaultAccount") if r["User"] in first}
    assert shown == first


def test_accounting_script_converges_on_the_spec_again(policy: Policy) -> None:
    """Run it again after someone changed slurmdbd by hand: it is idempotent and puts the
    spec's values back (a limit changed, a preemption removed, an account moved)."""
    before_qos = policy.sacctmgr("qos", f"format={QOS_FIELDS}")
    before_assoc = _shown_assoc(policy)
    drifted = policy.slurm.qos[-1].name
    policy.cluster.run("sacctmgr", "-i", "modify", "qos", "where", f"name={drifted}", "set",
                       "MaxWall=1", "Priority=7", "Preempt=", check=False)
    nested = [(a, p) for a, p in _walk(policy.slurm.accounts, "root") if p != "root"]
    if nested:
        policy.cluster.run("sacctmgr", "-i", "modify", "account", "where",
                           f"name={nested[0][0].name}",
                           f"cluster={policy.plan.cluster.name}", "set", "parent=root",
                           "fairshare=999", check=False)
    assert policy.sacctmgr("qos", f"format={QOS_FIELDS}") != before_qos
    log = policy.box.work / "log" / "slurmdbd.log"
    noise = [ROOT_DBD_MODIFY] if policy.box.runtime.root is not None else []
    errors_before = ah.log_errors(log, *noise)
    again = accounting_script(policy.box)
    assert again.returncode == 0, again.stdout + again.stderr
    assert ah.log_errors(log, *noise) == errors_before  # the first run's lines do not recur
    assert policy.sacctmgr("qos", f"format={QOS_FIELDS}") == before_qos
    assert _shown_assoc(policy) == before_assoc
