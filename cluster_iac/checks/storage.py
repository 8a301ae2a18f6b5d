"""Storage checks: measured figures within the hardware's, read per GPU, checkpoint overhead."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.checkpoint import storage_figures

if TYPE_CHECKING:  # plan/lustre.py loads only for a spec with Lustre (tests/test_startup.py)
    from cluster_iac.plan.lustre import Bandwidth

# A planned interval this many times the Daly optimum (or its inverse) wastes noticeably more
# time than the optimum: the expected loss ~ delta/T + T/(2M) is flat near the optimum, and
# at 2x or 0.5x it is 25 % above the minimum.
INTERVAL_TOLERANCE = 2.0


@check("storage.read_bandwidth")
def read_bandwidth(plan: Plan) -> Iterator[Diagnostic]:
    """Aggregate Lustre read bandwidth shared by every GPU meets workload.read_gbs_per_gpu."""
    fig = storage_figures(plan)
    if fig.need_gbs_per_gpu is None:
        return
    if fig.read_gbs is None:
        yield Diagnostic(
            "STORAGE-READ", f"the workload needs {fig.need_gbs_per_gpu:g} GB/s per GPU but the "
            f"spec declares no Lustre file system", ("workload", "read_gbs_per_gpu"))
        return
    got = fig.read_gbs_per_gpu or 0.0
    if got < fig.need_gbs_per_gpu:
        need_total = fig.need_gbs_per_gpu * fig.gpus
        yield Diagnostic(
            "STORAGE-READ",
            f"Lustre reads {fig.read_gbs:.1f} GB/s for {fig.gpus} GPUs = {got:.3f} GB/s per GPU, "
            f"{100 * got / fig.need_gbs_per_gpu:.0f}% of the workload's "
            f"{fig.need_gbs_per_gpu:g} GB/s per GPU; short by {need_total - fig.read_gbs:.1f} "
            f"GB/s in aggregate", ("workload", "read_gbs_per_gpu"),
            details={"measured": round(got, 4), "limit": fig.need_gbs_per_gpu, "unit": "GB/s"})


@check("storage.checkpoint_overhead")
def checkpoint_overhead(plan: Plan) -> Iterator[Diagnostic]:
    """Writing a checkpoint (size / write bandwidth) takes at most
    policy.max_checkpoint_overhead of the checkpoint interval."""
    fig = storage_figures(plan)
    limit = plan.settings.policy.max_checkpoint_overhead
    if fig.overhead is None or fig.write_s is None or fig.interval_min is None:
        return
    if fig.overhead > limit:
        yield Diagnostic(
            "STORAGE-CHECKPOINT",
            f"a {fig.checkpoint_size_gb:g} GB checkpoint at {fig.write_gbs:.1f} GB/s takes "
            f"{fig.write_s:.0f} s, {100 * fig.overhead:.1f}% of the {fig.interval_min:g} min "
            f"interval; the policy allows {100 * limit:.0f}% "
            f"({limit * fig.interval_min * 60:.0f} s), over by "
            f"{fig.write_s - limit * fig.interval_min * 60:.0f} s",
            _write_path(plan),
            details={"measured": round(fig.overhead, 4), "limit": limit, "unit": "ratio"})


@check("storage.checkpoint_interval")
def checkpoint_interval(plan: Plan) -> Iterator[Diagnostic]:
    """The planned interval is within a factor of two of the Daly optimum (Young beside it)."""
    fig = storage_figures(plan)
    if fig.interval_min is None or fig.daly_min is None or fig.young_min is None:
        return
    ratio = fig.interval_min / fig.daly_min
    if 1 / INTERVAL_TOLERANCE <= ratio <= INTERVAL_TOLERANCE:
        return
    yield Diagnostic(
        "STORAGE-CHECKPOINT-INTERVAL",
        f"checkpoint interval {fig.interval_min:g} min is {ratio:.1f}x the optimum: "
        f"Daly {fig.daly_min:.1f} min, Young {fig.young_min:.1f} min, for a {fig.write_s:.0f} s "
        f"write and an MTTF of {fig.job_mtbf_h:.2f} h (the largest job, {fig.job_gpus:,} GPUs of "
        f"partition {fig.job_partition})",
        ("workload", "checkpoint_interval_min"), Severity.WARNING,
        details={"measured": fig.interval_min, "limit": round(fig.daly_min, 2), "unit": "min"})


@check("storage.bandwidth_claims")
def bandwidth_claims(plan: Plan) -> Iterator[Diagnostic]:
    """A measured read_gbs or write_gbs may not exceed the bound derived from the drives, the
    servers' NICs, the fabric and the clients' NICs: it can only narrow it."""
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    if hardware is None:
        return
    for bw in (hardware.read, hardware.write):
        if bw.claimed is None or bw.claimed <= bw.bound * (1 + 1e-9):
            continue
        yield Diagnostic(
            "STORAGE-BANDWIDTH-CLAIM",
            f"{bw.spec_key} {bw.claimed:g} GB/s is more than the hardware can move, "
            f"{bw.bound:.1f} GB/s (limited by the {bw.limit}: "
            f"{_terms(bw)})", ("storage", "lustre", bw.spec_key),
            hint="a measured figure can only be at most the derived bound: check the drives, "
                 "RAID, server and client NICs, or correct the figure",
            details={"measured": bw.claimed, "limit": round(bw.bound, 3), "unit": "GB/s"})


@check("storage.raid_engine")
def raid_engine(plan: Plan) -> Iterator[Diagnostic]:
    """A note (STORAGE-RAID-ENGINE) where the OSSs' RAID engine sets a derived bound: the
    servers' parity work, not their drives or network, is what limits that direction."""
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    if hardware is None:
        return
    for bw in (hardware.read, hardware.write):
        if bw.limit != "RAID engine" or bw.raid is None:
            continue
        software = bw.engine.startswith("software")
        yield Diagnostic(
            "STORAGE-RAID-ENGINE",
            f"the Lustre {bw.spec_key.removesuffix('_gbs')} bound, {bw.bound:.1f} GB/s, is set "
            f"by the OSSs' RAID engine ({bw.engine}), below the other terms: {_terms(bw)}",
            ("storage", "lustre", "raid_engine") if not software else ("storage", "lustre", "ost"),
            Severity.INFO,
            hint=("Linux md computes each RAID 5/6 array's parity on one core: more OSTs per "
                  "OSS (smaller groups) spread it over more cores; or declare a hardware or "
                  "declustered engine in storage.lustre.raid_engine with its figures"
                  if software else "the declared engine's figures set it: check them "
                  "against the vendor's"),
            details={"measured": round(bw.raid, 3), "limit": round(min(
                v for v in (bw.drives, bw.server_nics, bw.client_nics, bw.fabric)
                if v is not None), 3), "unit": "GB/s"})


