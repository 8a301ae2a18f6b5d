"""InfiniBand alerts: switch ports (infiniband_exporter), host ports (node_exporter), and a
fabric that shows fewer switches than the plan built.

Counters are the IBTA PortCounters attribute (InfiniBand Architecture Specification vol. 1,
performance management): a healthy link counts no link-down, link-error-recovery, symbol or
receive error, so every error alert fires on the first new one; the window says how long it
stays visible.
"""

from __future__ import annotations

from cluster_iac.emit.monitoring.promql import AlertRule, selector
from cluster_iac.emit.monitoring.targets import exporter_fabrics
from cluster_iac.plan import Plan

SWITCH_JOB = "infiniband"
NODE_JOB = "node"
EXPORTER = "treydock/infiniband_exporter"
IBTA = "IBTA PortCounters (InfiniBand Architecture Specification vol. 1, performance management)"
# (alert, IBTA counter, infiniband_exporter metric, node_exporter metric, window, severity)
COUNTERS = (
    ("LinkDowned", "LinkDownedCounter", "infiniband_switch_port_link_downed_total",
     "node_infiniband_link_downed_total", "10m", "critical"),
    ("LinkErrorRecovery", "LinkErrorRecoveryCounter",
     "infiniband_switch_port_link_error_recovery_total",
     "node_infiniband_link_error_recovery_total", "10m", "warning"),
    ("ReceiveErrors", "PortRcvErrors", "infiniband_switch_port_receive_errors_total",
     "node_infiniband_port_errors_received_total", "1h", "warning"),
    ("SymbolErrors", "SymbolErrorCounter", "infiniband_switch_port_symbol_error_total",
     None, "1h", "warning"),
)


def rule_groups(plan: Plan) -> list[tuple[str, list[AlertRule]]]:
    if not exporter_fabrics(plan):
        return []
    return [("infiniband-switches", switch_rules() + inventory_rules(plan)),
            ("infiniband-hosts", host_rules())]


def switch_rules() -> list[AlertRule]:
    """Each switch port's error counters, named by the switch (infiniband_switch_info)."""
    info = selector("infiniband_switch_info", job=SWITCH_JOB)
    rules = []
    for name, counter, metric, _, window, severity in COUNTERS:
        grows = f"increase({selector(metric, job=SWITCH_JOB)}[{window}]) > 0"
        rules.append(AlertRule(
            f"IbSwitchPort{name}",
            f"({grows}) * on (instance, guid) group_left (switch) {info}", severity,
            f"{counter} of {{{{ $labels.switch }}}} port {{{{ $labels.port }}}} "
            f"({{{{ $labels.fabric }}}} fabric) grew by {{{{ $value }}}} in {window}",
            f"0: any new {counter}", f"{IBTA}; {EXPORTER} {metric}"))
    return rules


def host_rules() -> list[AlertRule]:
    """The same counters on the hosts' own HCA ports (node_exporter's infiniband collector)."""
    rules = []
    for name, counter, _, metric, window, severity in COUNTERS:
        if metric is None:  # node_exporter 1.5 (Debian 12) has no symbol error counter
            continue
        rules.append(AlertRule(
            f"IbHostPort{name}",
            f"increase({selector(metric, job=NODE_JOB)}[{window}]) > 0", severity,
            f"{counter} of {{{{ $labels.instance }}}} {{{{ $labels.device }}}} port "
            f"{{{{ $labels.port }}}} grew by {{{{ $value }}}} in {window}",
            f"0: any new {counter}", f"{IBTA}; node_exporter {metric}"))
    return rules


def inventory_rules(plan: Plan) -> list[AlertRule]:
    """A fabric whose exporter sees fewer switches than the plan built (a switch is down or
    cut off from the subnet manager)."""
    rules = []
    for name, fabric in exporter_fabrics(plan):
        switches = sum(fabric.switch_counts.values())
        info = selector("infiniband_switch_info", job=SWITCH_JOB, fabric=name)
        # with no switch in sight count() returns nothing: the answering exporter counts 0
        up = selector("up", job=SWITCH_JOB, fabric=name)
        seen = f"(count by (fabric) ({info}) or 0 * max by (fabric) ({up} == 1))"
        rules.append(AlertRule(
            "IbFabricMissingSwitches", f"{seen} < {switches}", "critical",
            f"the {name} fabric shows {{{{ $value }}}} of the {switches} switch(es) "
            "planned",
            f"{switches} switch(es): the {name} fabric as planned (fabric.{name})",
            f"fabric.{name} (plan.fabrics switch_counts); {EXPORTER} "
            "infiniband_switch_info, one series per switch", "10m", {"fabric": name}))
    return rules
