"""NCCL files per GPU node type: nccl.conf, the same as an env file, and the topology XML."""

from __future__ import annotations

import shlex

from cluster_iac.emit.base import render_template
from cluster_iac.emit.nccl_topo import topology_xml
from cluster_iac.plan import Plan


def render(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for name, env in sorted(plan.nccl.items()):
        # nccl.conf carries no comments: NCCL before 2.26.2 would read '# ...' as a variable.
        files[f"nccl/{name}.nccl.conf"] = render_template("nccl/nccl.conf.j2",
                                                          settings=env.settings)
        settings = [{"name": s.name, "quoted": shlex.quote(s.value), "reason": s.reason}
                    for s in env.settings]
        files[f"nccl/{name}.env"] = render_template("nccl/nccl.env.j2", node_type=name,
                                                    settings=settings)
        nt = plan.node_types[name]
        if nt.pcie is not None:
            files[f"nccl/{name}.topo.xml"] = topology_xml(nt)
    return files
