"""Every name the spec refers to exists (with 'did you mean'), and names are unique."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from pydantic_core import PydanticCustomError

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.hostlist import HostlistError, expand, size
from cluster_iac.base.suggest import closest, did_you_mean
from cluster_iac.compile.check_names import name_problems
from cluster_iac.plan import Plan
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.limits import MAX_NAMES, MAX_NODES, MAX_RACKS
from cluster_iac.spec.slurm import GroupNodes, partition_picks
from cluster_iac.spec.strings import check_rack_name


def check_references(spec: ClusterSpec, plan: Plan) -> Plan:
    """Raise CompileError listing every unknown reference and duplicate name."""
    problems = _sizes(spec)
    if problems:  # nothing below expands a hostlist or a count before it is known to fit
        raise CompileError(problems)
    problems += _catalog_refs(spec, plan)
    problems += _node_group_refs(spec)
    problems += _rack_refs(spec)
    problems += _slurm_refs(spec)
    problems += _fabric_refs(spec, plan)
    problems += name_problems(spec)
    if problems:
        raise CompileError(problems)
    return plan


def _sizes(spec: ClusterSpec) -> list[Diagnostic]:
    """Every hostlist names at most MAX_RACKS racks and all of them MAX_NAMES; the cluster has
    at most MAX_RACKS racks, MAX_NODES nodes and MAX_NAMES partition places: counted from the
    ranges and counts, before anything is expanded."""
    rows: list[tuple[str, SpecPath]] = [
        (g.names, ("rows", r, "racks", i, "names"))
        for r, row in enumerate(spec.rows) for i, g in enumerate(row.racks)]
    others: list[tuple[str, SpecPath]] = [
        (g.racks, ("node_groups", i, "racks")) for i, g in enumerate(spec.node_groups)]
    others += [(fabric.racks, ("fabric", name, "racks"))
               for name, fabric in (("compute", spec.fabric.compute),
                                    ("storage", spec.fabric.storage))
               if fabric is not None and fabric.racks is not None]
    others += [(loop.racks, ("cooling", "loops", i, "racks"))
               for i, loop in enumerate(spec.cooling.loops)]
    out: list[Diagnostic] = []
    names = 0
    for expression, path in rows + others:
        try:
            count = size(expression)
        except HostlistError as exc:
            out.append(_bad_hostlist(exc, path))
            continue
        names += count
        if count > MAX_RACKS:
            return [_limit(f"hostlist {expression!r} names {count:,} racks; the limit is "
                           f"{MAX_RACKS:,}", path)]
        if names > MAX_NAMES:
            return [_limit(f"the hostlists up to this one name {names:,} racks; the limit is "
                           f"{MAX_NAMES:,}", path)]
    if out:
        return out
    out += _hostlist_syntax(rows, check_names=True) + _hostlist_syntax(others, check_names=False)
    racks = sum(size(expression) for expression, _ in rows)
    if not out and racks > MAX_RACKS:
        out.append(_limit(f"the rows hold {racks:,} racks; the limit is {MAX_RACKS:,}", ("rows",)))
    nodes = sum(group.count for group in spec.node_groups)
    if nodes > MAX_NODES:
        out.append(_limit(f"the node groups hold {nodes:,} nodes; the limit is {MAX_NODES:,}",
                          ("node_groups",)))
    counts: dict[str, int] = {}
    for group in spec.node_groups:
        counts[group.name] = counts.get(group.name, 0) + group.count
    places = 0
    for i, part in enumerate(spec.slurm.partitions):
        part_path: SpecPath = ("slurm", "partitions", i)
        places += sum(counts.get(name, 0) for name in part.node_groups)
        for pick, where in partition_picks(part):
            if isinstance(pick, GroupNodes):
                places += pick.count
                continue
            try:
                places += size(pick)
            except HostlistError as exc:
                out.append(Diagnostic("SPEC-HOSTLIST", f"bad node list: {exc}",
                                      (*part_path, *where),
                                      hint="write names and ranges, e.g. 'gpu[001-004]'"))
        if places > MAX_NAMES:
            out.append(_limit(f"the partitions up to this one list {places:,} nodes; the limit "
                              f"is {MAX_NAMES:,}", part_path))
            break
    return out


def _limit(message: str, path: SpecPath) -> Diagnostic:
    return Diagnostic("SPEC-LIMIT", message, path, at_key=len(path) == 1,
                      hint="the limits (README, 'Limits') hold a 200,000-GPU cluster")


def _bad_hostlist(exc: HostlistError, path: SpecPath) -> Diagnostic:
    return Diagnostic("SPEC-HOSTLIST", f"bad rack list: {exc}", path,
                      hint="write names and ranges, e.g. 'r[01-04],s01'")


def _hostlist_syntax(hostlists: list[tuple[str, SpecPath]], *,
                     check_names: bool) -> list[Diagnostic]:
    """Each hostlist expands; the rows' rack names are DNS labels (a reference to a rack is
    then either one of them or an unknown rack)."""
    out = []
    for expression, path in hostlists:
        try:
            names = expand(expression, limit=MAX_RACKS)
            for name in names if check_names else ():
                check_rack_name(name)
        except HostlistError as exc:
            out.append(_bad_hostlist(exc, path))
        except PydanticCustomError as exc:
            context = exc.context or {}
            out.append(Diagnostic("SPEC-NAME", str(context.get("message", exc)), path,
                                  hint=str(context.get("hint") or "") or None))
    return out


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
        for key in ("nics", "nics_add"):
            for i, nic in enumerate(getattr(node_type, key) or []):
                if nic.model not in cat.nics:
                    out.append(unknown("NIC model", nic.model, cat.nics, (*base, key, i, "model")))
    out += _coolant_points(spec)
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


def _coolant_points(spec: ClusterSpec) -> list[Diagnostic]:
    """A coolant of the spec's catalog has one row per temperature: with two, interpolation
    would silently take one of them (plan/cooling.py: properties_at)."""
    out = []
    for key, coolant in spec.catalog.coolants.items():
        first: dict[float, int] = {}
        for i, point in enumerate(coolant.points):
            earlier = first.setdefault(point.temperature_c, i)
            if earlier != i:
                out.append(Diagnostic(
                    "SPEC-COOLANT-TEMPERATURE",
                    f"coolant {key}: points {earlier} and {i} are both at "
                    f"{point.temperature_c:g} C", ("catalog", "coolants", key, "points", i,
                                                  "temperature_c"),
                    hint="keep one row per temperature: density and specific heat are "
                         "interpolated between rows at different temperatures"))
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
            racks += [(name, (*path, "names")) for name in expand(rack_group.names)]
            if rack_group.pdu not in spec.power.pdu_profiles:
                out.append(unknown("PDU profile", rack_group.pdu, spec.power.pdu_profiles,
                                   (*path, "pdu")))
    out += duplicates("rack", racks)
    out += duplicates("row", [(row.name, ("rows", i, "name")) for i, row in enumerate(spec.rows)])
    known = {name for name, _ in racks}
    for i, group in enumerate(spec.node_groups):
        path = ("node_groups", i, "racks")
        out += [unknown("rack", name, known, path) for name in expand(group.racks)
                if name not in known]
    return out


def _slurm_refs(spec: ClusterSpec) -> list[Diagnostic]:
    groups = {g.name: g for g in spec.node_groups}
    parts = spec.slurm.partitions
    out = duplicates("partition", [(p.name, ("slurm", "partitions", i, "name"))
                                   for i, p in enumerate(parts)])
    for i, part in enumerate(parts):
        named: list[tuple[str, SpecPath]] = [
            (name, ("slurm", "partitions", i, "node_groups", j))
            for j, name in enumerate(part.node_groups)]
        picks = partition_picks(part)
        for pick, where in picks:
            if isinstance(pick, GroupNodes):
                named.append((pick.group, ("slurm", "partitions", i, *where, "group")))
                group = groups.get(pick.group)
                if group is not None and pick.count > group.count:
                    out.append(Diagnostic(
                        "SPEC-PARTITION-COUNT",
                        f"partition '{part.name}' takes {pick.count:,} nodes of node group "
                        f"'{pick.group}', which has {group.count:,}",
                        ("slurm", "partitions", i, *where, "count"),
                        hint=f"take at most {group.count:,}, or the whole group by naming it "
                             "in node_groups"))
        for name, path in named:
            if name not in groups:
                out.append(unknown("node group", name, groups, path))
            elif groups[name].role != "compute":
                out.append(not_compute(part.name, f"node group '{name}'", groups[name].role,
                                        path))
        if not part.node_groups and not picks:
            out.append(Diagnostic(
                "CONSISTENCY-PARTITION-EMPTY", f"partition '{part.name}' names no nodes",
                ("slurm", "partitions", i, "name"),
                hint="name node groups in node_groups, or nodes in nodes (a hostlist such as "
                     "'gpu[001-004]', or {group: gpu, count: 4})"))
    if not any(g.role == "controller" for g in spec.node_groups):
        out.append(Diagnostic("SPEC-NO-CONTROLLER",
                              "no node group has role 'controller' (the Slurm controller)",
                              ("node_groups",)))
    defaults = [i for i, p in enumerate(parts) if p.default]
    if len(defaults) > 1:
        out += [Diagnostic("SPEC-PARTITION-DEFAULT", "more than one partition is the default",
                           ("slurm", "partitions", i, "default")) for i in defaults[1:]]
    return out


def not_compute(partition: str, what: str, role: str, path: SpecPath) -> Diagnostic:
    """SPEC-PARTITION-ROLE: a partition names nodes that run no jobs."""
    return Diagnostic("SPEC-PARTITION-ROLE", f"partition '{partition}' lists {what}, whose "
                      f"role is '{role}'; only compute nodes run jobs", path)


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
    if spec.storage.lustre is not None:
        out += _lustre_refs(spec)
    return out


LUSTRE: SpecPath = ("storage", "lustre")
SERVER_ROLES = (("mds_group", "lustre_mds"), ("oss_group", "lustre_oss"))
LNET_CLIENT_ROLES = ("compute", "login")  # compile/lustre_servers.py: CLIENT_ROLES


def _lustre_refs(spec: ClusterSpec) -> list[Diagnostic]:
    """The server groups exist and have the servers' roles (checked here, before the targets
    are laid out: a GPU group named as mds_group would otherwise be reported as missing drive
    bays on each GPU node), and lnet.interfaces names node types that run LNet."""
    lustre = spec.storage.lustre
    assert lustre is not None
    groups = {g.name: g for g in spec.node_groups}
    out: list[Diagnostic] = []
    for key, role in SERVER_ROLES:
        value = getattr(lustre, key)
        if value is None:
            continue
        if value not in groups:
            out.append(unknown("node group", value, groups, (*LUSTRE, key)))
        elif groups[value].role != role:
            fitting = [g.name for g in spec.node_groups if g.role == role]
            best = closest(value, fitting) or (fitting[0] if len(fitting) == 1 else None)
            hint = (f"did you mean '{best}', the node group of role {role}?" if best
                    else did_you_mean(value, fitting) if fitting
                    else f"give the servers' node group role: {role}")
            out.append(Diagnostic(
                "CONSISTENCY-LUSTRE-ROLE",
                f"storage.lustre.{key} is node group {value}, whose role is "
                f"{groups[value].role}, not {role}", (*LUSTRE, key), hint=hint))
    server_groups = {getattr(lustre, key) for key, _ in SERVER_ROLES}
    lnet_roles = (*LNET_CLIENT_ROLES, *(role for _, role in SERVER_ROLES))
    runs_lnet = sorted({g.node_type for g in spec.node_groups
                        if g.role in lnet_roles or g.name in server_groups})
    for name in lustre.lnet.interfaces:
        path: SpecPath = (*LUSTRE, "lnet", "interfaces", name)
        if name not in spec.node_types:
            out.append(replace(unknown("node type", name, runs_lnet, path), at_key=True))
        elif name not in runs_lnet:
            roles = sorted({g.role for g in spec.node_groups if g.node_type == name})
            out.append(Diagnostic(
                "LUSTRE-LNET-INTERFACES",
                f"lnet.interfaces names node type '{name}', which neither serves nor mounts "
                f"Lustre (its groups' roles: {', '.join(roles) or 'none, no group uses it'})",
                path, at_key=True, hint=did_you_mean(name, runs_lnet)))
    return out
