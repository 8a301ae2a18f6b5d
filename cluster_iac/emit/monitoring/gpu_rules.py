"""GPU alerts on dcgm-exporter's DCGM_FI_* fields: temperature, throttling, ECC, Xid, NVLink,
and a node that shows fewer GPUs than its node type has."""

from __future__ import annotations

from cluster_iac.emit.monitoring.promql import AlertRule, one_of, selector
from cluster_iac.plan import Plan

JOB = "dcgm"
DCGM_FIELDS = "DCGM dcgm_fields.h"
NVML_THRESHOLDS = ("NVML nvmlTemperatureThresholds_t: the GPU's own limits from its VBIOS, "
                   "read through DCGM")
XID_CATALOG = "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"
# Xids that need the GPU reset or serviced (NVIDIA Xid catalog): 48 double-bit ECC, 63/64 row
# remapping pending/failed, 74 NVLink error, 79 fell off the bus, 92 high single-bit ECC rate,
# 94/95 contained/uncontained ECC error.
SERVICE_XIDS = (48, 63, 64, 74, 79, 92, 94, 95)


def rule_groups(plan: Plan) -> list[tuple[str, list[AlertRule]]]:
    gpu_types = sorted(t for t, nt in plan.node_types.items() if nt.gpu_count > 0
                       and any(n.node_type == t for n in plan.nodes))
    if not gpu_types:
        return []
    nvlink_types = [t for t in gpu_types if plan.node_types[t].gpu_nvlink_gbs > 0]
    health = temperature_rules() + error_rules() + nvlink_rules(nvlink_types)
    return [("gpu-health", health), ("gpu-inventory", missing_gpu_rules(plan, gpu_types))]


def _dcgm(field: str, **labels: str | tuple[str, str]) -> str:
    return selector(field, job=JOB, **labels)


def temperature_rules() -> list[AlertRule]:
    """Each GPU against the thresholds it reports itself, so every model and firmware is
    judged by its vendor's figure; a GPU that reports none is named, not silently passed."""
    def at_or_above(value: str, limit: str) -> str:
        # group_left keeps the reading's labels (with on() alone only instance and gpu stay)
        return f"{_dcgm(value)} >= on (instance, gpu) group_left {_dcgm(limit)}"

    return [
        AlertRule("GpuTemperatureAboveMaxOperating",
                  at_or_above("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_MAX_OP_TEMP"),
                  "warning", "GPU {{ $labels.gpu }} of {{ $labels.instance }} is at "
                  "{{ $value }} C, at or above its maximum operating temperature",
                  "the GPU's DCGM_FI_DEV_GPU_MAX_OP_TEMP (NVML_TEMPERATURE_THRESHOLD_GPU_MAX: "
                  "above it the GPU may run below base clock)", NVML_THRESHOLDS, "5m"),
        AlertRule("GpuTemperatureAtSlowdown",
                  at_or_above("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SLOWDOWN_TEMP"),
                  "critical", "GPU {{ $labels.gpu }} of {{ $labels.instance }} is at "
                  "{{ $value }} C, at its hardware slowdown temperature",
                  "the GPU's DCGM_FI_DEV_SLOWDOWN_TEMP (NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: "
                  "the hardware halves its clocks)", NVML_THRESHOLDS, "1m"),
        AlertRule("GpuMemoryTemperatureAboveMaxOperating",
                  at_or_above("DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_MEM_MAX_OP_TEMP"),
                  "warning", "HBM of GPU {{ $labels.gpu }} of {{ $labels.instance }} is at "
                  "{{ $value }} C, at or above its maximum operating temperature",
                  "the GPU's DCGM_FI_DEV_MEM_MAX_OP_TEMP (NVML_TEMPERATURE_THRESHOLD_MEM_MAX: "
                  "software slowdown of the memory)", NVML_THRESHOLDS, "5m"),
        AlertRule("GpuTemperatureLimitUnreported",
                  f"{_dcgm('DCGM_FI_DEV_GPU_TEMP')} unless on (instance, gpu) "
                  f"{_dcgm('DCGM_FI_DEV_GPU_MAX_OP_TEMP')}",
                  "warning", "GPU {{ $labels.gpu }} of {{ $labels.instance }} reports no maximum "
                  "operating temperature: its temperature alerts cannot fire",
                  "presence of DCGM_FI_DEV_GPU_MAX_OP_TEMP (dcgm-counters.csv collects it)",
                  NVML_THRESHOLDS, "1h"),
        AlertRule("GpuThermalThrottling",
                  f"rate({_dcgm('DCGM_FI_DEV_THERMAL_VIOLATION')}[5m]) > 0",
                  "warning", "GPU {{ $labels.gpu }} of {{ $labels.instance }} is throttling its "
                  "clocks for temperature",
                  "0: any time spent in thermal violation (the counter only grows while the "
                  "GPU is held below its clocks for temperature)",
                  f"{DCGM_FIELDS} DCGM_FI_DEV_THERMAL_VIOLATION", "10m"),
    ]


