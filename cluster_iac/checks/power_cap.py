"""A GPU power cap below what the catalog gives the GPU (POWER-GPU-CAP): the power it saves
and the speed it costs (plan/power_cap.py's prediction, with its sources)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.power_cap import cap_effects, effect_text


@check("power.gpu_cap")
def gpu_cap(plan: Plan) -> Iterator[Diagnostic]:
    """A warning per node type whose gpu_power_limit_w is below its GPU's catalog maximum:
    its jobs run slower than the GPU's figures (and the busbw and goodput predictions, which
    take full speed) say."""
    for e in cap_effects(plan):
        yield Diagnostic(
            "POWER-GPU-CAP",
            f"node type {e.node_type}: {effect_text(e)}",
            ("node_types", e.node_type, "gpu_power_limit_w"), Severity.WARNING,
            hint=f"gpu_power_limit_w: {e.gpu_max_w} (the GPU's maximum), or no cap, runs at full "
                 f"speed where the racks' feeds carry the node's {e.platform_w} W; or accept "
                 f"the slowdown: policy: {{levels: {{POWER-GPU-CAP: info}}}}",
            details={"measured": e.limit_w, "limit": e.gpu_max_w, "unit": "W",
                     "speed": round(e.speed, 4)})
