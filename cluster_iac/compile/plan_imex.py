"""Multi-node NVLink: which domains run IMEX, on which addresses, and whether the targeted Slurm
can hand jobs their IMEX channels (switch/nvidia_imex, 24.05 and later)."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.catalog.slurm_releases import SLURM_RELEASES
from cluster_iac.plan import Plan
from cluster_iac.plan.imex import MAX_CHANNELS, ImexDomain, ImexPlan
from cluster_iac.spec import ClusterSpec

FIELD: SpecPath = ("slurm", "multi_node_nvlink")
NETWORK = "management"  # IMEX peers talk TCP over the in-band management network


def plan_imex(spec: ClusterSpec, plan: Plan) -> Plan:
    """The IMEX plan, None when no job spans nodes over NVLink; a located error when the spec
    needs multi-node NVLink jobs and the target or the networks cannot give them."""
    wanted = spec.slurm.multi_node_nvlink
    domains = [d for d in plan.nvlink_domains if d.kind == "rack"]
    if wanted is False:
        return plan
    if not domains:
        if wanted:
            raise CompileError([Diagnostic(
                "SPEC-IMEX-NO-DOMAIN", "slurm.multi_node_nvlink is true, but no compute node "
                "type has a rack-scale NVLink domain (GB200/GB300 NVL72 trays)", FIELD,
                hint="drop the key: NVLink within one node needs no IMEX")])
        return plan
    node_type = {n.hostname: n.node_type for n in plan.compute_nodes}
    types = sorted({node_type[h] for d in domains for h in d.nodes if h in node_type})
    problems = []
    release = plan.slurm.release
    if not release.nvidia_imex:
        first = next(v for v, r in SLURM_RELEASES.items() if r.nvidia_imex)
        path = FIELD if wanted else ("cluster", "slurm_version")
        problems.append(Diagnostic(
            "SLURM-IMEX", f"node type(s) {', '.join(repr(t) for t in types)} join nodes into "
            f"rack-scale NVLink domains, and a job spanning them needs an IMEX channel, which "
            f"Slurm hands out with switch/nvidia_imex from {first}: Slurm {release.version} has "
            "no such plugin", path,
            hint=f"set cluster.slurm_version to {first} or later, or slurm.multi_node_nvlink: "
                 "false to keep each job's NVLink use within one node"))
    addresses = plan.addresses.get(NETWORK)
    if addresses is None:
        problems.append(Diagnostic(
            "SPEC-IMEX-NETWORK", "multi-node NVLink needs every node's address for IMEX's "
            "nodes_config.cfg, and there is no management network", ("networks",),
            hint="add networks.management (IMEX peers connect over it)"))
    if problems:
        raise CompileError(problems)
    assert addresses is not None
    imex = ImexPlan(
        network=NETWORK,
        domains=tuple(ImexDomain(d.name, d.nodes, tuple(addresses[h] for h in d.nodes))
                      for d in domains),
        node_types=tuple(types),
        channels=MAX_CHANNELS)
    return replace(plan, imex=imex)
