"""An example's scheduling policy loaded into a private MariaDB, slurmdbd and slurmctld.

Per example: a private MariaDB reads mariadb-slurmdbd.cnf, slurmdbd reads slurmdbd.conf (its
password file written by the generated slurmdbd-storage-pass.sh where the spec names an
environment variable), slurmctld registers the cluster and its gres/gpu TRES, accounting.sh
loads the QOS and accounts with the real sacctmgr, and slurmctld is restarted on the same
files. tests/real/conftest.py makes it the session fixture ``policy``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster_iac.plan import Plan
from tests.conftest import example_build
from tests.real import accounting_harness as ah
from tests.real import slurm_harness as harness

EXAMPLES = ["seed-64gpu-h100", "dgx-h100-superpod-4su"]
DB_PASSWORD = "Test-only-pass-1"  # the test MariaDB's own user; never in a spec


def require_consumers() -> None:
    """Fail (never skip silently) when a consumer is missing, unless a developer opted out."""
    if os.environ.get(harness.NO_REAL_ENV) == "1":
        pytest.skip(f"{harness.NO_REAL_ENV}=1: real Slurm tests switched off")
    missing = ah.missing_tools()
    if missing:
        pytest.fail(f"the policy tests need {', '.join(missing)}: .ci/install-deps installs "
                    f"them (or set {harness.NO_REAL_ENV}=1 to opt out)")


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

    @property
    def slurm(self):  # type: ignore[no-untyped-def]
        return self.plan.settings.slurm

    def sacctmgr(self, *args: str) -> list[dict[str, str]]:
        """`sacctmgr -P show ...` as one dict per row."""
        out = self.cluster.run("sacctmgr", "--parsable2", "show", *args)
        header, *rows = out.splitlines()
        keys = header.split("|")
        return [dict(zip(keys, row.split("|"), strict=True)) for row in rows]


def running_policy(name: str, tmp: Path) -> Iterator[Policy]:
    """The example's policy in running daemons, stopped afterwards whatever happens."""
    require_consumers()
    build = example_build(name)
    rendered = tmp / "slurm"
    for rel, text in build.files.items():
        if rel.startswith("slurm/"):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
    dbd_port = harness.free_port()
    runtime = harness.host_runtime()
    assert runtime is not None  # require_consumers() found the tools
    box = ah.prepare(rendered, tmp / "run", dbd_port=dbd_port, runtime=runtime)
    db = ah.MariaDB(tmp / "db")
    cluster = harness.SlurmCluster(harness.SlurmConf(box.etc, box.etc, box.node_names),
                                   box.work, runtime)
    dbd = None
    try:
        (tmp / "db").mkdir()
        db.start(rendered / "mariadb-slurmdbd.cnf")
        _database_user(db, build.plan)
        _password_file(box, build.plan)
        dbd = ah.start_slurmdbd(box, db, dbd_port)
        cluster.start()
        script = accounting_script(box)
        first = cluster.log_errors("slurmctld")
        cluster.stop()
        log = box.work / "log" / "slurmctld.log"
        log.rename(log.with_name("slurmctld-first-start.log"))
        cluster.start()
        yield Policy(name, build.plan, rendered, box, cluster, script, first)
    finally:
        cluster.stop()
        if dbd is not None:
            harness._stop(dbd)
        db.stop()


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
    return subprocess.run(["sh", str(box.etc / "accounting.sh")], capture_output=True,
                          text=True, env=box.env(), timeout=300)
