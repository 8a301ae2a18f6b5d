"""Merge each node type's catalog platform with the spec's overrides."""

from __future__ import annotations

import math
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import NicPlan, NodeTypePlan, Plan
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.hardware import GpuModel, PsuSpec
from cluster_iac.spec.nodes import NodeType


def expand_node_types(spec: ClusterSpec, plan: Plan) -> Plan:
    """Resolve every node type against the catalog."""
    problems = [d for name, nt in sorted(spec.node_types.items())
                for d in _gpu_override(name, nt, plan)]
    if problems:
        raise CompileError(problems)
    resolved = {name: _resolve(name, nt, plan) for name, nt in sorted(spec.node_types.items())}
    problems = [d for nt in resolved.values() for d in _consistency(nt)]
    problems += _memory_reserve(spec, resolved)
    problems += _network_nics(spec, resolved)
    if problems:
        raise CompileError(problems)
    return replace(plan, node_types=resolved)


def _resolve(name: str, nt: NodeType, plan: Plan) -> NodeTypePlan:
    cat = plan.catalog
    platform = cat.platforms[nt.platform]
    gpu_key = (nt.gpu.model if nt.gpu and nt.gpu.model else None) or platform.gpu
    gpu_count = nt.gpu.count if nt.gpu and nt.gpu.count is not None else platform.gpu_count
    gpu = cat.gpus[gpu_key] if gpu_key else None
    cpu_key = (nt.cpu.model if nt.cpu and nt.cpu.model else None) or platform.cpu
    cpu = cat.cpus[cpu_key]
    over = nt.cpu
    psus = nt.psus or platform.psus
    return NodeTypePlan(
        name=name,
        platform=nt.platform,
        platform_name=_bom_name(nt.platform, gpu_key, gpu_count, plan),
        kind=platform.kind,
        gpu_model=gpu_key if gpu_count else None,
        gpu_name=gpu.name if gpu and gpu_count else None,
        gpu_count=gpu_count if gpu else 0,
        gres_type=gpu.gres_type if gpu and gpu_count else None,
        gpu_max_power_w=gpu.max_power_w if gpu else 0,
        gpu_nvlink_gbs=gpu.nvlink_gbs if gpu else 0.0,
        cpu_model=cpu_key,
        cpu=cpu,
        sockets=(over.sockets if over and over.sockets else None) or platform.sockets,
        cores_per_socket=(over.cores_per_socket if over and over.cores_per_socket else None)
        or cpu.cores,
        threads_per_core=(over.threads_per_core if over and over.threads_per_core else None)
        or cpu.threads_per_core,
        memory_gib=nt.memory_gib or platform.memory_gib,
        nics=tuple(_nic(slot, cat) for slot in [
            *(nt.nics if nt.nics is not None else platform.nics), *nt.nics_add]),
        max_power_w=nt.max_power_w or capped_power_w(nt, platform.max_power_w, gpu, gpu_count),
        psu_count=psus.count if psus else 0,
        psu_rating_w=psus.rating_w if psus else 0,
        psu_required=_psus_required(nt, platform.max_power_w, psus,
                                    capped_power_w(nt, platform.max_power_w, gpu, gpu_count)),
        height_u=nt.height_u or platform.height_u,
        weight_kg=nt.weight_kg or platform.weight_kg,
        cooling=platform.cooling,
        nvlink_domain=platform.nvlink_domain if gpu_count else "none",
        # _gpu_override let through only overrides that keep the board: its layout holds
        gpu_sockets=tuple(platform.gpu_sockets) if gpu_count == platform.gpu_count else (),
        pcie=platform.pcie if gpu_count == platform.gpu_count else None,
        features=tuple(nt.features),
        gres_autodetect=nt.gres_autodetect,
        spec_path=("node_types", name),
        gpu_architecture=gpu.architecture if gpu and gpu_count else None,
        nvlink_sharp=platform.nvlink_sharp,
        gpu_power_limit_w=nt.gpu_power_limit_w or 0,
        platform_max_power_w=platform.max_power_w,
    )


def capped_power_w(nt: NodeType, platform_w: int, gpu: GpuModel | None,
                   gpu_count: int) -> int:
    """The node's maximum draw under a GPU power cap: the platform's, less what each GPU no
    longer draws (its catalog maximum less the limit); the platform's without a cap."""
    limit = nt.gpu_power_limit_w
    gpu_w = gpu.max_power_w if gpu else 0
    if limit is None or not gpu_count or limit >= gpu_w:
        return platform_w
    return max(1, platform_w - gpu_count * (gpu_w - limit))


