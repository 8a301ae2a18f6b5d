"""report.md's Lustre hardware and liquid-loop figures: each term, the bound, and the formulas."""

from __future__ import annotations

from typing import Any

from cluster_iac.plan import Plan
from cluster_iac.plan.cooling import loop_figures
from cluster_iac.plan.lustre import Bandwidth
from cluster_iac.plan.raid_engine import MIB, PARITY_MIBS_PER_CORE, SOURCE


def _gbs(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _direction(name: str, bw: Bandwidth) -> dict[str, str]:
    return {"name": name, "drives": _gbs(bw.drives) if bw.drives is not None else "not declared",
            "raid": (f"{bw.raid:.1f} ({bw.engine})" if bw.raid is not None
                     else f"not a limit ({bw.engine})"),
            "server": _gbs(bw.server_nics), "client": _gbs(bw.client_nics),
            "fabric": _gbs(bw.fabric), "bound": _gbs(bw.bound), "limit": bw.limit,
            "measured": f"{bw.claimed:g}" if bw.claimed else "-", "used": _gbs(bw.effective)}


def lustre_hardware(plan: Plan) -> dict[str, Any] | None:
    """Servers, targets, LNet and bandwidth of the Lustre file system (None without one)."""
    lustre = plan.lustre
    hw = lustre.hardware if lustre is not None else None
    if hw is None:
        return None
    kinds: dict[tuple[str, str], list[Any]] = {}
    for target in hw.targets:
        kinds.setdefault((target.kind, target.raid), []).append(target)
    targets = []
    for (kind, raid), items in sorted(kinds.items()):
        first = items[0]
        drives = (f"{len(first.members)} x {first.drive}" +
                  (f" + {len(first.spares)} spares" if first.spares else "")
                  if first.members else "not declared")
        targets.append({"kind": kind.upper(), "count": str(len(items)), "raid": raid,
                        "drives": drives, "chunk": f"{first.chunk_kib}" if first.chunk_kib
                        else "-", "read": _gbs(first.read_gbs), "write": _gbs(first.write_gbs),
                        "tb": f"{first.capacity_tb:.2f}"})
    return {
        "servers": str(len(hw.servers)), "net": hw.lnet.net, "network": hw.lnet.network,
        "ip_network": hw.lnet.ip_network, "mgs": ", ".join(hw.lnet.mgs_nids) or "-",
        "clients": str(len(hw.lnet.clients)), "targets": targets,
        "directions": [_direction("read", hw.read), _direction("write", hw.write)],
        "parity_per_core": _parity_per_core(),
        "capacity": f"{hw.capacity_tb:.1f}" if hw.capacity_tb is not None else "-",
        "raw": f"{hw.raw_tb:.1f}" if hw.raw_tb is not None else "-"}


def _parity_per_core() -> str:
    """The per-core parity rates the software term uses, with their source."""
    rates = ", ".join(f"{arch} {mibs * MIB / 1e9:.1f} GB/s" for arch, mibs in
                      sorted(PARITY_MIBS_PER_CORE.items()))
    return f"{rates}; other architectures: not derived; {SOURCE}"


def loops(plan: Plan) -> list[dict[str, str]]:
    """Each liquid loop's heat, what its flow carries, with one pump down, and its CDU."""
    out = []
    for fig in loop_figures(plan):
        limit = min(fig.one_pump_down_kw, fig.cdu_kw or fig.flow_kw)
        out.append({
            "name": fig.name, "racks": ", ".join(fig.racks), "coolant": fig.coolant,
            "flow": f"{fig.flow_lpm:g}", "temps": f"{fig.mean_c - fig.rise_k / 2:g}/"
            f"{fig.mean_c + fig.rise_k / 2:g}", "density": f"{fig.density:.1f}",
            "cp": f"{fig.cp:.3f}", "carries": f"{fig.flow_kw:.1f}",
            "one_down": f"{fig.one_pump_down_kw:.1f}",
            "cdu": f"{fig.cdu_kw:g}" if fig.cdu_kw else "-", "heat": f"{fig.heat_kw:.1f}",
            "margin": f"{limit - fig.heat_kw:.1f}"})
    return out
