"""`cluster-iac init`: a starting spec from a few answers, one that validates.

The answers (a GPU platform, a node count, the fabric, the racks' power) make a spec; how
many nodes a rack holds is then found by the validator itself: from what the rack's height
allows down to one node a rack, the first count whose design the checks accept (power,
cooling, rack units). Rack entries whose racks the checks reject for another reason (the
fabric's switches in too few network racks, the services' servers in too few service racks)
get one rack more. The spec is written by a YAML serializer.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.catalog import builtin_catalog
from cluster_iac.checks import run_checks
from cluster_iac.compile import compile_plan
from cluster_iac.plan.power_cap import gpu_limit_w
from cluster_iac.spec.hardware import PlatformModel
from cluster_iac.spec.parse import parse_spec

HEADER = ("Written by `cluster-iac init`: edit it, then run `cluster-iac validate` on it.\n"
          "Every key is described in the JSON Schema: `cluster-iac schema > "
          "cluster.schema.json`, then a first line\n"
          "'# yaml-language-server: $schema=cluster.schema.json' lets an editor complete and "
          "describe keys.\n`cluster-iac explain CODE` says what a finding means and how to "
          "fix it.")
LEAF = {"infiniband": "qm9700", "roce": "sn5600"}
"""Leaf switches by fabric: NVIDIA Quantum-2 QM9700 (64 x NDR 400G), Spectrum-4 SN5600
(64 x 800GbE, 128 x 400GbE)."""
ROCE_NIC = "cx7-400gbe"  # ConnectX-7 400GbE: the RoCE variant of the NDR HCA
STORAGE_HCA = "cx7-ndr"  # one NDR HCA for the storage fabric, on platforms without one
RACK_U = 42  # a standard EIA-310 rack (the spec's default height_u)
ROW_ENTRIES = ("gpu", "svc", "net")  # the rack entries of row a, in order
MAX_TRIES = 60
NVL72_TRAYS = 18  # compute trays of a GB200/GB300 NVL72 rack (NVIDIA GB200 NVL72 datasheet)
NVL72_RACK = {"height_u": 48, "cooling": "liquid"}
"""An NVL72 rack as NVIDIA's MGX rack is built (examples/gb200-nvl72.yaml): 48U, its trays
and NVLink switch trays cooled by liquid, its power shelves fed by A and B PDUs of four 63 A
circuits (eight 33 kW shelves, six inputs each)."""
NVL72_PDU: dict[str, Any] = {"layout": "ab", "circuits": 4, "breaker_a": 63, "outlets": 36}
NVL72_MAX_CIRCUITS = 8  # one cord a line: 24 shelf inputs a side on 8 three-phase circuits


class InitError(ValueError):
    """The answers make no spec that validates; carries the last findings."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or []


@dataclass
class Answers:
    """What `cluster-iac init` asks for."""

    name: str = "cluster"
    platform: str = "hgx-h100-8gpu"
    gpu: str | None = None
    nodes: int = 4
    fabric: str = "infiniband"  # infiniband, roce or none
    voltage_v: int = 415
    phases: int = 3
    breaker_a: int = 32
    lustre: bool = False
    oss: int = 2
    accounting: bool = False