def error_rules() -> list[AlertRule]:
    """Uncorrectable memory errors and Xid events: each one counts, so the threshold is one."""
    service = " or ".join(f"{_dcgm('DCGM_FI_DEV_XID_ERRORS')} == {x}" for x in SERVICE_XIDS)
    return [
        AlertRule("GpuDoubleBitEccError",
                  f"increase({_dcgm('DCGM_FI_DEV_ECC_DBE_VOL_TOTAL')}[10m]) > 0",
                  "critical", "GPU {{ $labels.gpu }} of {{ $labels.instance }} had an "
                  "uncorrectable (double-bit) ECC error",
                  "0: any new uncorrectable ECC error", f"{DCGM_FIELDS} "
                  "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL; NVIDIA dynamic page retirement guide"),
        AlertRule("GpuRowRemapFailure", f"{_dcgm('DCGM_FI_DEV_ROW_REMAP_FAILURE')} > 0",
                  "critical", "GPU {{ $labels.gpu }} of {{ $labels.instance }} could not remap "
                  "a failing HBM row: replace the GPU",
                  "0: the field is 1 once a remap failed", f"{DCGM_FIELDS} "
                  "DCGM_FI_DEV_ROW_REMAP_FAILURE; NVIDIA A100/H100 row remapping guide"),
        AlertRule("GpuUncorrectableRowRemapped",
                  f"increase({_dcgm('DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS')}[1h]) > 0",
                  "warning", "GPU {{ $labels.gpu }} of {{ $labels.instance }} remapped a row "
                  "after an uncorrectable error: reset the GPU to apply it",
                  "0: any new remapped row", f"{DCGM_FIELDS} "
                  "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS; NVIDIA row remapping guide"),
        AlertRule("GpuXidError", f"{_dcgm('DCGM_FI_DEV_XID_ERRORS')} > 0", "warning",
                  "GPU {{ $labels.gpu }} of {{ $labels.instance }} reported Xid {{ $value }}",
                  "0: the field holds the last Xid the driver reported",
                  f"{DCGM_FIELDS} DCGM_FI_DEV_XID_ERRORS; {XID_CATALOG}"),
        AlertRule("GpuXidNeedsService", service, "critical",
                  "GPU {{ $labels.gpu }} of {{ $labels.instance }} reported Xid {{ $value }}, "
                  "which needs a GPU reset or service",
                  "Xids " + ", ".join(map(str, SERVICE_XIDS)), XID_CATALOG),
    ]


def nvlink_rules(node_types: list[str]) -> list[AlertRule]:
    """NVLink link errors on node types whose GPUs have NVLink."""
    if not node_types:
        return []
    where = {"node_type": one_of(node_types)}

    def grows(field: str, window: str) -> str:
        return f"increase({_dcgm(field, **where)}[{window}]) > 0"

    return [
        AlertRule("GpuNvlinkRecoveryError",
                  grows("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "10m"), "critical",
                  "an NVLink of GPU {{ $labels.gpu }} on {{ $labels.instance }} failed and "
                  "was recovered", "0: any link recovery",
                  f"{DCGM_FIELDS} DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
        AlertRule("GpuNvlinkCrcErrors",
                  f"{grows('DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL', '1h')} or "
                  f"{grows('DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL', '1h')}",
                  "warning", "NVLink CRC errors on GPU {{ $labels.gpu }} of {{ $labels.instance }}",
                  "0: any CRC error in an hour (a clean link counts none)",
                  f"{DCGM_FIELDS} DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, "
                  "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
        AlertRule("GpuNvlinkReplayErrors",
                  grows("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "1h"), "warning",
                  "NVLink replays on GPU {{ $labels.gpu }} of {{ $labels.instance }}",
                  "0: any replay in an hour",
                  f"{DCGM_FIELDS} DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
    ]


def missing_gpu_rules(plan: Plan, node_types: list[str]) -> list[AlertRule]:
    """A node whose dcgm-exporter answers but lists fewer GPUs than its node type has (a GPU
    fell off the bus, or the driver did not bring it up); zero GPUs counts too."""
    rules = []
    for name in node_types:
        expected = plan.node_types[name].gpu_count
        labels = "instance, node_type, rack, row"
        gpus = f"count by ({labels}) ({_dcgm('DCGM_FI_DEV_GPU_TEMP', node_type=name)})"
        up = f"0 * max by ({labels}) ({selector('up', job=JOB, node_type=name)} == 1)"
        rules.append(AlertRule(
            "NodeMissingGpus", f"({gpus} or {up}) < {expected}", "critical",
            f"{{{{ $labels.instance }}}} shows {{{{ $value }}}} of the {expected} GPUs of node "
            f"type {name}",
            f"{expected} GPUs: node type {name}'s gpu_count",
            f"node_types.{name} (its platform's gpu_count, or the spec's gpu.count); "
            "one DCGM_FI_DEV_GPU_TEMP series per GPU", "10m", {"node_type": name}))
    return rules
