"""What the monitoring files must say, worked out from the example specs and the catalog files
themselves (not from the plan or the emitter), and readers for the rendered files."""

from __future__ import annotations

import json
import math
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from ClusterShell.NodeSet import NodeSet
from ruamel.yaml import YAML

from cluster_iac.render import Build, build
from tests.conftest import ROOT, example_build

# PduProfile's documented defaults (README, schemas/cluster.schema.json) and the policy's 80 %.
PROFILE_DEFAULTS = {"layout": "ab", "circuits": 1, "voltage_v": 415, "phases": 3,
                    "breaker_a": 32, "rated_100_percent": False, "power_factor": 0.95}
SIDES = {"single": 1, "ab": 2, "three": 3}
THRESHOLD = re.compile(r"[<>]=? (-?[0-9.]+)$")


# Designs beside the examples: name -> (example, change). The case: a 32 A, 415 V
# three-phase PDU rated for 100 %, whose inlet rating the spec states.
VARIANTS = {
    "minimal-32a-100pct": ("minimal", {"rated_100_percent": True, "inlet_a": 32}),
}
CASES = [*sorted(p.stem for p in (ROOT / "examples").glob("*.yaml")), *VARIANTS]


@cache
def spec(name: str) -> dict[str, Any]:
    base, change = VARIANTS.get(name, (name, {}))
    data = YAML(typ="safe", pure=True).load((ROOT / "examples" / f"{base}.yaml").read_text())
    for profile in data["power"]["pdu_profiles"].values():
        profile.update(change)
    return data  # type: ignore[no-any-return]


@cache
def build_of(name: str) -> Build:
    """An example's build, or a variant's, built from its spec written to a temporary file."""
    if name not in VARIANTS:
        return example_build(name)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.yaml"
        with path.open("w") as handle:
            YAML(typ="safe", pure=True).dump(spec(name), handle)
        return build(path)


def inlet_limit_a(name: str, profile_name: str) -> float | None:
    """The inlet's continuous current where the spec states its rating (inlet_a)."""
    inlet = spec(name)["power"]["pdu_profiles"][profile_name].get("inlet_a")
    return None if inlet is None else inlet * continuous_share(name, profile_name)


def pdu_limit_w(name: str, profile_name: str) -> float:
    """A PDU's continuous power: circuits x each circuit's."""
    return profile(name, profile_name)["circuits"] * circuit_limit_w(name, profile_name)


@cache
def platforms() -> dict[str, Any]:
    text = (ROOT / "cluster_iac" / "catalog" / "platforms.yaml").read_text()
    return YAML(typ="safe", pure=True).load(text)


def profile(name: str, profile_name: str) -> dict[str, Any]:
    return {**PROFILE_DEFAULTS, **spec(name)["power"]["pdu_profiles"][profile_name]}


def continuous_share(name: str, profile_name: str) -> float:
    """1.0 for a breaker rated for continuous duty, else the policy's percent (NEC's 80 %)."""
    if profile(name, profile_name)["rated_100_percent"]:
        return 1.0
    return spec(name).get("policy", {}).get("breaker_continuous_percent", 80) / 100


def circuit_limit_w(name: str, profile_name: str) -> float:
    """P = sqrt(3) V_LL I PF (three phase) or V I PF (single phase), times the continuous share."""
    p = profile(name, profile_name)
    root = math.sqrt(3) if p["phases"] == 3 else 1.0
    return (root * p["voltage_v"] * p["breaker_a"] * p["power_factor"]
            * continuous_share(name, profile_name))


def line_limit_a(name: str, profile_name: str) -> float:
    return profile(name, profile_name)["breaker_a"] * continuous_share(name, profile_name)


def surviving_w(name: str, profile_name: str) -> float:
    """What a rack's PDUs carry with one PDU lost: (sides - 1) x circuits x circuit limit."""
    p = profile(name, profile_name)
    return (SIDES[p["layout"]] - 1) * p["circuits"] * circuit_limit_w(name, profile_name)


def racks(name: str) -> dict[str, dict[str, Any]]:
    """Rack name -> its row, PDU profile and budget (kW or None), from the spec's rows."""
    found = {}
    for row in spec(name)["rows"]:
        for group in row["racks"]:
            for rack in NodeSet(group["names"]):
                found[rack] = {"row": row["name"], "pdu": group["pdu"],
                               "max_power_kw": group.get("max_power_kw")}
    return found


def gpu_count(name: str, node_type: str) -> int:
    """A node type's GPUs: the spec's gpu.count override, else its platform's gpu_count."""
    entry = spec(name)["node_types"][node_type]
    override = (entry.get("gpu") or {}).get("count")
    return override if override is not None else platforms()[entry["platform"]].get("gpu_count", 0)


@cache
def gpus() -> dict[str, Any]:
    return YAML(typ="safe", pure=True).load((ROOT / "cluster_iac" / "catalog" / "gpus.yaml")
                                            .read_text())


def has_nvlink(name: str, node_type: str) -> bool:
    """Whether a node type's GPU model has NVLink (gpus.yaml nvlink_gbs, via its platform)."""
    entry = spec(name)["node_types"][node_type]
    model = (entry.get("gpu") or {}).get("model") or platforms()[entry["platform"]].get("gpu")
    return bool(model) and gpus()[model].get("nvlink_gbs", 0) > 0


def monitoring_files(name: str) -> dict[str, str]:
    return {path.removeprefix("monitoring/"): text
            for path, text in build_of(name).files.items()
            if path.startswith("monitoring/")}


def write_tree(name: str, folder: Path) -> Path:
    """The rendered monitoring/ folder of an example, written under ``folder``."""
    root = folder / "monitoring"
    for path, text in monitoring_files(name).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def targets(name: str, job: str) -> list[dict[str, Any]]:
    return json.loads(monitoring_files(name).get(f"targets/{job}.json", "[]"))


def rules(name: str) -> list[dict[str, Any]]:
    """Every alerting rule of every rule file."""
    loader = YAML(typ="safe", pure=True)
    found = []
    for path, text in sorted(monitoring_files(name).items()):
        if path.startswith("rules/"):
            for group in loader.load(text)["groups"]:
                found += group["rules"]
    return found


def rules_named(name: str, alert: str) -> list[dict[str, Any]]:
    return [r for r in rules(name) if r["alert"] == alert]


def threshold(rule: dict[str, Any]) -> float:
    """The figure a rule compares with: the number its expression ends on."""
    match = THRESHOLD.search(rule["expr"])
    assert match, rule["expr"]
    return float(match.group(1))


def racks_selected(expr: str, racks: dict[str, dict[str, Any]]) -> list[str]:
    """The racks an expression's rack=~ or row=~ matcher selects."""
    match = re.search(r'(rack|row)=~"([^"]+)"', expr)
    assert match, expr
    pattern = re.compile(match.group(2).replace("\\\\", "\\"))
    key = match.group(1)
    return [r for r, v in racks.items() if pattern.fullmatch(r if key == "rack" else v["row"])]
