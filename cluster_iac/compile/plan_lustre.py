"""Pick and check the Lustre layout of every directory class (stripe counts, sizes, PFL)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.compile.lustre_servers import (
    build_servers,
    choose_network,
    device_problems,
    net_name,
)
from cluster_iac.plan import Plan
from cluster_iac.plan.lustre import DirectoryLayout, LustrePlan, LustreServers, StripeComponent
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.storage import DirectoryClass, LayoutComponent, Lustre

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
# Lustre limits (Lustre Operations Manual, "Managing File Layout"; lustre_user.h):
STRIPE_ALIGN = 64 * KIB  # stripe sizes are multiples of 64 KiB (LOV_MIN_STRIPE_SIZE)
MAX_STRIPE_SIZE = 4 * GIB - 64 * KIB  # stripe size is a 32-bit field, 64 KiB aligned
MAX_STRIPE_COUNT = 2000  # LOV_MAX_STRIPE_COUNT
MAX_DOM_SIZE = 1 * GIB  # largest Data-on-MDT component (mdt.*.dom_stripesize limit)
_SIZE = re.compile(r"^(\d+)([KMGT]?)$", re.IGNORECASE)
_UNITS = {"": 1, "K": KIB, "M": MIB, "G": GIB, "T": 1 << 40}
EOF_WORDS = ("eof", "-1")


def plan_lustre(spec: ClusterSpec, plan: Plan) -> Plan:
    """Servers, targets, LNet and the layouts of every directory class, checked against
    Lustre's limits; a file system without metadata or object storage servers is an error."""
    lustre = spec.storage.lustre
    if lustre is None:
        return plan
    base: SpecPath = ("storage", "lustre")
    problems = list(_server_problems(lustre, plan, base))
    oss = sum(1 for node in plan.nodes if node.group == lustre.oss_group) or None
    osts = oss * lustre.osts_per_oss if oss else None
    layouts = []
    for index, directory in enumerate(lustre.directories):
        path = (*base, "directories", index)
        found = list(_directory_problems(directory, lustre, osts, path))
        if not found:
            layouts.append(_layout(directory, osts, path))
        problems += found
    problems += _path_problems(lustre, base)
    hardware = None
    if not problems:
        hardware, problems = _hardware(lustre, plan)
    if problems:
        raise CompileError(problems)
    return replace(plan, lustre=LustrePlan(
        fsname=lustre.fsname, mount=lustre.mount, oss_count=oss, ost_count=osts,
        directories=tuple(layouts), spec_path=base, hardware=hardware))


def _server_problems(lustre: Lustre, plan: Plan, base: SpecPath) -> Iterator[Diagnostic]:
    for key, what in (("mds_group", "metadata servers (MDS)"),
                      ("oss_group", "object storage servers (OSS)")):
        group = getattr(lustre, key)
        if group is None or not any(n.group == group for n in plan.nodes):
            yield Diagnostic("LUSTRE-NO-SERVERS", f"Lustre file system {lustre.fsname} has no "
                             f"{what}: name their node group in {key}",
                             (*base, key) if group else base)
    yield from device_problems(lustre, plan)
    if lustre.ost_indices is not None:
        oss = sum(1 for node in plan.nodes if node.group == lustre.oss_group)
        wanted = oss * lustre.osts_per_oss
        if len(lustre.ost_indices) != wanted:
            yield Diagnostic("LUSTRE-OST-INDEX", f"ost_indices lists {len(lustre.ost_indices)} "
                             f"indices for {oss} OSS x {lustre.osts_per_oss} = {wanted} OSTs",
                             (*base, "ost_indices"))


def _hardware(lustre: Lustre, plan: Plan) -> tuple[LustreServers | None, list[Diagnostic]]:
    network, problem = choose_network(lustre, plan)
    if network is None:
        return None, [problem] if problem else []
    net, problem = net_name(lustre, plan, network)
    hardware, problems = build_servers(lustre, plan, network, net)
    return hardware, ([problem] if problem else []) + problems