def starting_spec(answers: Answers) -> str:
    """The spec's text: the answers, sized so that the checks accept the design."""
    platform = _platform(answers)
    racks = {"gpu": 0, "svc": 1, "net": 1}
    per_rack = max(1, min(answers.nodes, RACK_U // platform.height_u - 1))
    if platform.kind == "compute-tray":  # one NVLink domain a rack: its 18 trays
        per_rack = min(answers.nodes, NVL72_TRAYS)
    circuits: int = NVL72_PDU["circuits"] if platform.kind == "compute-tray" else NVL72_MAX_CIRCUITS
    for _ in range(MAX_TRIES):
        racks["gpu"] = math.ceil(answers.nodes / per_rack)
        data = spec_data(answers, platform, per_rack, racks, circuits)
        errors = _errors(data)
        if not errors:
            return _text(data)
        entries = {_entry(d) for d in errors}
        if None in entries or ("gpu" in entries and per_rack == 1):
            break  # not a matter of how many racks
        if "gpu" in entries and circuits < NVL72_MAX_CIRCUITS:
            circuits += 2  # an NVL72 rack keeps its 18 trays: its PDUs get more circuits
        elif "gpu" in entries:
            per_rack -= 1
        others = entries - {"gpu"}
        if any(racks[str(e)] >= max(4, answers.nodes) for e in others):
            break  # more racks than nodes: one device alone is too much for its rack
        for entry in others:
            racks[str(entry)] += max(1, racks[str(entry)] // 4)
    shown = "; ".join(f"{d.code} {d.message}" for d in errors[:2])
    raise InitError(f"no design of these answers passes the checks however the racks are "
                    f"filled: {shown} (a larger --breaker or --voltage, or another platform)",
                    errors)


def spec_data(answers: Answers, platform: PlatformModel, per_rack: int,
              racks: dict[str, int], circuits: int | None = None) -> dict[str, Any]:
    """The spec as data, for ``per_rack`` GPU nodes a rack and ``racks`` racks of each
    entry of the row (``circuits``: a PDU's circuits in an NVL72 rack)."""
    names = {"gpu": _hostlist("gpu", racks["gpu"]), "svc": _hostlist("svc", racks["svc"]),
             "net": _hostlist("net", racks["net"])}
    fabric = answers.fabric if answers.nodes > 1 else "none"
    digits = max(2, len(str(answers.nodes)))
    gpu_type: dict[str, Any] = {"platform": answers.platform}
    cap = power_cap_w(platform)
    if cap is not None:  # PSUs at N+1 do not carry the full draw with a feed down: the GPUs
        # are capped so that the node draws what the live PSUs carry (POWER-GPU-CAP says
        # what it costs), or, where the GPUs cannot give that up, the node
        gpu = builtin_catalog().gpus.get(answers.gpu or platform.gpu or "")
        limit = gpu_limit_w(platform.max_power_w, platform.gpu_count,
                            gpu.max_power_w if gpu else 0, cap)
        if limit is not None:
            gpu_type["gpu_power_limit_w"] = limit
        else:
            gpu_type["max_power_w"] = cap
    if answers.gpu:
        gpu_type["gpu"] = {"model": answers.gpu}
    nics = builtin_catalog().nics
    # the storage fabric is InfiniBand: Ethernet storage ports (DGX B200's ConnectX-7, B300's
    # BlueField-3; VPI cards, either link) become NDR HCAs, as the ports would be set
    ethernet_storage = answers.lustre and any(
        n.role == "storage" and nics[n.model].link != "infiniband" for n in platform.nics)
    if fabric == "roce" or ethernet_storage:  # the platform's list, adapters replaced
        gpu_type["nics"] = [{"role": n.role, "model": _nic_model(n.role, n.model, fabric,
                                                                  bool(ethernet_storage)),
                             "count": n.count} for n in platform.nics]
    if answers.lustre and not any(n.role == "storage" for n in platform.nics):
        gpu_type["nics_add"] = [{"role": "storage", "model": STORAGE_HCA}]
    node_types: dict[str, Any] = {"gpu": gpu_type, "head": {"platform": "mgmt-1u"}}
    groups: list[dict[str, Any]] = [
        {"name": "gpu", "node_type": "gpu", "count": answers.nodes,
         "hostname": "gpu" + "#" * digits, "racks": names["gpu"], "per_rack": per_rack},
        {"name": "head", "role": "controller", "node_type": "head", "count": 1,
         "hostname": "head#", "racks": names["svc"]}]
    if answers.lustre:
        node_types.update(mds={"platform": "lustre-server-2u"},
                          oss={"platform": "lustre-server-2u"})
        groups += [{"name": "mds", "role": "lustre_mds", "node_type": "mds", "count": 2,
                    "hostname": "mds#", "racks": names["svc"]},
                   {"name": "oss", "role": "lustre_oss", "node_type": "oss",
                    "count": answers.oss, "hostname": "oss##", "racks": names["svc"]}]
    data: dict[str, Any] = {
        "cluster": _cluster(answers, platform),
        "node_types": node_types,
        "node_groups": groups,
        "rows": [{"name": "a", "racks": [_rack(e, names[e], platform) for e in ROW_ENTRIES
                                         if e != "net" or _networked(answers, fabric)]}],
        "power": {"pdu_profiles": {f"{e}-pdu": _profile(answers, platform if e == "gpu"
                                                        else None, circuits)
                                   for e in ROW_ENTRIES}},
    }
    if platform.kind == "compute-tray":
        data["cooling"] = {"loops": _loops(racks["gpu"], platform, per_rack)}
    data.update(_fabrics(answers, fabric, names["net"]))
    data["networks"] = _networks(answers, fabric, racks)
    if platform.kind == "compute-tray" and "compute" in data.get("fabric", {}):
        # two NVL72 racks a scalable unit: no NVLink domain straddles two SUs
        data["fabric"]["compute"]["scalable_unit_nodes"] = 2 * NVL72_TRAYS
    if answers.lustre:
        data["storage"] = {"lustre": _lustre(answers.name)}
    data["slurm"] = {"partitions": [{"name": "gpu", "node_groups": ["gpu"], "default": True}]}
    if answers.accounting:
        data["slurm"]["accounting"] = {"storage": {"password_env": "SLURMDBD_STORAGE_PASS"}}
    return data


def _nic_model(role: str, model: str, fabric: str, ethernet_storage: bool) -> str:
    """An adapter of the platform as init lists it: the compute ones the RoCE NIC on a RoCE
    fabric, the storage ones the NDR HCA where they were Ethernet and Lustre's fabric is
    InfiniBand."""
    if role == "compute" and fabric == "roce":
        return ROCE_NIC
    if role == "storage" and ethernet_storage:
        return STORAGE_HCA
    return model


def _cluster(answers: Answers, platform: PlatformModel) -> dict[str, Any]:
    cluster: dict[str, Any] = {"name": answers.name}
    if platform.kind == "compute-tray":
        # IMEX channels for jobs across an NVLink domain: switch/nvidia_imex, Slurm 24.05
        cluster["slurm_version"] = "24.05"
    gpu = builtin_catalog().gpus.get(answers.gpu or platform.gpu or "")
    if gpu is not None and gpu.architecture == "blackwell":
        cluster["nccl_version"] = "2.25"  # NCCL 2.25.1: Blackwell/SM100 support (checks/nccl.py)
    return cluster


def _platform(answers: Answers) -> PlatformModel:
    catalog = builtin_catalog()
    usable = sorted(k for k, p in catalog.platforms.items() if _fits(p))
    platform = catalog.platforms.get(answers.platform)
    if platform is None or not _fits(platform):
        raise InitError(f"platform '{answers.platform}' is not a GPU server platform of the "
                        f"catalog; one of: {', '.join(usable)}")
    if answers.gpu is not None and answers.gpu not in catalog.gpus:
        raise InitError(f"GPU '{answers.gpu}' is not in the catalog; one of: "
                        f"{', '.join(sorted(catalog.gpus))}")
    if answers.fabric not in ("infiniband", "roce", "none"):
        raise InitError(f"fabric '{answers.fabric}': infiniband, roce or none")
    if not re.fullmatch(r"[a-z][a-z0-9_-]{0,39}", answers.name):
        raise InitError(f"name '{answers.name}': lower-case letters, digits, '_' and '-', "
                        "starting with a letter, at most 40 (Slurm's ClusterName)")
    return platform


def _fits(platform: PlatformModel) -> bool:
    """A server with GPUs, its own PSUs, air cooling and in-band and BMC adapters, or an
    NVL72 compute tray (liquid-cooled racks of 18, power shelves): what the starting spec's
    racks and networks hold. Not a cloud VM, which has no feed or BMC of its own."""
    roles = {n.role for n in platform.nics}
    if platform.kind == "compute-tray":
        return platform.gpu_count > 0 and {"inband", "bmc"} <= roles
    return (platform.kind == "server" and platform.gpu_count > 0 and platform.psus is not None
            and platform.cooling != "liquid" and {"inband", "bmc"} <= roles)


def _networked(answers: Answers, fabric: str) -> bool:
    return fabric != "none" or answers.lustre


def _hostlist(prefix: str, count: int) -> str:
    digits = max(1, len(str(count))) if prefix != "gpu" else max(2, len(str(count)))
    return (f"{prefix}{1:0{digits}d}" if count == 1
            else f"{prefix}[{1:0{digits}d}-{count:0{digits}d}]")


def _rack(entry: str, names: str, platform: PlatformModel) -> dict[str, Any]:
    rack: dict[str, Any] = {"names": names, "pdu": f"{entry}-pdu"}
    if entry == "gpu" and platform.kind == "compute-tray":
        rack.update(NVL72_RACK, liquid_capacity_kw=_tray_rack_kw(platform))
    return rack


def _tray_rack_kw(platform: PlatformModel) -> int:
    """The rack's liquid capacity: its trays' draw plus the nine NVLink switch trays (GB300
    NVL72: 18 x 6.46 + 9 x 2.86 = 142 kW), rounded up to 10 kW (what a CDU's rack port is
    sold in); the validator judges it against the rack's load."""
    return 10 * math.ceil((NVL72_TRAYS * platform.max_power_w + 9 * 2860) / 10000)


def _loops(gpu_racks: int, platform: PlatformModel, per_rack: int) -> list[dict[str, Any]]:
    """One in-row CDU a pair of NVL72 racks on a PG25 loop, 30 C supply, 10 K rise, with N+1
    pumps; flow and capacity for the pair's racks (as examples/gb200-nvl72.yaml)."""
    loops: list[dict[str, Any]] = []
    for first in range(1, gpu_racks + 1, 2):
        last = min(first + 1, gpu_racks)
        racks = f"gpu{first:02d}" if first == last else f"gpu[{first:02d}-{last:02d}]"
        kw = (last - first + 1) * _tray_rack_kw(platform)
        # flow = P / (rho c_p dT): PG25 ~1.02 kg/l x 3.9 kJ/kg K x 10 K = 39.8 kW per l/s
        lpm = 10 * math.ceil(kw / 39.8 * 60 * 1.05 / 10)
        loops.append({"name": f"cdu{len(loops) + 1}", "racks": racks, "coolant": "pg25",
                      "flow_lpm": lpm, "supply_c": 30, "return_c": 40,
                      "cdu_capacity_kw": kw, "pumps": {"count": 2, "required": 1}})
    return loops


def _profile(answers: Answers, platform: PlatformModel | None,
             circuits: int | None = None) -> dict[str, Any]:
    """Three PDUs where losing one of two would leave a GPU server fewer PSUs than it
    requires (4+2 supplies: any two of three feeds keep four live), else an A/B pair; an
    NVL72 rack's A/B PDUs of four 63 A circuits."""
    if platform is not None and platform.kind == "compute-tray":
        return {**NVL72_PDU, "circuits": circuits or NVL72_PDU["circuits"],
                "voltage_v": answers.voltage_v, "phases": answers.phases,
                "breaker_a": max(answers.breaker_a, NVL72_PDU["breaker_a"])}
    psus = platform.psus if platform is not None else None
    layout = "three" if psus is not None and _live(psus.count, 2) < psus.required else "ab"
    return {"layout": layout, "voltage_v": answers.voltage_v, "phases": answers.phases,
            "breaker_a": answers.breaker_a}


def _live(psus: int, pdus: int) -> int:
    """PSUs still fed with the PDU down that holds the most of them (cords round-robin over
    the rack's PDUs, compile/build_power.py): psus - ceil(psus / pdus)."""
    return psus - -(-psus // pdus)


def power_cap_w(platform: PlatformModel) -> int | None:
    """The draw the GPU server is capped at so that it survives one of its three PDUs down,
    where its PSUs do not carry the full draw then (5+1 supplies, DGX/HGX B200 and DGX B300:
    4 live x 3.3 kW = 13.2 kW of 14.3 kW): live PSUs x rating. None where no cap is needed."""
    psus = platform.psus
    if psus is None or _live(psus.count, 3) >= psus.required:
        return None
    return int(_live(psus.count, 3) * psus.rating_w)


def _fabrics(answers: Answers, fabric: str, net_racks: str) -> dict[str, Any]:
    fabrics: dict[str, Any] = {}
    if fabric != "none":
        fabrics["compute"] = {"technology": fabric, "leaf_switch": LEAF[fabric],
                              "racks": net_racks}
    if answers.lustre:
        fabrics["storage"] = {"technology": "infiniband", "leaf_switch": LEAF["infiniband"],
                              "racks": net_racks}
    return {"fabric": fabrics} if fabrics else {}


def _networks(answers: Answers, fabric: str, racks: dict[str, int]) -> dict[str, Any]:
    """Subnets large enough for every pool: the management and BMC networks give compute
    nodes half the subnet and each other pool a sixteenth or an eighth
    (compile/assign_addresses.py), so 32 addresses a device is ample."""
    devices = answers.nodes + 3 + answers.oss + 4 * sum(racks.values())
    prefix = max(10, min(22, 32 - max(10, math.ceil(math.log2(32 * devices)))))
    nets: dict[str, Any] = {"management": {"cidr": f"10.0.0.0/{prefix}"},
                            "bmc": {"cidr": f"10.64.0.0/{prefix}"}}
    if fabric == "infiniband":
        nets["ipoib"] = {"cidr": f"10.128.0.0/{prefix}", "interface": "ib0"}
    if answers.lustre:
        nets["storage"] = {"cidr": f"10.192.0.0/{prefix}", "interface": "ibs0"}
    return nets


def _lustre(name: str) -> dict[str, Any]:
    """Two MDS and the OSS on the catalog's 24-bay NVMe server: RAID 10 MDTs, two RAID 6
    8+2 OSTs a server (20 of its 24 bays)."""
    return {"fsname": re.sub(r"[^A-Za-z0-9]", "", name)[:8] or "lustre",
            "mds_group": "mds", "oss_group": "oss",
            "mdt": {"drive": "kioxia-cm6-r-3tb", "drives": 4, "raid": "raid10"},
            "osts_per_oss": 2,
            "ost": {"drive": "samsung-pm1653-15tb", "drives": 10, "raid": "raid6"}}


def _errors(data: dict[str, Any]) -> list[Diagnostic]:
    try:
        plan = compile_plan(parse_spec(data))
        found = [f for f in run_checks(plan) if f.is_error]
        if not found:
            plan.cables  # noqa: B018  # a design that cannot be cabled is rejected too
        return found
    except CompileError as exc:
        return list(exc.diagnostics)


def _entry(diag: Diagnostic) -> str | None:
    """Which rack entry of the row a finding is about: by its rack entry's path, or by the
    PDU profile of that entry."""
    path = diag.path
    if path[:3] == ("rows", 0, "racks") and len(path) > 3 and isinstance(path[3], int):
        return ROW_ENTRIES[path[3]] if path[3] < len(ROW_ENTRIES) else None
    if path[:2] == ("power", "pdu_profiles") and len(path) > 2:
        return str(path[2]).removesuffix("-pdu")
    if path[:1] == ("node_groups",) and len(path) > 1 and path[1] == 0:
        return "gpu"
    return None


def _text(data: dict[str, Any]) -> str:
    yaml = YAML()  # round-trip: the header comment is part of the document
    yaml.default_flow_style = None  # short lists and mappings on one line
    yaml.width = 100
    document = CommentedMap(data)
    document.yaml_set_start_comment(HEADER)
    stream = io.StringIO()
    yaml.dump(document, stream)
    return stream.getvalue()
