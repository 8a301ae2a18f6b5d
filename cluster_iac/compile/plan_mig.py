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
from cluster_iac.catalog.slurm_releases import slurm_release
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
        release = slurm_release(spec.cluster.slurm_version)
        autodetect = node_type.gres_autodetect == "nvml"
        if autodetect and not release.mig_nvml_names:
            problems.append(Diagnostic(
                "SPEC-MIG-AUTODETECT", f"node type '{name}' has MIG layouts and "
                f"gres_autodetect: nvml, and Slurm {release.version}'s slurmd names a MIG "
                "instance from its memory in MiB (gpu_nvml.c before 23.02.6), which the "
                "catalog does not hold: slurm.conf's Gres= could not be made to match it",
                ("node_types", name, "gres_autodetect"),
                hint="set cluster.slurm_version to 23.11 or later (slurmd then takes the "
                     "profile's own name from NVML), or use gres_autodetect: off (gres.conf "
                     "then names each MIG instance's devices)"))
            continue
        prefix = (nvml_type_prefix(types[name].gpu_model, plan) if autodetect
                  else types[name].gres_type)
        devices = _devices(plan, types[name], node_type.mig, ("node_types", name, "mig"),
                           problems, prefix)
        types[name] = replace(types[name], mig=devices)
    if problems:
        raise CompileError(problems)
    return replace(plan, node_types=types)


def nvml_type_prefix(gpu_model: str | None, plan: Plan) -> str:
    """The GRES type slurmd's AutoDetect=nvml gives a MIG instance, before its profile: the
    GPU's NVML name lower-cased, spaces as '_', cut at its first '-' (gpu_nvml.c: "clearing
    everything after the first '-' ... since we are going to add a suffix here of the profile
    name"), less the 'nvidia_' prefix, which slurm.conf may leave out as Slurm matches a
    configured type as a substring of the detected one (gres.html, "MIG Management": type
    'a100_3g.20gb' for the profile 'nvidia_a100_3g.20gb'). "NVIDIA A100-SXM4-80GB" ->
    'a100', "NVIDIA H100 80GB HBM3" -> 'h100_80gb_hbm3'."""
    gpu = plan.catalog.gpus.get(gpu_model or "")
    if gpu is None:  # no GPU to partition: _devices reports it
        return ""
    name = gpu.nvml_name.lower().replace(" ", "_")
    name = name.split("-", 1)[0]
    return name.removeprefix("nvidia_")


def _devices(plan: Plan, nt: NodeTypePlan, layouts: list[MigLayout], path: SpecPath,
             problems: list[Diagnostic], prefix: str | None) -> tuple[MigDevice, ...]:
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
                out.append(MigDevice(gpu, mig.name, f"{prefix}_{mig.name}",
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
