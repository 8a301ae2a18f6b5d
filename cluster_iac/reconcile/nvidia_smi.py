"""`nvidia-smi -q -x` (a node's GPUs as the driver sees them) against the plan: the GPU
model and count of the node's type, and, for NVL72 racks, the NVLink domain.

Each <gpu> holds <product_name> and, from driver 550 on, <fabric> with <clusterUuid> and
<cliqueId> (N/A off a multi-node NVLink system). Trays of one NVLink domain share a
ClusterUUID and CliqueId; a tray whose pair is another planned domain's is cabled into
that domain, and its IMEX nodes file no longer matches.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import node_type, place

KIND = "nvidia-smi"


class Gpu(NamedTuple):
    """One GPU: its product name and NVLink fabric identity ('' where N/A)."""

    product: str
    cluster_uuid: str
    clique_id: str


def detect(text: str) -> bool:
    """An `nvidia-smi -q -x` output: its root element."""
    return "<nvidia_smi_log" in text[:4096]


def read(text: str) -> list[Gpu]:
    """The GPUs of the file; an entity declaration (which could expand without bound) or
    XML that does not parse is refused at its line."""
    if "<!ENTITY" in text:
        raise ReadError(text[:text.index("<!ENTITY")].count("\n") + 1,
                        "entity declarations are refused")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ReadError(exc.position[0], f"not XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise ReadError(1, f"the root element is <{root.tag}>, not <nvidia_smi_log>")
    return [Gpu((gpu.findtext("product_name") or "").strip(), _known(gpu, "fabric/clusterUuid"),
                _known(gpu, "fabric/cliqueId")) for gpu in root.iter("gpu")]


def _known(gpu: ET.Element, path: str) -> str:
    value = (gpu.findtext(path) or "").strip()
    return "" if value in ("", "N/A") else value


def host(data: list[Gpu]) -> str:
    """nvidia-smi names no host: the file's name does."""
    return ""


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """GPU model and count per node, then NVLink domains across the trays."""
    for item in found:
        yield from _gpus(plan, item)
    yield from _domains(plan, found)


def _model_word(name: str) -> str:
    """The word that names a GPU model ('H100' of 'NVIDIA H100 80GB HBM3')."""
    return next((w for w in re.split(r"[\s-]+", name.upper()) if re.search(r"\d", w)), name)


def _gpus(plan: Plan, item: Discovery) -> Iterator[Finding]:
    nt = node_type(plan, item.host)
    where = place(plan, item.host)
    if nt is None:
        yield Finding("RECONCILE-UNKNOWN-HOST", where, "nvidia-smi ran on a node the plan "
                      "does not have", "name the file after a planned node ('HOST.xml')",
                      str(item.path))
        return
    gpus: list[Gpu] = item.data
    if len(gpus) != nt.gpu_count:
        yield Finding("RECONCILE-GPU-COUNT", where, f"nvidia-smi shows {len(gpus)} GPUs where "
                      f"node type {nt.name} has {nt.gpu_count}",
                      "reseat or replace the missing GPU (or its baseboard) before the node "
                      "joins Slurm: gres.conf and slurm.conf's Gres say "
                      f"{nt.gpu_count}", str(item.path))
    want = _model_word(nt.gpu_name or nt.gpu_model or "")
    wrong = sorted({g.product for g in gpus if want not in g.product.upper()})
    if nt.gpu_count and wrong:
        yield Finding("RECONCILE-GPU-MODEL", where, f"GPU model {', '.join(wrong)} where "
                      f"node type {nt.name} has {nt.gpu_name}",
                      "swap the tray or board for the planned model, or change the node type",
                      str(item.path))


def _domains(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """A tray whose (ClusterUUID, CliqueId) is the one most trays of another planned
    domain report is in that domain."""
    reported = {item.host: item for item in found
                if any(g.cluster_uuid for g in item.data)}
    domain_of = {node: d.name for d in plan.nvlink_domains if d.kind == "rack"
                 for node in d.nodes}
    votes: dict[str, Counter[tuple[str, str]]] = {}
    for host, item in reported.items():
        if host in domain_of:
            votes.setdefault(domain_of[host], Counter())[_identity(item.data)] += 1
    owner = {ident: name for name, counted in votes.items()
             for ident, n in counted.items() if n * 2 > sum(counted.values())}
    for host, item in sorted(reported.items()):
        planned, ident = domain_of.get(host), _identity(item.data)
        actual = owner.get(ident)
        if planned is None or actual == planned:
            continue
        said = f"ClusterUUID {ident[0]} CliqueId {ident[1]}"
        yield Finding("RECONCILE-NVLINK-DOMAIN", place(plan, host),
                      f"this tray belongs to domain {actual}" if actual else
                      f"this tray reports {said}, which no majority of domain {planned} shares",
                      f"the plan puts it in NVLink domain {planned}: recable its NVLink "
                      f"cartridges to {planned}'s switch trays (IMEX's nodes file for "
                      f"{planned} lists it; the IMEX daemons refuse a node outside the "
                      "domain)", str(item.path))


def _identity(gpus: list[Gpu]) -> tuple[str, str]:
    """The tray's (ClusterUUID, CliqueId): the one most of its GPUs report."""
    counted = Counter((g.cluster_uuid, g.clique_id) for g in gpus if g.cluster_uuid)
    return counted.most_common(1)[0][0]
