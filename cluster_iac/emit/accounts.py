"""slurm/accounting.sh: the QOS, accounts and users as idempotent `sacctmgr -i` commands.

Every value the spec leaves out is written as sacctmgr's "unset" (-1, '' or 'cluster'), so
running the script again after a change converges slurmdbd on the spec. sacctmgr's load files
would not: a second load leaves the QOS and DefaultQOS of an existing association as they were
(seen with sacctmgr 22.05), hence a script.
"""

from __future__ import annotations

from cluster_iac.emit.base import render_template
from cluster_iac.formats.shell import shell_word
from cluster_iac.plan import Plan
from cluster_iac.plan.durations import slurm_time
from cluster_iac.plan.scheduling import AccountPlan, QosPlan, SchedulingPlan

UNSET = -1  # sacctmgr: "-1" clears a limit


def script(plan: Plan) -> str:
    sched: SchedulingPlan = plan.scheduling
    return render_template(
        "slurm/accounting.sh.j2", cluster=sched.cluster, cluster_word=shell_word(sched.cluster),
        qos_names=" ".join(shell_word(q.name) for q in sched.qos),
        qos=[{"name": shell_word(q.name), "preempt": shell_word(",".join(sorted(q.preempt))),
              "settings": _words(qos_settings(q))} for q in sched.qos],
        root=_words(root_settings(sched)),
        accounts=[{"name": shell_word(a.name), "parent": shell_word(a.parent),
                   "settings": _words(account_settings(a))} for a in sched.accounts],
        users=[" ".join(shell_word(v) for v in (u.name, u.account, u.default_account))
               for u in sched.users])


def _words(settings: list[tuple[str, object]]) -> str:
    return " ".join(shell_word(f"{key}={value}") for key, value in settings)


def _limit(value: int | None) -> int:
    return UNSET if value is None else value


def _tres(**limits: int | None) -> str:
    """'gres/gpu=8,node=-1': every TRES the spec can limit, set or cleared."""
    names = {"gpu": "gres/gpu", "node": "node"}
    return ",".join(f"{names[k]}={_limit(v)}" for k, v in limits.items())


def qos_settings(qos: QosPlan) -> list[tuple[str, object]]:
    """sacctmgr's `modify qos ... set` settings, in sacctmgr(1)'s words (Preempt apart: the
    script sets it only when it changes)."""
    return [
        ("Description", qos.description),
        ("Priority", qos.priority),
        ("PreemptMode", qos.preempt_mode or "cluster"),
        ("GraceTime", qos.grace_time_s or 0),
        ("PreemptExemptTime", slurm_time(qos.preempt_exempt_s)
         if qos.preempt_exempt_s is not None else UNSET),
        ("MaxWall", slurm_time(qos.max_wall_s) if qos.max_wall_s is not None else UNSET),
        ("MaxJobsPerUser", _limit(qos.max_jobs_per_user)),
        ("MaxSubmitJobsPerUser", _limit(qos.max_submit_jobs_per_user)),
        ("MaxTRESPerUser", _tres(gpu=qos.max_gpus_per_user)),
        ("MaxTRESPerJob", _tres(gpu=qos.max_gpus_per_job, node=qos.max_nodes_per_job)),
        ("GrpTRES", _tres(gpu=qos.grp_gpus, node=qos.grp_nodes)),
        ("UsageFactor", f"{qos.usage_factor:g}"),
        ("Flags", ",".join(qos.flags) or UNSET),
    ]


def root_settings(sched: SchedulingPlan) -> list[tuple[str, object]]:
    """The root association: every declared QOS, the cluster's default QOS."""
    settings: list[tuple[str, object]] = []
    if sched.qos:
        settings.append(("QOS", ",".join(q.name for q in sched.qos)))
    if sched.default_qos:
        settings.append(("DefaultQOS", sched.default_qos))
    return settings


def account_settings(account: AccountPlan) -> list[tuple[str, object]]:
    settings: list[tuple[str, object]] = [
        ("Description", account.description),
        ("Organization", account.organization),
        ("Fairshare", account.fairshare),
        ("GrpTRES", _tres(gpu=account.max_gpus)),
    ]
    if account.qos:
        settings.append(("QOS", ",".join(account.qos)))
    if account.default_qos:
        settings.append(("DefaultQOS", account.default_qos))
    return settings
