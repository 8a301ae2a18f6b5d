"""Plan each GPU node's RoCE NICs on a routed Ethernet fabric (plan/host_rails.py): their
/31s, leaves, routing tables and rules, as one table in the plan (``Plan.rails``).

The table is read by four emitters: the nodes' cloud-init network-config (emit/cloud_init.py),
the inventory's ``roce_rails`` (emit/ansible.py), the playbook's rails play (emit/playbook.py)
and the host QoS scripts (emit/qos.py). Each made it again from the leaves' ports before, some
0.1 s apiece at 100,000 GPUs; now it is made once. Only emitters read it and it finds no error,
so it is one of compile.EMIT_ONLY's passes: validate and a current folder's commands skip it.
"""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.plan import Plan
from cluster_iac.plan.host_rails import host_rails
from cluster_iac.spec import ClusterSpec


def plan_host_rails(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.rails: each Ethernet fabric with routed host ports -> each host on it -> its NICs
    on it by rail (host_rails); a fabric without any is left out."""
    rails = {network: found
             for network in sorted({c.fabric for c in plan.switch_configs.values()})
             if (found := host_rails(plan, network))}
    return replace(plan, rails=rails) if rails else plan