def _terms(bw: Bandwidth) -> str:
    parts = [f"drives {bw.drives:.1f}" if bw.drives is not None else "drives not declared",
             f"RAID engine ({bw.engine}) {bw.raid:.1f}" if bw.raid is not None
             else f"RAID engine ({bw.engine}) not a limit",
             f"server NICs {bw.server_nics:.1f}", f"client NICs {bw.client_nics:.1f}"]
    if bw.fabric is not None:
        parts.append(f"fabric {bw.fabric:.1f}")
    return ", ".join(parts) + " GB/s"


@check("storage.capacity_claim")
def capacity_claim(plan: Plan) -> Iterator[Diagnostic]:
    """A stated usable capacity may not exceed what the OSTs' data drives hold."""
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    claimed = plan.settings.storage.lustre.capacity_tb if plan.settings.storage.lustre else None
    if hardware is None or hardware.capacity_tb is None or claimed is None:
        return
    if claimed > hardware.capacity_tb * (1 + 1e-9):
        yield Diagnostic(
            "STORAGE-CAPACITY-CLAIM",
            f"capacity_tb {claimed:g} TB is more than the OSTs' data drives hold: "
            f"{hardware.capacity_tb:.1f} TB usable ({hardware.raw_tb:.1f} TB raw)",
            ("storage", "lustre", "capacity_tb"),
            details={"measured": claimed, "limit": round(hardware.capacity_tb, 3), "unit": "TB"})


def _write_path(plan: Plan) -> tuple[str, ...]:
    """Where the write bandwidth comes from: the measured figure, else the OSTs' drives."""
    lustre = plan.settings.storage.lustre
    if lustre is not None and lustre.write_gbs is not None:
        return ("storage", "lustre", "write_gbs")
    if lustre is not None and lustre.ost is not None:
        return ("storage", "lustre", "ost")
    return ("storage", "lustre")
