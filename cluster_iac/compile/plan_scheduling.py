"""Scheduling policy: accounting, priority, preemption, QOS, accounts and partition defaults.

Refuses what Slurm would refuse or silently misread: a QOS or account named but not declared,
a preemption cycle (sacctmgr refuses one), a default QOS its account may not use, a duration
without a unit, policy that lives in slurmdbd without slurmdbd.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.compile.check_references import duplicates, unknown
from cluster_iac.plan import Plan
from cluster_iac.plan.durations import DurationError, seconds
from cluster_iac.plan.scheduling import (
    AccountingPlan,
    AccountPlan,
    PriorityPlan,
    QosPlan,
    SchedulingPlan,
    StoragePlan,
    UserPlan,
)
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.scheduling import Account, Qos

SLURM: SpecPath = ("slurm",)


class _Durations:
    """Reads durations, collecting a located diagnostic for each bad one."""

    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []

    def read(self, value: Any, path: SpecPath, *, unit: str,
             unlimited: bool = False) -> int | None:
        if value is None:
            return None
        try:
            return seconds(value, slurm_unit=unit, unlimited=unlimited)
        except DurationError as exc:
            self.problems.append(Diagnostic("SLURM-DURATION", f"{path[-1]}: {exc}", path))
            return None


def plan_scheduling(spec: ClusterSpec, plan: Plan) -> Plan:
    """The scheduling plan, or every error of the policy at once."""
    slurm = spec.slurm
    durations = _Durations()
    problems = list(_without_accounting(spec))
    problems += list(_qos_references(spec))
    problems += list(_account_references(spec))
    problems += list(_preemption(spec))
    qos = tuple(_qos_plan(q, i, durations) for i, q in enumerate(slurm.qos))
    accounts, users = _accounts(spec)
    problems += list(_default_qos(spec, accounts))
    priority = _priority(spec, durations)
    exempt = durations.read(slurm.preemption.exempt_time, (*SLURM, "preemption", "exempt_time"),
                            unit="minutes")
    problems += durations.problems
    if problems:
        raise CompileError(problems)
    preempting = any(q.preempt for q in qos)
    scheduling = SchedulingPlan(
        cluster=plan.cluster.name, accounting=_accounting(spec, plan), priority=priority,
        preempt_type="preempt/qos" if preempting else "preempt/none",
        preempt_mode=slurm.preemption.mode if preempting else "off",
        preempt_exempt_s=exempt if preempting else None, qos=qos,
        default_qos=_cluster_default_qos(spec), accounts=accounts, users=users,
        return_to_service=slurm.return_to_service)
    return replace(plan, scheduling=scheduling)


# --- accounting and priority -------------------------------------------------------------------


def _without_accounting(spec: ClusterSpec) -> Iterator[Diagnostic]:
    """QOS, accounts and multifactor priority live in slurmdbd."""
    slurm = spec.slurm
    if slurm.accounting is not None:
        return
    for key, present in (("priority", slurm.priority is not None), ("qos", bool(slurm.qos)),
                         ("accounts", bool(slurm.accounts)),
                         ("default_qos", slurm.default_qos is not None)):
        if present:
            yield Diagnostic("SLURM-NO-ACCOUNTING", f"slurm.{key} needs slurmdbd accounting: "
                             "QOS, accounts and the fair-share and age factors live in its "
                             "database", (*SLURM, key), hint="add slurm.accounting")


def _accounting(spec: ClusterSpec, plan: Plan) -> AccountingPlan | None:
    acct = spec.slurm.accounting
    if acct is None:
        return None
    controllers = plan.nodes_by_role("controller")
    host = acct.host or (controllers[0].hostname if controllers else "localhost")
    store = acct.storage
    return AccountingPlan(
        dbd_host=host, port=acct.port, enforce=tuple(dict.fromkeys(acct.enforce)),
        storage=StoragePlan(store.host, store.port, store.database, store.user,
                            store.password_file, store.password_env))


def _priority(spec: ClusterSpec, durations: _Durations) -> PriorityPlan | None:
    """Multifactor priority where the spec gives one (it needs accounting); else None, and
    slurm.conf leaves the priority keys to the release's default."""
    prio = spec.slurm.priority
    if prio is None or spec.slurm.accounting is None:
        return None
    path: SpecPath = (*SLURM, "priority")
    half_life = durations.read(prio.decay_half_life, (*path, "decay_half_life"), unit="minutes")
    calc = durations.read(prio.calc_period, (*path, "calc_period"), unit="minutes")
    max_age = durations.read(prio.max_age, (*path, "max_age"), unit="minutes")
    if calc is not None and (calc % 60 or calc == 0):
        durations.problems.append(Diagnostic(
            "SLURM-DURATION", f"calc_period: Slurm counts PriorityCalcPeriod in whole minutes, "
            f"at least one; {calc} s is not", (*path, "calc_period"),
            hint="write whole minutes, e.g. '5m'"))
    if half_life == 0 and prio.usage_reset == "none":
        durations.problems.append(Diagnostic(
            "SLURM-DURATION", "decay_half_life: 0 (no decay) needs usage_reset: usage would "
            "otherwise grow forever (slurm.conf(5) PriorityDecayHalfLife)",
            (*path, "decay_half_life"), hint="set usage_reset, or a half-life such as '7d'"))
    return PriorityPlan(weights=prio.weights.model_dump(), decay_half_life_s=half_life or 0,
                        calc_period_min=(calc or 60) // 60, max_age_s=max_age or 0,
                        usage_reset=prio.usage_reset, favor_small=prio.favor_small)


