"""The OSSs' RAID engines from the spec: Linux md on the servers' cores, or a declared
hardware or declustered engine (plan/raid_engine.py has the formulas and sources)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, SpecPath
from cluster_iac.plan import Plan
from cluster_iac.plan.lustre import LustreServer
from cluster_iac.plan.raid_engine import Engine, declared, software
from cluster_iac.spec.storage import Lustre

BASE: SpecPath = ("storage", "lustre")


def engine_problems(lustre: Lustre) -> Iterator[Diagnostic]:
    """A hardware or declustered engine without its write figure, or a software one with
    figures (its term derives from the cores)."""
    engine, path = lustre.raid_engine, (*BASE, "raid_engine")
    if engine.kind != "software" and engine.write_gbs is None:
        yield Diagnostic("LUSTRE-RAID-ENGINE", f"a {engine.kind} RAID engine needs its "
                         f"per-server write_gbs: it replaces the software parity term of the "
                         f"write bound", (*path, "kind"),
                         hint="write_gbs: <the vendor's sustained write per server, GB/s>")
    for key in ("write_gbs", "read_gbs"):
        if engine.kind == "software" and getattr(engine, key) is not None:
            yield Diagnostic("LUSTRE-RAID-ENGINE", f"{key} is for a hardware or declustered "
                             f"engine: software RAID's term derives from the servers' cores",
                             (*path, key),
                             hint="kind: hardware (or declustered), or remove the figure (a "
                                  "measured aggregate goes in storage.lustre." + key + ")")


def server_engine(lustre: Lustre, plan: Plan, server: LustreServer) -> Engine:
    """The server's RAID engine (plan/raid_engine.py): the spec's hardware or declustered
    figures, else Linux md on the node type's cores."""
    spec = lustre.raid_engine
    if spec.kind != "software":
        return declared(spec.kind, spec.read_gbs, spec.write_gbs)
    if lustre.ost is None:  # no md arrays declared: nothing to compute parity for
        return Engine("software", None, None)
    node_type = plan.node_types[server.node_type]
    return software(node_type.cpu.arch, node_type.sockets * node_type.cores_per_socket,
                    [t.raid for t in server.targets if t.kind == "ost"])