def _psus_required(nt: NodeType, platform_w: float, psus: PsuSpec | None,
                   capped_w: float) -> int:
    """The PSUs the node needs: the vendor's count for the platform's full draw, or, under a
    declared power cap (``max_power_w`` below the platform's, with the platform's PSUs),
    ceil(cap / PSU rating): the supplies that carry the capped draw (DGX B200 capped at
    9.9 kW: 3 of 6 x 3.3 kW, so either feed of an A/B pair carries it). Never more than the
    vendor's count; explicit ``psus`` are taken as given. A GPU power cap
    (``gpu_power_limit_w``) caps the node at ``capped_w`` the same way."""
    if psus is None:
        return 0
    cap = nt.max_power_w or (capped_w if capped_w < platform_w else None)
    if nt.psus is not None or cap is None or cap >= platform_w:
        return psus.required
    return max(1, min(psus.required, math.ceil(cap / psus.rating_w)))


def _gpu_override(name: str, nt: NodeType, plan: Plan) -> list[Diagnostic]:
    """A GPU override keeps the platform's PCIe layout and socket binding (nccl/<type>.topo.xml,
    gres.conf Cores=) only where that layout still describes the node: the same GPU count, and a
    GPU of the same baseboard (HGX H100 -> H200). Anything else is an error at the override,
    never a silent loss of the topology file and the binding."""
    cat = plan.catalog
    platform = cat.platforms.get(nt.platform)
    if nt.gpu is None or platform is None or not (platform.pcie or platform.gpu_sockets):
        return []
    base: SpecPath = ("node_types", name, "gpu")
    what = _layout_words(platform)
    out = []
    if nt.gpu.count is not None and nt.gpu.count != platform.gpu_count:
        out.append(Diagnostic(
            "SPEC-GPU-OVERRIDE", f"node type '{name}' sets {nt.gpu.count} GPU(s) on platform "
            f"'{nt.platform}', whose {what} place {platform.gpu_count}: which slots hold the "
            f"GPUs cannot be derived", (*base, "count"),
            hint=f"add a catalog platform with gpu_count: {nt.gpu.count} and its own "
                 "gpu_sockets (and pcie layout, from lspci), or drop the count"))
    model = nt.gpu.model
    if model and model != platform.gpu and model in cat.gpus and platform.gpu in cat.gpus:
        old, new = cat.gpus[platform.gpu], cat.gpus[model]
        if old.baseboard is None or old.baseboard != new.baseboard:
            fits = _boards_for(model, plan)
            hint = (f"use platform {' or '.join(repr(k) for k in fits)}"
                    + (f" (baseboard {new.baseboard}, which takes {model})"
                       if new.baseboard else "") if fits else
                    f"add a catalog platform with gpu: {model} and its own gpu_sockets "
                    "(and pcie layout, from lspci)")
            out.append(Diagnostic(
                "SPEC-GPU-OVERRIDE", f"node type '{name}' puts {new.name} on platform "
                f"'{nt.platform}', built for {old.name} (baseboard "
                f"{old.baseboard or 'of its own'}; {new.name}: {new.baseboard or 'of its own'})"
                f": the {what} cannot be derived for it", (*base, "model"), hint=hint))
    return out


def _boards_for(model: str, plan: Plan) -> list[str]:
    """The catalog platforms that take ``model``: built with it, or with a GPU of its
    baseboard family (the override keeps their layout)."""
    cat = plan.catalog
    board = cat.gpus[model].baseboard
    return sorted(key for key, p in cat.platforms.items() if p.gpu and (
        p.gpu == model or (board is not None and p.gpu in cat.gpus
                           and cat.gpus[p.gpu].baseboard == board)))


def _layout_words(platform) -> str:  # type: ignore[no-untyped-def]
    parts = (["PCIe layout (nccl/<type>.topo.xml)"] if platform.pcie else []) + (
        ["GPU socket binding (gres.conf Cores=)"] if platform.gpu_sockets else [])
    return " and ".join(parts)