def _cluster_default_qos(spec: ClusterSpec) -> str | None:
    """slurm.default_qos, else 'normal' (the QOS slurmdbd creates) when the spec declares it."""
    names = [q.name for q in spec.slurm.qos]
    if spec.slurm.default_qos is not None:
        return spec.slurm.default_qos
    return "normal" if "normal" in names else None


# --- QOS -----------------------------------------------------------------------------------


def _qos_references(spec: ClusterSpec) -> Iterator[Diagnostic]:
    slurm = spec.slurm
    names = [q.name for q in slurm.qos]
    yield from duplicates("QOS", [(q.name, (*SLURM, "qos", i, "name"))
                                  for i, q in enumerate(slurm.qos)])
    for i, qos in enumerate(slurm.qos):
        for j, target in enumerate(qos.preempt):
            if target not in names:
                yield unknown("QOS", target, names, (*SLURM, "qos", i, "preempt", j))
    if slurm.default_qos is not None and slurm.default_qos not in names:
        yield unknown("QOS", slurm.default_qos, names, (*SLURM, "default_qos"))
    if names and _cluster_default_qos(spec) is None:
        yield Diagnostic("SLURM-QOS-DEFAULT", "no default QOS: the spec declares QOS but none "
                         "named 'normal' and no slurm.default_qos, so a job naming no QOS "
                         "would be refused", (*SLURM, "qos"),
                         hint="set slurm.default_qos to one of " + ", ".join(names))
    for i, part in enumerate(slurm.partitions):
        for j, name in enumerate(part.allow_qos or []):
            if name not in names:
                yield unknown("QOS", name, names, (*SLURM, "partitions", i, "allow_qos", j))


def _preemption(spec: ClusterSpec) -> Iterator[Diagnostic]:
    """No QOS preempts itself or, through others, a QOS that preempts it (sacctmgr refuses a
    preemption loop); preemption needs a mode that preempts."""
    index = {qos.name: i for i, qos in enumerate(spec.slurm.qos)}
    for cycle in _preemption_cycles(spec.slurm.qos):
        shown = " -> ".join([*cycle, cycle[0]])
        yield Diagnostic("SLURM-QOS-PREEMPT-CYCLE", f"QOS preemption loops: {shown} (each "
                         "preempts the next; sacctmgr refuses such a loop)",
                         (*SLURM, "qos", index[cycle[0]], "preempt"),
                         hint="preemption must run one way: from higher to lower QOS")
    preempting = [i for i, q in enumerate(spec.slurm.qos) if q.preempt]
    if preempting and spec.slurm.preemption.mode == "off":
        yield Diagnostic("SLURM-PREEMPT-OFF", "QOS declare whom they preempt but "
                         "preemption.mode is 'off': preempt/qos needs a PreemptMode other than "
                         "OFF (slurm.conf(5) PreemptType)", (*SLURM, "preemption", "mode"),
                         hint="set preemption.mode to 'requeue' or 'cancel'")
    for i, qos in enumerate(spec.slurm.qos):
        if qos.preempt_mode == "suspend":
            yield Diagnostic("SLURM-PREEMPT-SUSPEND", f"QOS '{qos.name}': a suspended job "
                             "keeps its GPUs (slurm.conf(5): \"Suspended jobs will not release "
                             "GRES\"), so suspending frees nothing for a GPU job",
                             (*SLURM, "qos", i, "preempt_mode"),
                             hint="use 'requeue' (with a grace_time to checkpoint) or 'cancel'")


def _preemption_cycles(qos: list[Qos]) -> list[list[str]]:
    """Each loop of "preempts" among the QOS, sorted, each from its least name; networkx is
    loaded only when some QOS preempts another (a spec without preemption starts without it)."""
    if not any(q.preempt for q in qos):
        return []
    import networkx as nx

    graph = nx.DiGraph()
    for q in qos:
        graph.add_node(q.name)
        graph.add_edges_from((q.name, target) for target in q.preempt)
    return sorted(_rotated(c) for c in nx.simple_cycles(graph))


def _rotated(cycle: list[str]) -> list[str]:
    """The cycle starting at its smallest name, order kept (a stable way to report it)."""
    start = cycle.index(min(cycle))
    return cycle[start:] + cycle[:start]


