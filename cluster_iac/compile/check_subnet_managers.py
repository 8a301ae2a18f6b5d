"""Each fabric's subnet_manager names hosts cabled to that InfiniBand fabric and Slurm
partitions that exist, with distinct partition keys."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.plan import Plan
from cluster_iac.spec import ClusterSpec


def check_subnet_managers(spec: ClusterSpec, plan: Plan) -> Plan:
    """Raise CompileError for every subnet_manager host or partition key that cannot be."""
    problems = [problem for network in ("compute", "storage")
                for problem in _problems(spec, plan, network)]
    if problems:
        raise CompileError(problems)
    return plan


def _problems(spec: ClusterSpec, plan: Plan, network: str) -> Iterator[Diagnostic]:
    config = getattr(spec.fabric, network, None)
    manager = getattr(config, "subnet_manager", None)
    if manager is None:
        return
    path = ("fabric", network, "subnet_manager")
    fabric = plan.fabrics.get(network)
    if fabric is None or fabric.technology != "infiniband":
        yield Diagnostic("FABRIC-SUBNET-MANAGER", f"the {network} fabric is "
                         f"{getattr(fabric, 'technology', 'not built')}: a subnet manager "
                         "runs on InfiniBand only", path, hint="remove subnet_manager")
        return
    wiring = plan.fabric_wiring[network]
    hostnames = {node.hostname for node in plan.nodes}
    cabled = [name for name, tier in wiring.tier.items() if tier == "node"]
    seen: set[str] = set()
    for i, host in enumerate(manager.hosts):
        where = (*path, "hosts", i)
        if host in seen:
            yield Diagnostic("FABRIC-SUBNET-MANAGER", f"host '{host}' is named twice", where)
        elif host not in hostnames:
            yield Diagnostic("FABRIC-SUBNET-MANAGER", f"no host '{host}'", where,
                             hint=did_you_mean(host, sorted(hostnames)))
        elif host not in wiring.tier:
            yield Diagnostic("FABRIC-SUBNET-MANAGER", f"host '{host}' has no port on the "
                             f"{network} fabric: OpenSM runs on a host cabled to it", where,
                             hint=did_you_mean(host, cabled) or
                             f"hosts on it include {', '.join(cabled[:3])}")
        seen.add(host)
    partitions = {part.name for part in plan.partitions}
    keys: dict[int, str] = {}
    for name, key in manager.partition_keys.items():
        where = (*path, "partition_keys", name)
        if name not in partitions:
            yield Diagnostic("FABRIC-PKEY", f"no Slurm partition '{name}'", where,
                             hint=did_you_mean(name, sorted(partitions)), at_key=True)
        elif key in keys:
            yield Diagnostic("FABRIC-PKEY", f"partition key 0x{key:04x} is also "
                             f"'{keys[key]}''s: each partition needs its own", where)
        keys.setdefault(key, name)
