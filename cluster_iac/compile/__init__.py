"""Compile passes: spec -> plan, one small pure function per pass, in order."""

from __future__ import annotations

from collections.abc import Callable

from cluster_iac.base.errors import CompileError
from cluster_iac.catalog import merged_catalog
from cluster_iac.compile.assign_addresses import assign_addresses
from cluster_iac.compile.build_fabric import build_fabric
from cluster_iac.compile.build_management import build_management
from cluster_iac.compile.build_nvlink import build_nvlink
from cluster_iac.compile.build_power import build_power
from cluster_iac.compile.check_references import check_references
from cluster_iac.compile.check_subnet_managers import check_subnet_managers
from cluster_iac.compile.expand_node_types import expand_node_types
from cluster_iac.compile.expand_nodes import expand_nodes
from cluster_iac.compile.expand_partitions import expand_partitions
from cluster_iac.compile.expand_racks import expand_racks
from cluster_iac.compile.place_devices import place_devices
from cluster_iac.compile.plan_access import plan_access
from cluster_iac.compile.plan_boot import plan_boot
from cluster_iac.compile.plan_cabling import plan_cabling
from cluster_iac.compile.plan_facts import plan_facts
from cluster_iac.compile.plan_health import plan_health
from cluster_iac.compile.plan_host_rails import plan_host_rails
from cluster_iac.compile.plan_imex import plan_imex
from cluster_iac.compile.plan_mig import plan_mig
from cluster_iac.compile.plan_nccl import plan_nccl
from cluster_iac.compile.plan_partition_limits import plan_partition_limits
from cluster_iac.compile.plan_qos import plan_qos
from cluster_iac.compile.plan_scheduling import plan_scheduling
from cluster_iac.compile.plan_slurm import plan_slurm
from cluster_iac.compile.plan_switches import plan_switch_ports, plan_switches
from cluster_iac.plan import Plan
from cluster_iac.plan.kept import Lock
from cluster_iac.plan.model import Settings
from cluster_iac.spec import ClusterSpec

Pass = Callable[[ClusterSpec, Plan], Plan]


def plan_lustre(spec: ClusterSpec, plan: Plan) -> Plan:
    """compile/plan_lustre.py's pass, loaded only for a spec with a Lustre file system: its
    servers, LNet and bandwidth modules and plan/lustre.py's eight dataclasses are some 2.5 % of
    validate's instructions for a spec without Lustre (tests/test_startup.py keeps it so)."""
    if spec.storage.lustre is None:
        return plan
    from cluster_iac.compile.plan_lustre import plan_lustre as plan_file_system

    return plan_file_system(spec, plan)


# Order matters: each pass may read what the ones before it put in the plan.
PASSES: tuple[Pass, ...] = (
    check_references,
    expand_node_types,
    plan_mig,
    expand_racks,
    expand_nodes,
    expand_partitions,
    build_fabric,
    check_subnet_managers,
    build_nvlink,
    build_management,
    place_devices,
    assign_addresses,
    build_power,
    plan_cabling,
    plan_switches,
    plan_access,  # EMIT_ONLY
    plan_switch_ports,  # EMIT_ONLY
    plan_qos,
    plan_host_rails,  # EMIT_ONLY
    plan_nccl,
    plan_lustre,
    plan_slurm,
    plan_imex,
    plan_scheduling,
    plan_partition_limits,
    plan_health,
    plan_boot,
    plan_facts,
)


EMIT_ONLY: tuple[Pass, ...] = (plan_access, plan_switch_ports, plan_host_rails)
"""Passes whose product only emitters read (plan_access: the management and BMC switches'
configurations, read by emit/frr.py and emit/avd.py alone; plan_switch_ports: the Ethernet
fabric switches' ports and BGP sessions, read by the same writers and by plan_host_rails;
plan_host_rails: the GPU nodes' RoCE NICs, read by the cloud-init, inventory, playbook and QoS
emitters; no check, no later pass and not the lock read them) and that find no error:
``compile_plan(..., emit_only=False)`` leaves them out (validate, and a render or check that
finds its folder current), ``for_emit`` runs them, in this order."""


def compile_plan(spec: ClusterSpec, lock: Lock | None = None, *,
                 emit_only: bool = True, through: Pass | None = None) -> Plan:
    """Run every pass (``emit_only`` False: but EMIT_ONLY's; ``through``: only those up to
    and including that one, see passes_through); a pass that finds errors raises
    CompileError. The allocating passes keep what ``lock`` records (cluster_iac/lock/)."""
    plan = Plan(cluster=spec.cluster, catalog=merged_catalog(spec.catalog),
                settings=Settings.from_spec(spec), lock=lock if lock is not None else Lock())
    passes = PASSES if emit_only else _checked_passes()
    return _run(spec, plan, passes if through is None else passes_through(passes, through))


def compile_on(spec: ClusterSpec, plan: Plan, after: Pass, through: Pass) -> Plan:
    """``plan``, compiled by compile_plan(emit_only=False) through ``after``, compiled on
    through ``through``: the passes between, as compile_plan runs them (reconcile: a plan
    made only as far as a discovery needs to tell whether it agrees, carried on to describe
    where it does not)."""
    passes = _checked_passes()
    return _run(spec, plan, passes[passes.index(after) + 1:passes.index(through) + 1])


def _run(spec: ClusterSpec, plan: Plan, passes: tuple[Pass, ...]) -> Plan:
    """``passes`` in their order onto ``plan``; a pass that finds errors raises CompileError,
    after the errors the passes before it deferred."""
    for compile_pass in passes:
        try:
            plan = compile_pass(spec, plan)
        except CompileError as exc:
            if plan.deferred:  # the deferred errors first, as their pass ran first
                raise CompileError([*plan.deferred, *exc.diagnostics], exc.source,
                                   exc.plan) from None
            raise
    if plan.deferred:
        raise CompileError(list(plan.deferred), plan=plan, complete=True)
    return plan


def for_emit(spec: ClusterSpec, plan: Plan) -> Plan:
    """A plan compiled without EMIT_ONLY's passes, with them: ready to render."""
    for compile_pass in EMIT_ONLY:
        plan = compile_pass(spec, plan)
    return plan


def _checked_passes() -> tuple[Pass, ...]:
    return tuple(p for p in PASSES if p not in EMIT_ONLY)


def passes_through(passes: tuple[Pass, ...], last: Pass) -> tuple[Pass, ...]:
    """``passes`` up to and including ``last``, in their order: a plan for a reader of what
    the passes up to ``last`` make and of nothing later (reconcile/sources.py NEEDS), whose
    inputs a full compile has passed already (a later pass's errors are not looked for)."""
    return passes[:passes.index(last) + 1]
