"""slurmdbd.conf, the script that writes its password file, and the QOS and accounts script."""

from __future__ import annotations

import re

from cluster_iac.emit import accounts
from cluster_iac.emit.base import render_template
from cluster_iac.emit.slurm_conf import Pair, conf_line
from cluster_iac.formats.shell import shell_word
from cluster_iac.plan import Plan
from cluster_iac.plan.scheduling import AccountingPlan

# slurm.conf's SlurmUser (emit/slurm.py controller_parameters): slurmdbd.conf(5) wants the
# same user for slurmdbd as for every slurmctld that reports to it.
SLURM_USER = "slurm"
# InnoDB settings of SchedMD's accounting guide ("MySQL Configuration": 64 MiB redo log files,
# a 900 s lock wait for the long purge and rollup queries, a large buffer pool); slurmdbd
# checks them at start and logs "Database settings not recommended values" below its floor.
# The buffer pool: 22.05's slurmdbd accepts 1024M, 24.11's logs the error at 1024M and not at
# 4096M (both measured in tests/real/test_slurm_policy_real.py), so 4096M serves every release.
INNODB = {"buffer_pool": "4096M", "log_file": "64M", "lock_wait": 900}
_PATH = re.compile(r"/[A-Za-z0-9._/-]+")


def render(plan: Plan) -> dict[str, str]:
    acct = plan.scheduling.accounting
    if acct is None:
        return {}
    files = {"slurm/slurmdbd.conf": slurmdbd_conf(plan, acct),
             "slurm/mariadb-slurmdbd.cnf": render_template(
                 "slurm/mariadb-slurmdbd.cnf.j2", cluster=plan.cluster.name,
                 storage_host=acct.storage.host, **INNODB),
             "slurm/accounting.sh": accounts.script(plan)}
    if acct.storage.password_env:
        files["slurm/slurmdbd-storage-pass.sh"] = render_template(
            "slurm/slurmdbd-storage-pass.sh.j2", password_file=acct.storage.password_file,
            password_file_word=shell_word(acct.storage.password_file),
            password_env=acct.storage.password_env, slurm_user=SLURM_USER)
    return files


def slurmdbd_conf(plan: Plan, acct: AccountingPlan) -> str:
    store = acct.storage
    daemon: list[Pair] = [
        ("AuthType", "auth/munge"),
        ("DbdHost", acct.dbd_host),
        ("DbdPort", acct.port),
        ("SlurmUser", SLURM_USER),
        ("LogFile", "/var/log/slurm/slurmdbd.log"),
        ("PidFile", "/run/slurmdbd.pid"),
    ]
    storage: list[Pair] = [
        ("StorageType", "accounting_storage/mysql"),
        ("StorageHost", store.host),
        ("StoragePort", store.port),
        ("StorageUser", store.user),
        ("StorageLoc", store.database),
    ]
    if not _PATH.fullmatch(store.password_file):  # the spec's pattern; an Include is one line
        raise ValueError(f"password_file {store.password_file[:40]!r} is not a plain path")
    return render_template(
        "slurm/slurmdbd.conf.j2", cluster=plan.cluster.name,
        daemon=[conf_line([p]) for p in daemon], storage=[conf_line([p]) for p in storage],
        password_file=store.password_file, password_env=store.password_env)