def _qos_plan(qos: Qos, index: int, durations: _Durations) -> QosPlan:
    path: SpecPath = (*SLURM, "qos", index)
    read = durations.read
    return QosPlan(
        name=qos.name, description=qos.description or qos.name, priority=qos.priority,
        preempt=tuple(qos.preempt), preempt_mode=qos.preempt_mode,
        grace_time_s=read(qos.grace_time, (*path, "grace_time"), unit="seconds"),
        preempt_exempt_s=read(qos.preempt_exempt_time, (*path, "preempt_exempt_time"),
                              unit="minutes"),
        max_wall_s=read(qos.max_wall, (*path, "max_wall"), unit="minutes", unlimited=True),
        max_jobs_per_user=qos.max_jobs_per_user,
        max_submit_jobs_per_user=qos.max_submit_jobs_per_user,
        max_gpus_per_user=qos.max_gpus_per_user, max_gpus_per_job=qos.max_gpus_per_job,
        max_nodes_per_job=qos.max_nodes_per_job, grp_gpus=qos.grp_gpus, grp_nodes=qos.grp_nodes,
        usage_factor=qos.usage_factor, flags=tuple(dict.fromkeys(qos.flags)), spec_path=path)


# --- accounts ------------------------------------------------------------------------------


def _walk(accounts: list[Account], path: SpecPath,
          parent: str = "root") -> Iterator[tuple[Account, SpecPath, str]]:
    """Every account with its spec path and parent, parents first (the order sacctmgr needs)."""
    for i, account in enumerate(accounts):
        here: SpecPath = (*path, i)
        yield account, here, parent
        yield from _walk(account.accounts, (*here, "accounts"), account.name)


def _account_references(spec: ClusterSpec) -> Iterator[Diagnostic]:
    slurm = spec.slurm
    walked = list(_walk(slurm.accounts, (*SLURM, "accounts")))
    names = [a.name for a, _, _ in walked]
    qos_names = [q.name for q in slurm.qos]
    yield from duplicates("account", [(a.name, (*p, "name")) for a, p, _ in walked
                                      if a.name != "root"])
    for account, path, _ in walked:
        if account.name == "root":
            yield Diagnostic("SPEC-DUPLICATE", "account 'root' is Slurm's own top account: "
                             "declare its children at the top of slurm.accounts",
                             (*path, "name"))
        for j, name in enumerate(account.qos or []):
            if name not in qos_names:
                yield unknown("QOS", name, qos_names, (*path, "qos", j))
        if account.default_qos is not None and account.default_qos not in qos_names:
            yield unknown("QOS", account.default_qos, qos_names, (*path, "default_qos"))
    for i, part in enumerate(slurm.partitions):
        for j, name in enumerate(part.allow_accounts or []):
            if name not in names:
                yield unknown("account", name, names,
                              (*SLURM, "partitions", i, "allow_accounts", j))


def _accounts(spec: ClusterSpec) -> tuple[tuple[AccountPlan, ...], tuple[UserPlan, ...]]:
    """The tree flattened parents first, allowed and default QOS inherited down it."""
    slurm = spec.slurm
    allowed: dict[str, tuple[str, ...]] = {"root": tuple(q.name for q in slurm.qos)}
    default: dict[str, str | None] = {"root": _cluster_default_qos(spec)}
    plans, users = [], []
    first_account: dict[str, str] = {}
    for account, path, parent in _walk(slurm.accounts, (*SLURM, "accounts")):
        allowed[account.name] = tuple(account.qos) if account.qos is not None \
            else allowed[parent]
        default[account.name] = account.default_qos or default[parent]
        plans.append(AccountPlan(
            name=account.name, parent=parent, description=account.description or account.name,
            organization=account.organization or parent, fairshare=str(account.fairshare),
            qos=allowed[account.name], default_qos=default[account.name],
            max_gpus=account.max_gpus, spec_path=path))
        for user in account.users:
            first_account.setdefault(user, account.name)
            users.append(UserPlan(user, account.name, first_account[user]))
    return tuple(plans), tuple(users)


def _default_qos(spec: ClusterSpec, accounts: tuple[AccountPlan, ...]) -> Iterator[Diagnostic]:
    """An account's default QOS is one it may use (else sacctmgr refuses: "These associations
    don't have access to their default qos")."""
    for account in accounts:
        if account.default_qos is not None and account.default_qos not in account.qos:
            own = next(a for a, _, _ in _walk(spec.slurm.accounts, (*SLURM, "accounts"))
                       if a.name == account.name)
            path = (*account.spec_path, "default_qos" if own.default_qos else "qos")
            yield Diagnostic("SLURM-QOS-DEFAULT", f"account '{account.name}': its default QOS "
                             f"'{account.default_qos}' is not among the QOS it may use "
                             f"({', '.join(account.qos) or 'none'})", path,
                             hint=f"add '{account.default_qos}' to its qos, or pick one of them")