def parse_size(text: str) -> int | None:
    """'64K' -> 65536 (binary units, as lfs reads them); None when it is not a size."""
    match = _SIZE.match(text.strip())
    return int(match.group(1)) * _UNITS[match.group(2).upper()] if match else None


def _layout(directory: DirectoryClass, osts: int | None, path: SpecPath) -> DirectoryLayout:
    if directory.components:
        components, reason = _explicit(directory.components), "set by the spec"
    elif directory.stripe_count is not None or directory.stripe_size is not None:
        size = parse_size(directory.stripe_size or "1M") or MIB
        count = 1 if directory.stripe_count is None else directory.stripe_count
        components, reason = (StripeComponent(0, None, count, size),), "set by the spec"
    else:
        components, reason = default_layout(directory.pattern, osts)
    return DirectoryLayout(path=directory.path, pattern=directory.pattern, reason=reason,
                           components=components, spec_path=path)


def _explicit(spec_components: list[LayoutComponent]) -> tuple[StripeComponent, ...]:
    out, start = [], 0
    for comp in spec_components:
        end = None if comp.end.lower() in EOF_WORDS else parse_size(comp.end)
        size = end if comp.on_mdt and end else parse_size(comp.stripe_size) or MIB
        out.append(StripeComponent(start, end, 0 if comp.on_mdt else comp.stripe_count,
                                   size, comp.on_mdt))
        start = end or start
    return tuple(out)


def default_layout(pattern: str, osts: int | None) -> tuple[tuple[StripeComponent, ...], str]:
    """The layout an access pattern gets when the spec names none, and why."""

    def few(count: int) -> int:  # never ask for more OSTs than there are
        return min(count, osts) if osts else count

    if pattern == "dataset":
        return (StripeComponent(0, 64 * MIB, 1, MIB),
                StripeComponent(64 * MIB, GIB, few(4), MIB),
                StripeComponent(GIB, None, -1, 4 * MIB)), (
            "read by every rank: small files stay on one OST, large shards spread over all "
            "OSTs for aggregate read bandwidth (progressive file layout)")
    if pattern == "checkpoint":
        return (StripeComponent(0, 64 * MIB, 1, MIB),
                StripeComponent(64 * MIB, None, -1, 4 * MIB)), (
            "large sequential writes by many ranks at once: wide 4 MiB stripes over every OST "
            "for aggregate write bandwidth; small metadata files stay on one OST")
    if pattern == "small-files":
        return (StripeComponent(0, 64 * KIB, 0, 64 * KIB, on_mdt=True),
                StripeComponent(64 * KIB, None, 1, MIB)), (
            "many files under 64 KiB: Data-on-MDT serves them in one metadata RPC; larger "
            "files continue on one OST")
    reason = ("job-private temporary files with one writer each: one OST per file spreads "
              "files, not stripes, over the OSTs" if pattern == "scratch" else
              "small source and configuration files: one stripe keeps per-file cost lowest")
    return (StripeComponent(0, None, 1, MIB),), reason


def _directory_problems(directory: DirectoryClass, lustre: Lustre, osts: int | None,
                        path: SpecPath) -> Iterator[Diagnostic]:
    if directory.components and (directory.stripe_count is not None
                                 or directory.stripe_size is not None):
        yield Diagnostic("LUSTRE-LAYOUT", f"{directory.path}: give either components or "
                         "stripe_count/stripe_size, not both", (*path, "components"))
    if directory.stripe_count is not None:
        yield from _count_problems(directory.stripe_count, osts, (*path, "stripe_count"))
    if directory.stripe_size is not None:
        yield from _size_problems(directory.stripe_size, (*path, "stripe_size"))
    if directory.components:
        yield from _component_problems(directory.components, osts, (*path, "components"))


def _count_problems(count: int, osts: int | None, path: SpecPath) -> Iterator[Diagnostic]:
    limit = min(MAX_STRIPE_COUNT, osts) if osts else MAX_STRIPE_COUNT
    if count < -1 or count > limit:
        of = f"min({MAX_STRIPE_COUNT}, {osts} OSTs)" if osts else f"{MAX_STRIPE_COUNT}"
        yield Diagnostic("LUSTRE-STRIPE-COUNT", f"stripe count {count} is out of range: -1 "
                         f"(all OSTs), 0 (default) or 1 to {limit} = {of}", path,
                         details={"value": count, "limit": limit})


