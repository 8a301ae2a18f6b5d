"""Exporter configurations the rules depend on: snmp_exporter's PDU module, dcgm-exporter's
counters.

snmp.yml is in the format of snmp_exporter up to 0.22 (Debian 12 ships 0.21), in which a module
holds its own SNMP version and auth; 0.23 moved auth to a top-level 'auths' section. It sets no
community: the exporter's default ('public') applies until the operator adds 'auth', which is a
secret and no part of the spec.
"""

from __future__ import annotations

from cluster_iac.formats.csv import csv_records

SNMP_MODULE = "sentry4"
# ServerTech Sentry4-MIB (Sentry4.mib, revision 2017-06-15; OIDs as in its OID tree): real power
# of each input cord, RMS current of each line of each cord and of each branch (breaker pole),
# and real power of each outlet (what `cluster-iac reconcile` reads against the plan's cords).
SENTRY4 = "1.3.6.1.4.1.1718.4.1"
SNMP_METRICS = (
    ("st4InputCordActivePower", f"{SENTRY4}.3.3.1.3",
     "Measured real power of the input cord (W; Sentry4-MIB st4InputCordActivePower).",
     ("st4UnitIndex", "st4InputCordIndex")),
    ("st4LineCurrent", f"{SENTRY4}.4.3.1.3",
     "Measured RMS current on the input cord line (hundredths of an ampere; Sentry4-MIB "
     "st4LineCurrent).",
     ("st4UnitIndex", "st4InputCordIndex", "st4LineIndex")),
    ("st4BranchCurrent", f"{SENTRY4}.7.3.1.3",
     "Measured RMS current on the branch (hundredths of an ampere; Sentry4-MIB "
     "st4BranchCurrent).",
     ("st4UnitIndex", "st4InputCordIndex", "st4BranchIndex")),
    ("st4OutletActivePower", f"{SENTRY4}.8.3.1.7",
     "Measured real power of the outlet (W; Sentry4-MIB st4OutletActivePower).",
     ("st4UnitIndex", "st4InputCordIndex", "st4OutletIndex")),
)

# dcgm-exporter's collectors file (-f): the fields every rule reads, and power and utilisation.
# Its stock default-counters.csv leaves ECC, NVLink error and violation fields commented out.
# (DCGM field, Prometheus type, help); names as in DCGM's dcgm_fields.h.
DCGM_COUNTERS = (
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_GPU_MAX_OP_TEMP", "gauge", "Maximum operating temperature of the GPU (in C)."),
    ("DCGM_FI_DEV_SLOWDOWN_TEMP", "gauge", "Hardware slowdown temperature of the GPU (in C)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_MEM_MAX_OP_TEMP", "gauge", "Maximum operating temperature of the memory (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter",
     "Throttling duration due to thermal constraints."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
     "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink flow-control CRC errors."),
    ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink data CRC errors."),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink recovery errors."),
)


def snmp_config() -> dict[str, object]:
    """snmp.yml: one module that walks the Sentry4 columns the power rules and reconcile
    read."""
    metrics = [{"name": name, "oid": oid, "type": "gauge", "help": help_text,
                "indexes": [{"labelname": index, "type": "gauge"} for index in indexes]}
               for name, oid, help_text, indexes in SNMP_METRICS]
    module = {"walk": [oid for _, oid, _, _ in SNMP_METRICS], "metrics": metrics, "version": 2}
    return {SNMP_MODULE: module}


def dcgm_counters() -> str:
    """dcgm-exporter's collectors CSV: '#' comment lines, then field, type, help per line."""
    return csv_records(DCGM_COUNTERS, comments=(
        "dcgm-exporter collectors (dcgm-exporter -f this-file), by cluster-iac: the DCGM",
        "fields the alert rules read. Format: DCGM field, Prometheus metric type, help message."))
