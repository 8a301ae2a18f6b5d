"""MIG: each node type's layouts checked against its GPU's profiles and slices, and placed."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.catalog.mig import (
    COMPUTE_SLICES,
    MEMORY_SLICES,
    gpu_instance_id,
    mig_profiles,
    place,
)
from cluster_iac.plan import NodeTypePlan, Plan
from cluster_iac.plan.mig import MigDevice
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.nodes import MigLayout


def plan_mig(spec: ClusterSpec, plan: Plan) -> Plan:
    """Node types with MIG layouts get their MIG devices; a profile the GPU lacks, a layout
    that does not fit, or a GPU index named twice or beyond the node is a located error."""
    problems: list[Diagnostic] = []
    types = dict(plan.node_types)
    for name, node_type in sorted(spec.node_types.items()):
        if not node_type.mig or name not in types:
            continue
        if node_type.gres_autodetect == "nvml":
            problems.append(Diagnostic(
                "SPEC-MIG-AUTODETECT", f"node type '{name}' has MIG layouts and "
                "gres_autodetect: nvml: the MIG GRES types slurmd's NVML would report are not "
                "derived here, so slurm.conf's Gres= could not be made to match them",
                ("node_types", name, "gres_autodetect"),
                hint="use gres_autodetect: off (gres.conf then names each MIG instance's "
                     "devices, checked by the health check)"))
            continue
        devices = _devices(plan, types[name], node_type.mig, ("node_types", name, "mig"),
                           problems)
        types[name] = replace(types[name], mig=devices)
    if problems:
        raise CompileError(problems)
    return replace(plan, node_types=types)


def _devices(plan: Plan, nt: NodeTypePlan, layouts: list[MigLayout], path: SpecPath,
             problems: list[Diagnostic]) -> tuple[MigDevice, ...]:
    table = mig_profiles(plan.catalog.gpus.get(nt.gpu_model or ""))
    if table is None or not nt.gpu_count:
        problems.append(Diagnostic(
            "SPEC-MIG-GPU", f"node type '{nt.name}' has "
            + (f"{nt.gpu_name}, whose MIG profiles the catalog does not know"
               if nt.gpu_count else "no GPUs to partition"), path,
            hint="MIG layouts are known for " + ", ".join(
                sorted(key for key, gpu in plan.catalog.gpus.items() if gpu.mig_gb))
            + " (a catalog GPU's mig_gb)"))
        return ()
    out: list[MigDevice] = []
    named = _gpus(nt, layouts, path, problems)
    for i, layout in enumerate(layouts):
        here: SpecPath = (*path, i, "profiles")
        unknown = [(j, p) for j, p in enumerate(layout.profiles) if p not in table]
        for j, profile in unknown:
            problems.append(Diagnostic(
                "SPEC-MIG-PROFILE", f"{nt.gpu_name} has no MIG profile '{profile}'",
                (*here, j), hint=did_you_mean(profile, table)))
        if unknown:
            continue
        profiles = [table[p] for p in layout.profiles]
        starts = place(profiles)
        if starts is None:
            compute = sum(p.compute for p in profiles)
            memory = sum(p.memory for p in profiles)
            problems.append(Diagnostic(
                "SPEC-MIG-FIT", f"{' + '.join(layout.profiles)} does not fit one "
                f"{nt.gpu_name}: {compute} of {COMPUTE_SLICES} compute slices and {memory} of "
                f"{MEMORY_SLICES} memory slices, "
                + ("too many" if compute > COMPUTE_SLICES or memory > MEMORY_SLICES else
                   "and no placement of them on the slice grid (1g on slices 0-6, 2g at 0/2/4, "
                   "3g at 0/4, 4g and 7g at 0)"), here,
                hint="see NVIDIA's MIG user guide, 'Supported MIG Profiles'"))
            continue
        placed = sorted(zip(profiles, starts, strict=True), key=lambda ps: ps[1])
        for gpu in named[i]:
            for mig, start in placed:
                out.append(MigDevice(gpu, mig.name, f"{nt.gres_type}_{mig.name}",
                                     gpu_instance_id(mig.memory, start), start,
                                     mig.compute, mig.memory_gb))
    return tuple(sorted(out, key=lambda d: (d.gpu, d.start)))


def _gpus(nt: NodeTypePlan, layouts: list[MigLayout], path: SpecPath,
          problems: list[Diagnostic]) -> list[list[int]]:
    """The GPUs of each layout: its own, or 'all' the others leave."""
    taken: dict[int, int] = {}
    for i, layout in enumerate(layouts):
        if layout.gpus == "all":
            continue
        for j, gpu in enumerate(layout.gpus):
            where: SpecPath = (*path, i, "gpus", j)
            if gpu >= nt.gpu_count:
                problems.append(Diagnostic(
                    "SPEC-MIG-GPU", f"node type '{nt.name}' has GPUs 0-{nt.gpu_count - 1}, "
                    f"not {gpu}", where))
            elif gpu in taken:
                problems.append(Diagnostic(
                    "SPEC-MIG-GPU", f"GPU {gpu} of node type '{nt.name}' is in MIG layouts "
                    f"{taken[gpu]} and {i}", where))
            else:
                taken[gpu] = i
    rest = [g for g in range(nt.gpu_count) if g not in taken]
    alls = [i for i, layout in enumerate(layouts) if layout.gpus == "all"]
    for i in alls[1:]:
        problems.append(Diagnostic(
            "SPEC-MIG-GPU", f"node type '{nt.name}' has two MIG layouts for 'all' GPUs",
            (*path, i, "gpus")))
    return [rest if layout.gpus == "all" else [g for g in layout.gpus if taken.get(g) == i]
            for i, layout in enumerate(layouts)]