def _bom_name(key: str, gpu_key: str | None, gpu_count: int, plan: Plan) -> str:
    """The platform's name; with a GPU of the same baseboard put in, the name of the catalog
    platform built that way (hgx-h100-8gpu with H200s is hgx-h200-8gpu), else the platform's
    name with the GPUs said."""
    platform = plan.catalog.platforms[key]
    if gpu_key is None or gpu_key == platform.gpu or not gpu_count:
        return platform.name
    for _, other in sorted(plan.catalog.platforms.items()):
        if (other.gpu == gpu_key and other.gpu_count == gpu_count and other.cpu == platform.cpu
                and other.pcie == platform.pcie and other.gpu_sockets == platform.gpu_sockets):
            return other.name
    return f"{platform.name} with {gpu_count}x {plan.catalog.gpus[gpu_key].name}"


def _nic(slot, cat) -> NicPlan:  # type: ignore[no-untyped-def]
    model = cat.nics[slot.model]
    return NicPlan(role=slot.role, model=slot.model, name=model.name, link=model.link,
                   speed_gbps=model.speed_gbps, count=slot.count * model.ports,
                   pcie_gen=model.pcie_gen, pcie_width=model.pcie_width,
                   cage_ports=slot.cage_ports)


def _memory_reserve(spec: ClusterSpec, resolved: dict[str, NodeTypePlan]) -> list[Diagnostic]:
    """A compute node type keeps memory for jobs after the OS reserve (Slurm's RealMemory is
    the installed memory less the reserve, and must be at least 1 MiB; we ask for 1 GiB)."""
    slurm = spec.slurm
    compute = {g.node_type for g in spec.node_groups if g.role == "compute"}
    out = []
    for name in sorted(compute & set(resolved)):
        total = resolved[name].memory_gib
        reserve = max(slurm.memory_reserve_min_gib, total * slurm.memory_reserve_percent / 100)
        if total - reserve < 1:
            own = spec.node_types[name].memory_gib is not None
            path = ("node_types", name, "memory_gib") if own else (
                "slurm", "memory_reserve_min_gib")
            out.append(Diagnostic(
                "SPEC-MEMORY-RESERVE", f"node type '{name}' has {total:g} GiB of memory and "
                f"the OS reserve takes {reserve:g} GiB: nothing is left for jobs", path,
                hint="lower slurm.memory_reserve_min_gib or memory_reserve_percent, or give "
                     "the node type its real memory_gib"))
    return out


# The NIC role every node needs for each management network it is cabled to: each node gets
# a port and an address on both (compile/build_management.py, assign_addresses.py).
NETWORK_ROLES = (("management", "inband"), ("bmc", "bmc"))


def _network_nics(spec: ClusterSpec, resolved: dict[str, NodeTypePlan]) -> list[Diagnostic]:
    """A node type in use has an adapter for each declared management network: without one
    its nodes would still be cabled to it and given an address there."""
    used = sorted({g.node_type for g in spec.node_groups} & set(resolved))
    out = []
    for name in used:
        roles = {nic.role for nic in resolved[name].nics}
        own = spec.node_types[name].nics is not None
        for network, role in NETWORK_ROLES:
            if getattr(spec.networks, network) is None or role in roles:
                continue
            path = ("node_types", name, "nics") if own else ("node_types", name, "platform")
            out.append(Diagnostic(
                "SPEC-NIC-MISSING", f"node type '{name}' has no {role} NIC, but networks."
                f"{network} is declared: each of its nodes is cabled to that network and "
                f"given an address on it", path,
                hint=f"add {{role: {role}, model: ...}} to node_types.{name}.nics (which "
                     f"replaces the platform's list), or list only the adapters you add "
                     f"under nics_add; or leave networks.{network} out"))
    return out


def _consistency(nt: NodeTypePlan) -> list[Diagnostic]:
    out = []
    if nt.psu_count and nt.psu_required > nt.psu_count:
        out.append(Diagnostic(
            "SPEC-PSU", f"node type '{nt.name}' needs {nt.psu_required} PSUs but has only "
            f"{nt.psu_count}", (*nt.spec_path, "psus")))
    if nt.gpu_sockets and max(nt.gpu_sockets) >= nt.sockets:
        out.append(Diagnostic(
            "SPEC-NUMA", f"node type '{nt.name}' places a GPU on socket {max(nt.gpu_sockets)} "
            f"but has {nt.sockets} socket(s)", (*nt.spec_path, "cpu")))
    return out