def _size_problems(text: str, path: SpecPath) -> Iterator[Diagnostic]:
    size = parse_size(text)
    if size is None:
        yield Diagnostic("LUSTRE-SIZE", f"'{text}' is not a size (bytes, or a number with "
                         "K, M, G or T)", path)
    elif size == 0 or size % STRIPE_ALIGN or size > MAX_STRIPE_SIZE:
        yield Diagnostic("LUSTRE-STRIPE-SIZE", f"stripe size {text} ({size} bytes) must be a "
                         f"multiple of 64 KiB between 64 KiB and 4 GiB - 64 KiB "
                         f"({MAX_STRIPE_SIZE} bytes)", path,
                         details={"value": size, "limit": MAX_STRIPE_SIZE})


def _component_problems(components: list[LayoutComponent], osts: int | None,
                        path: SpecPath) -> Iterator[Diagnostic]:
    previous = 0
    for index, comp in enumerate(components):
        where = (*path, index)
        last = index == len(components) - 1
        at_eof = comp.end.lower() in EOF_WORDS
        end = None if at_eof else parse_size(comp.end)
        if comp.on_mdt:
            yield from _dom_problems(index, end, last, where)
        else:
            yield from _count_problems(comp.stripe_count, osts, (*where, "stripe_count"))
            yield from _size_problems(comp.stripe_size, (*where, "stripe_size"))
        if at_eof != last:
            yield Diagnostic("LUSTRE-PFL-END", "the last component, and only the last, ends "
                             f"at eof (-1); component {index} ends at '{comp.end}'",
                             (*where, "end"))
        elif not at_eof and end is None:
            yield Diagnostic("LUSTRE-SIZE", f"'{comp.end}' is not a size or 'eof'",
                             (*where, "end"))
        elif end is not None:
            yield from _end_problems(comp, end, previous, index, where)
            previous = max(previous, end)


def _end_problems(comp: LayoutComponent, end: int, previous: int, index: int,
                  where: SpecPath) -> Iterator[Diagnostic]:
    size = parse_size(comp.stripe_size)
    if end <= previous:
        yield Diagnostic("LUSTRE-PFL-END", f"component ends must increase strictly: component "
                         f"{index} ends at {comp.end} ({end} bytes), not after the previous "
                         f"end ({previous} bytes)", (*where, "end"))
    elif not comp.on_mdt and size and end % size:
        yield Diagnostic("LUSTRE-PFL-END", f"component {index} ends at {comp.end}, not a "
                         f"multiple of its stripe size {comp.stripe_size} (lfs rejects it)",
                         (*where, "end"))


def _dom_problems(index: int, end: int | None, last: bool,
                  where: SpecPath) -> Iterator[Diagnostic]:
    if index != 0 or last:
        yield Diagnostic("LUSTRE-DOM", "only the first component of a layout with more than "
                         "one can be on the MDT", (*where, "on_mdt"))
    elif end is not None and (end % STRIPE_ALIGN or end > MAX_DOM_SIZE):
        yield Diagnostic("LUSTRE-DOM", f"a Data-on-MDT component ends at a multiple of 64 KiB "
                         f"up to 1 GiB, not {end} bytes", (*where, "end"))


def _path_problems(lustre: Lustre, base: SpecPath) -> Iterator[Diagnostic]:
    mount = lustre.mount.rstrip("/")
    seen: set[str] = set()
    for index, directory in enumerate(lustre.directories):
        path = directory.path.rstrip("/")
        where = (*base, "directories", index, "path")
        if path != mount and not path.startswith(mount + "/"):
            yield Diagnostic("LUSTRE-PATH", f"{directory.path} is not under the Lustre mount "
                             f"{lustre.mount}", where)
        if path in seen:
            yield Diagnostic("LUSTRE-PATH", f"{directory.path} has two layouts", where)
        seen.add(path)
