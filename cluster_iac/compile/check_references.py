"""Every name the spec refers to exists (with 'did you mean'), and names are unique."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from cluster_iac.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.hostlist import HostlistError, expand
from cluster_iac.plan import Plan
from cluster_iac.spec import ClusterSpec
from cluster_iac.suggest import did_you_mean


def check_references(spec: ClusterSpec, plan: Plan) -> Plan:
    """Raise CompileError listing every unknown reference and duplicate name."""
    problems: list[Diagnostic] = []
    problems += _catalog_refs(spec, plan)
    problems += _node_group_refs(spec)
    problems += _rack_refs(spec)
    problems += _slurm_refs(spec)
    problems += _fabric_refs(spec, plan)
    if problems:
        raise CompileError(problems)
    return plan


def unknown(kind: str, name: str, known: Iterable[str], path: SpecPath) -> Diagnostic:
    """The standard 'unknown X' diagnostic with a suggestion."""
    return Diagnostic("SPEC-UNKNOWN-REF", f"unknown {kind} '{name}'", path,
                      hint=did_you_mean(name, known))


def duplicates(kind: str, names: list[tuple[str, SpecPath]]) -> list[Diagnostic]:
    counts = Counter(name for name, _ in names)
    return [Diagnostic("SPEC-DUPLICATE", f"{kind} '{name}' is defined more than once", path)
            for name, path in names if counts[name] > 1]


def _catalog_refs(spec: ClusterSpec, plan: Plan) -> list[Diagnostic]:
    cat = plan.catalog
    out: list[Diagnostic] = []
    for name, node_type in spec.node_types.items():
        base: SpecPath = ("node_types", name)
        platform = cat.platforms.get(node_type.platform)
        if platform is None:
            out.append(unknown("platform", node_type.platform, cat.platforms, (*base, "platform")))
        if node_type.gpu and node_type.gpu.model and node_type.gpu.model not in cat.gpus:
            out.append(unknown("GPU model", node_type.gpu.model, cat.gpus, (*base, "gpu", "model")))
        if node_type.cpu and node_type.cpu.model and node_type.cpu.model not in cat.cpus:
            out.append(unknown("CPU model", node_type.cpu.model, cat.cpus, (*base, "cpu", "model")))
        for i, nic in enumerate(node_type.nics or []):
            if nic.model not in cat.nics:
                out.append(unknown("NIC model", nic.model, cat.nics, (*base, "nics", i, "model")))
    for key, platform in cat.platforms.items():
        path: SpecPath = ("catalog", "platforms", key)
        if platform.gpu and platform.gpu not in cat.gpus:
            out.append(unknown("GPU model", platform.gpu, cat.gpus, (*path, "gpu")))
        if platform.cpu not in cat.cpus:
            out.append(unknown("CPU model", platform.cpu, cat.cpus, (*path, "cpu")))
        for i, nic in enumerate(platform.nics):
            if nic.model not in cat.nics:
                out.append(unknown("NIC model", nic.model, cat.nics, (*path, "nics", i, "model")))
    return out


def _node_group_refs(spec: ClusterSpec) -> list[Diagnostic]:
    out = duplicates("node group", [(g.name, ("node_groups", i, "name"))
                                    for i, g in enumerate(spec.node_groups)])
    for i, group in enumerate(spec.node_groups):
        if group.node_type not in spec.node_types:
            out.append(unknown("node type", group.node_type, spec.node_types,
                               ("node_groups", i, "node_type")))
    return out


def _rack_refs(spec: ClusterSpec) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    racks: list[tuple[str, SpecPath]] = []
    for r, row in enumerate(spec.rows):
        for g, rack_group in enumerate(row.racks):
            path: SpecPath = ("rows", r, "racks", g)
            try:
                racks += [(name, (*path, "names")) for name in expand(rack_group.names)]
            except HostlistError as exc:
                out.append(Diagnostic("SPEC-HOSTLIST", f"bad rack list: {exc}", (*path, "names")))
            if rack_group.pdu not in spec.power.pdu_profiles:
                out.append(unknown("PDU profile", rack_group.pdu, spec.power.pdu_profiles,
                                   (*path, "pdu")))
    out += duplicates("rack", racks)
    out += duplicates("row", [(row.name, ("rows", i, "name")) for i, row in enumerate(spec.rows)])
    known = {name for name, _ in racks}
    for i, group in enumerate(spec.node_groups):
        path = ("node_groups", i, "racks")
        try:
            names = expand(group.racks)
        except HostlistError as exc:
            out.append(Diagnostic("SPEC-HOSTLIST", f"bad rack list: {exc}", path))
            continue
        out += [unknown("rack", name, known, path) for name in names if name not in known]
    return out


def _slurm_refs(spec: ClusterSpec) -> list[Diagnostic]:
    groups = {g.name: g for g in spec.node_groups}
    parts = spec.slurm.partitions
    out = duplicates("partition", [(p.name, ("slurm", "partitions", i, "name"))
                                   for i, p in enumerate(parts)])
    for i, part in enumerate(parts):
        for j, name in enumerate(part.node_groups):
            path: SpecPath = ("slurm", "partitions", i, "node_groups", j)
            if name not in groups:
                out.append(unknown("node group", name, groups, path))
            elif groups[name].role != "compute":
                out.append(Diagnostic(
                    "SPEC-PARTITION-ROLE",
                    f"partition '{part.name}' lists node group '{name}', whose role is "
                    f"'{groups[name].role}'; only compute nodes run jobs", path))
    if not any(g.role == "controller" for g in spec.node_groups):
        out.append(Diagnostic("SPEC-NO-CONTROLLER",
                              "no node group has role 'controller' (the Slurm controller)",
                              ("node_groups",)))
    defaults = [i for i, p in enumerate(parts) if p.default]
    if len(defaults) > 1:
        out += [Diagnostic("SPEC-PARTITION-DEFAULT", "more than one partition is the default",
                           ("slurm", "partitions", i, "default")) for i in defaults[1:]]
    return out


def _fabric_refs(spec: ClusterSpec, plan: Plan) -> list[Diagnostic]:
    switches = plan.catalog.switches
    out: list[Diagnostic] = []
    sections = [("compute", spec.fabric.compute), ("storage", spec.fabric.storage)]
    for name, fabric in sections:
        if fabric is None:
            continue
        for tier in ("leaf_switch", "spine_switch", "core_switch"):
            model = getattr(fabric, tier, None)
            if model is not None and model not in switches:
                out.append(unknown("switch model", model, switches, ("fabric", name, tier)))
    for net_name in ("management", "bmc", "ipoib", "storage"):
        net = getattr(spec.networks, net_name)
        if net is not None and net.switch is not None and net.switch not in switches:
            out.append(unknown("switch model", net.switch, switches,
                               ("networks", net_name, "switch")))
    lustre = spec.storage.lustre
    if lustre is not None:
        groups = {g.name for g in spec.node_groups}
        for key in ("mds_group", "oss_group"):
            value = getattr(lustre, key)
            if value is not None and value not in groups:
                out.append(unknown("node group", value, groups, ("storage", "lustre", key)))
    return out
