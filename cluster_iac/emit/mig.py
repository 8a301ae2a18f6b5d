"""mig/<node type>.yaml: the node type's MIG layout as nvidia-mig-parted applies it
(``nvidia-mig-parted apply -f mig/<type>.yaml -c <type>``), written by the YAML serializer.

mig-parted's config format (NVIDIA/mig-parted README, "version: v1"): ``mig-configs`` maps a
config name to a list of device filters, each with ``devices`` (GPU indices or 'all'),
``mig-enabled`` and ``mig-devices`` (profile -> count). Each GPU the plan partitions is listed
with its layout; GPUs left whole get ``mig-enabled: false``.
"""

from __future__ import annotations

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import NodeTypePlan, Plan


def render(plan: Plan) -> dict[str, str]:
    used = {n.node_type for n in plan.compute_nodes}
    return {f"mig/{name}.yaml": document(nt) for name, nt in sorted(plan.node_types.items())
            if nt.mig and name in used}


def document(nt: NodeTypePlan) -> str:
    layouts: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for gpu in range(nt.gpu_count):
        counts: dict[str, int] = {}
        for device in nt.mig:
            if device.gpu == gpu:
                counts[device.profile] = counts.get(device.profile, 0) + 1
        layouts.setdefault(tuple(sorted(counts.items(), key=_largest_first)), []).append(gpu)
    entries: list[dict[str, object]] = []
    for layout, gpus in layouts.items():
        entry: dict[str, object] = {"devices": gpus, "mig-enabled": bool(layout)}
        if layout:
            entry["mig-devices"] = dict(layout)
        entries.append(entry)
    header = [f"nvidia-mig-parted configuration of node type {nt.name} ({nt.gpu_name}): "
              f"nvidia-mig-parted apply -f {nt.name}.yaml -c {nt.name}", GENERATED_BY]
    return yaml_text({"version": "v1", "mig-configs": {nt.name: entries}}, header)


def _largest_first(item: tuple[str, int]) -> tuple[int, str]:
    """'7g.80gb' before '3g.40gb' before '1g.10gb' (the order the plan places them)."""
    profile = item[0]
    return -int(profile.split("g.", 1)[0]), profile
