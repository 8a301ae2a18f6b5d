"""mig/<node type>.yaml and mig/<node type>.override.conf: the node type's MIG layout as
nvidia-mig-parted applies it, and the systemd drop-in that selects it at every boot.

mig-parted's config format (NVIDIA/mig-parted README, "version: v1"): ``mig-configs`` maps a
config name to a list of device filters, each with ``devices`` (GPU indices or 'all'),
``mig-enabled`` and ``mig-devices`` (profile -> count). Each GPU the plan partitions is listed
with its layout; GPUs left whole get ``mig-enabled: false``. Written by the YAML serializer.

At boot nvidia-mig-manager.service runs /etc/nvidia-mig-manager/service.sh, which applies the
config named by ``MIG_PARTED_SELECTED_CONFIG`` from ``MIG_PARTED_CONFIG_FILE`` and stops when
the first is unset; the package's own drop-in
(/etc/systemd/system/nvidia-mig-manager.service.d/override.conf) sets it to 'all-disabled'
(NVIDIA/mig-parted deployments/systemd: README, override.conf, service.sh). Since 2025 the
service regenerates /etc/nvidia-mig-manager/config.yaml from the hardware at every boot ("To use
a custom config, set MIG_PARTED_CONFIG_FILE"), so the layout goes to a file of its own
(``CONFIG_FILE``) and the drop-in, which replaces the package's, names both.
"""

from __future__ import annotations

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import NodeTypePlan, Plan

CONFIG_FILE = "/etc/nvidia-mig-manager/cluster-iac.yaml"
DROP_IN = "/etc/systemd/system/nvidia-mig-manager.service.d/override.conf"


def render(plan: Plan) -> dict[str, str]:
    used = {n.node_type for n in plan.compute_nodes}
    files: dict[str, str] = {}
    for name, nt in sorted(plan.node_types.items()):
        if nt.mig and name in used:
            files[f"mig/{name}.yaml"] = document(nt)
            files[f"mig/{name}.override.conf"] = drop_in(nt)
    return files


def drop_in(nt: NodeTypePlan) -> str:
    """The systemd drop-in that has nvidia-mig-manager apply this node type's layout at boot
    (it takes effect at the next boot, or after ``systemctl daemon-reload`` and a restart of
    the service)."""
    lines = [f"# {DROP_IN} on the nodes of node type {nt.name}: nvidia-mig-manager applies "
             f"the MIG layout '{nt.name}' of {CONFIG_FILE} at every boot.",
             f"# {GENERATED_BY}",
             "[Service]",
             f'Environment="MIG_PARTED_CONFIG_FILE={CONFIG_FILE}"',
             f'Environment="MIG_PARTED_SELECTED_CONFIG={nt.name}"']
    return "\n".join(lines) + "\n"


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
              f"nvidia-mig-parted apply -f {nt.name}.yaml -c {nt.name} (installed as "
              f"{CONFIG_FILE}, selected at boot by mig/{nt.name}.override.conf)", GENERATED_BY]
    return yaml_text({"version": "v1", "mig-configs": {nt.name: entries}}, header)


def _largest_first(item: tuple[str, int]) -> tuple[int, str]:
    """'7g.80gb' before '3g.40gb' before '1g.10gb' (the order the plan places them)."""
    profile = item[0]
    return -int(profile.split("g.", 1)[0]), profile
