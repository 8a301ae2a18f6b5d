"""An example's scheduling policy loaded into a private MariaDB, slurmdbd and slurmctld.

Per example: a private MariaDB reads mariadb-slurmdbd.cnf, slurmdbd reads slurmdbd.conf (its
password file written by the generated slurmdbd-storage-pass.sh where the spec names an
environment variable), slurmctld registers the cluster and its gres/gpu TRES, accounting.sh
loads the QOS and accounts with the real sacctmgr, and slurmctld is restarted on the same
files. tests/real/conftest.py makes it the session fixture ``policy``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster_iac.emit import render_all
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data
from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness
from tests.slurm_fixtures import example_data

# example@release: both examples on Debian 12's 22.05; the seed also on trixie's 24.11 (its
# slurmdbd, slurmctld, sacctmgr and slurmd by chroot; MariaDB is the host's, on a socket in the
# temp dir that the root sees at the same path).
EXAMPLES = ["seed-64gpu-h100@22.05", "dgx-h100-superpod-4su@22.05", "seed-64gpu-h100@24.11"]
DB_PASSWORD = "Test-only-pass-1"  # the test MariaDB's own user; never in a spec


def require_consumers(release: str | None = None) -> harness.Runtime:
    """The release's runtime (None: the machine's own). Fail (never skip silently) when a
    consumer is missing, unless a developer opted out (outside CI only)."""
    if os.environ.get(harness.NO_REAL_ENV) == "1" and os.environ.get("CI") != "true":
        pytest.skip(f"{harness.NO_REAL_ENV}=1: real Slurm tests switched off")
    missing = ah.missing_tools()
    host = harness.host_runtime() if not missing else None
    runtime = host
    if release is not None and (host is None or host.name != release):
        runtime = {r.name: r for r in harness.root_runtimes()[0]}.get(release)
    if runtime is None:
        missing.append(f"Slurm {release}")
    elif runtime.root is not None:
        missing += [f"{t} in {runtime.root}" for t in ah.ROOT_TOOLS
                    if not (runtime.root / t).exists()]
    if missing or runtime is None:
        pytest.fail(f"the policy tests need {', '.join(missing)}: .ci/install-deps installs "
                    f"them (or set {harness.NO_REAL_ENV}=1 to opt out)")
    return runtime


@dataclass
class Policy:
    """An example's policy loaded into a running slurmdbd and slurmctld."""

    name: str
    plan: Plan
    rendered: Path  # the rendered slurm directory, as emitted
    box: ah.Sandbox
    cluster: harness.SlurmCluster
    script: subprocess.CompletedProcess[str]
    first_start_errors: list[str]
    restart_errors: list[str]  # slurmctld's on the same files, once the QOS exist

    @property
    def slurm(self):  # type: ignore[no-untyped-def]
        return self.plan.settings.slurm

    def sacctmgr(self, *args: str) -> list[dict[str, str]]:
        """`sacctmgr -P show ...` as one dict per row."""
        out = self.cluster.run("sacctmgr", "--parsable2", "show", *args)
        header, *rows = out.splitlines()
        keys = header.split("|")
        return [dict(zip(keys, row.split("|"), strict=True)) for row in rows]


def running_policy(case: str, tmp: Path) -> Iterator[Policy]:
    """The example's policy (``example@release``) in running daemons of the release, stopped
    afterwards whatever happens."""
    name, _, release = case.partition("@")
    runtime = require_consumers(release)
    plan = compile_data(example_data(name, release))
    rendered = tmp / "slurm"
    for rel, text in render_all(plan).items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
    dbd_port = harness.free_port()
    box = ah.prepare(rendered, tmp / "run", dbd_port=dbd_port, runtime=runtime)
    db = ah.MariaDB(box.work / "db")  # inside the work dir, which a root's chroot sees
    cluster = harness.SlurmCluster(harness.SlurmConf(box.etc, box.etc, box.node_names),
                                   box.work, runtime)
    dbd = None
    try:
        db.start(rendered / "mariadb-slurmdbd.cnf")
        _database_user(db, plan)
        _password_file(box, plan)
        dbd = ah.start_slurmdbd(box, db, dbd_port)
        cluster.start()
        script = accounting_script(box)
        _settled(cluster, plan)
        first = cluster.log_errors("slurmctld")
        cluster.stop()
        log = box.work / "log" / "slurmctld.log"
        log.rename(log.with_name("slurmctld-first-start.log"))
        cluster.start()
        # read now: later tests restart slurmds and reconfigure, which logs on its own
        restart = cluster.log_errors("slurmctld")
        yield Policy(case, plan, rendered, box, cluster, script, first, restart)
    finally:
        cluster.stop()
        if dbd is not None:
            harness._stop(dbd)
        db.stop()


def _settled(cluster: harness.SlurmCluster, plan: Plan) -> None:
    """Wait until slurmctld holds every QOS accounting.sh made, before it is stopped.

    slurmdbd pushes each sacctmgr change to the registered slurmctld on a connection of its
    own. Stopping slurmctld right after the script (the restart below) caught a push in
    flight: slurmctld logged 'Dropped 1 hung communications to shutdown', and on a loaded
    machine, past _stop's SIGTERM wait, slurmdbd or slurmctld logged 'Connection reset by
    peer' and failed the log checks. A readiness race of the harness, not of the files: the
    restart now waits for the pushes (`scontrol show assoc_mgr flags=qos` lists the QOS
    slurmctld has received). A script that failed is reported by its own test, so this
    gives up after WAIT_S instead of raising.
    """
    wanted = {q.name for q in plan.settings.slurm.qos}
    deadline = time.monotonic() + harness.WAIT_S
    while wanted and time.monotonic() < deadline:
        shown = cluster.scontrol("show", "assoc_mgr", "flags=qos", check=False)
        if wanted <= set(re.findall(r"^QOS=([^(\s]+)\(", shown, re.M)):
            return
        time.sleep(0.2)


def _database_user(db: ah.MariaDB, plan: Plan) -> None:
    """What a DBA does once: the StorageUser with a password and rights on StorageLoc."""
    store = plan.scheduling.accounting.storage
    db.sql(f"CREATE USER '{store.user}'@'localhost' IDENTIFIED BY '{DB_PASSWORD}'; "
           f"GRANT ALL ON {store.database}.* TO '{store.user}'@'localhost';")


def _password_file(box: ah.Sandbox, plan: Plan) -> None:
    """The Include'd StoragePass file: written by the generated script from the environment
    variable the spec names (in the sandbox, /etc/slurm is the private etc), else by hand."""
    store = plan.scheduling.accounting.storage
    assert store.password_file.startswith("/etc/slurm/"), "the sandbox binds /etc/slurm"
    if store.password_env:
        env = {**box.env(), store.password_env: DB_PASSWORD}
        result = box.run(["sh", "/etc/slurm/slurmdbd-storage-pass.sh"], env=env)
        assert result.returncode == 0, result.stderr
    else:
        path = box.etc / Path(store.password_file).name
        path.write_text(f"StoragePass={DB_PASSWORD}\n")
        path.chmod(0o600)


def accounting_script(box: ah.Sandbox) -> subprocess.CompletedProcess[str]:
    """The generated script, run as an admin would on the controller (the release's sacctmgr)."""
    return box.run(["sh", "/etc/slurm/accounting.sh"], timeout=300)
