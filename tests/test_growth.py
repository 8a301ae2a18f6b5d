"""Growing a cluster changes only what is new: adding a rack, or a scalable unit, to an example
changes only the output lines that name the new devices, their cables and ports, and totals.

Every output file of the smaller and the larger design is diffed line by line:
- a removed or rewritten line must be a total: the same line with other numbers in it (a
  count, a sum, a folded hostlist such as dgx-[001-127]) that names no device and no cable,
  or in a table of loads (facility, report, bill of materials) the same row with its new
  figures (or the same line with a comma, in JSON, where a new entry now follows it); an
  IP address is not a figure, so a line whose address changed is never a total;
- a block of added lines must name something new: a device, a rack, a cable id, or a
  device,port pair of a new cable (a leaf's newly cabled port).
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections import Counter
from dataclasses import replace
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.base.hostlist import expand
from cluster_iac.render import Build, build
from tests.conftest import ROOT
from tests.svg_shapes import device_boxes

_TOKEN = re.compile(r"[A-Za-z0-9_./-]+")
_DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")  # 1,016 is one figure
# An address is an identity, not a figure: a line whose address changed is never a total.
_ADDRESS = re.compile(r"\d+\.\d+\.\d+\.\d+(/\d+)?")


def _shape(line: str) -> str:
    """The line with its figures blanked and its addresses kept."""
    parts = _ADDRESS.split(line)
    addresses = [m.group() for m in _ADDRESS.finditer(line)]
    text = [_DIGITS.sub("#", part) for part in parts[::2]]  # split also returns the groups
    return "".join(t + a for t, a in zip(text, [*addresses, ""], strict=True))


def _example(name: str) -> dict[str, Any]:
    yaml = YAML(typ="safe")
    data: dict[str, Any] = yaml.load((ROOT / "examples" / f"{name}.yaml").read_text())
    return data


def _build(data: dict[str, Any], tmp_path: Path, name: str) -> Build:
    path = tmp_path / f"{name}.yaml"
    with path.open("w") as handle:
        YAML(typ="safe").dump(data, handle)
    return build(path)


def _names(result: Build) -> dict[str, set[str]]:
    plan = result.plan
    cables = plan.cables
    return {
        "devices": {d.name for d in plan.devices} | {r.name for r in plan.racks},
        "cables": set(cables.cable_id),
        "ports": {f"{dev},{port}" for dev, port in zip(
            cables.a_device + cables.b_device, cables.a_port + cables.b_port, strict=True)},
    }


def _named(line: str) -> set[str]:
    """The line's words, and the names its folded hostlists stand for."""
    tokens = set(_TOKEN.findall(_HOSTLIST.sub(" ", line)))
    # a DNS name (dns/*.zone's PTR data, 'host-bmc.domain.') names the device of its first
    # label, less the network's suffix (plan/boot.py HOST_SUFFIX)
    labels = {token.split(".", 1)[0] for token in tokens if token.endswith(".")}
    tokens |= labels | {re.sub(r"-(bmc|ib|stor)$", "", label) for label in labels}
    # a path names the device of one of its folders (cloud-init/hosts/<host>/meta-data)
    tokens |= {part for token in tokens if "/" in token for part in token.split("/")}
    return tokens | {name for hosts in _HOSTLIST.findall(line) for name in expand(hosts)}


def _names_new(line: str, new: dict[str, set[str]]) -> bool:
    tokens = _named(line)
    if tokens & (new["devices"] | new["cables"]):
        return True
    return any(ref in line for ref in _refs_in(line, new["ports"]))


_HOSTLIST = re.compile(r"[A-Za-z0-9_.-]*(?:\[[0-9,-]+\][A-Za-z0-9_.-]*)+")


def _refs_in(line: str, refs: set[str]) -> list[str]:
    parts = line.split(",")
    pairs = {f"{a},{b}" for a, b in zip(parts, parts[1:], strict=False)}
    return [p for p in pairs if p in refs]


# Documents of loads and counts per rack, PDU, row and cluster: new devices change their
# numbers, and such a line is a total even where it names an existing rack or PDU.
# The drawings say each rack's load and each feed's current, and report.html is report.md: their
# lines too; that no drawn device moves is checked apart (_unmoved).
TOTALS = ("facility/", "report.md", "cabling/bom", "report.html", "drawings/")
# Pages whose rows are ordered by their figures (pdu_breakers.md lists the lines nearest their
# limit first), each with the table that has every row: a row whose current changes moves, so a
# row the diff shows removed is read against every line of the new page, not only the lines the
# diff puts in its place; and a row may leave the listing, lines nearer their limit taking its
# place, while the table still has it as it was (_left_ranking).
RANKED = {"facility/pdu_breakers.md": "facility/pdu_breakers.csv"}
# Drawings of a fabric as a whole: a scalable unit more is a box more, the others' boxes
# narrower, so they are not diffed line by line (tests/test_drawings.py checks their counts).
SUMMARIES = ("drawings/fabric-", "drawings/nvlink.svg")


def _is_total(old: str, new_lines: list[str], existing: set[str], totals: bool) -> bool:
    """Another line that differs only in its numbers (in a totals document, or naming no
    existing device or cable); or the same line with a JSON comma after it, now that an entry
    follows it."""
    if old + "," in new_lines:
        return True
    if totals and any(_row_key(line) == _row_key(old) for line in new_lines):
        return True  # the same row of a table of loads, with its new figures
    if not totals and set(_TOKEN.findall(old)) & existing:
        return False
    shape = _shape(old)
    return any(_shape(line) == shape for line in new_lines)


_FINDING = re.compile(r"^(?:\| |<tr><td>)(error|warning|info)(?: \| |</td><td>)([A-Z0-9-]+)"
                      r"(?: \| |</td><td>).*(?:`([^`]*)` \||<code>([^<]*)</code></td></tr>)$")


def _row_key(line: str) -> tuple[str, ...]:
    """The first cells of a CSV, Markdown or HTML table row: which rack, PDU or breaker it is;
    for a drawing's tooltip, what it is the tooltip of (its text up to the first ':'); for a
    row of report's findings, its severity, code and spec path (a finding of a PDU profile
    names its worst rack, which a device added to another rack may change)."""
    finding = _FINDING.match(line)
    if finding:
        return ("finding", finding[1], finding[2], finding[3] or finding[4])
    if line.lstrip().startswith("<title>") and ":" in line:
        return ("title", line.split(":", 1)[0])
    if line.startswith("<tr>"):  # report.html: the cells between the tags
        cells = [c for c in re.split(r"</?t[dhr][^>]*>", line) if c]
    else:
        cells = [c.strip() for c in re.split(r"[,|]", line)]
    key = []
    for cell in cells:
        if _DIGITS.fullmatch(cell):
            break
        key.append(cell)
    return tuple(key) if len([k for k in key if k]) >= 2 else (line,)


def _grew(old: str, new_lines: list[str], new: dict[str, set[str]]) -> bool:
    """A line that now also names new devices (a breaker that feeds them too): an added line
    names something new and keeps every name of the old line."""
    words = {t for t in _named(old) if re.search("[A-Za-z]", t)}
    return any(_names_new(line, new) and words <= _named(line) for line in new_lines)


_PART = re.compile(r"^(netbox/[a-z_]+)(?:-\d{3,}|/[^/]+/(?:[a-z]+-)?\d{3,})\.csv$")


def _tables(files: dict[str, str]) -> dict[str, str]:
    """The files, a NetBox table's parts (netbox/cables/<row>/power-001.csv, racks-001.csv
    ...) joined into the one table they are cut from: a part boundary moves when rows are
    added before it, the rows do not."""
    joined: dict[str, str] = {}
    for path in sorted(files):
        match = _PART.match(path)
        if match is None:
            joined[path] = files[path]
            continue
        table = f"{match[1]}.csv"
        head, _, body = files[path].partition("\n")
        joined[table] = joined.get(table, head + "\n") + body
    return joined


def _symbol_users(text: str, devices: set[str]) -> dict[str, list[tuple[str, bool]]]:
    """Each symbol of an elevation: the racks that use it, each with whether it names one of
    ``devices`` (a rack's group names its rack and each of its devices)."""
    users: dict[str, list[tuple[str, bool]]] = {}
    for group in re.finditer(r'<g data-rack="([^"]+)"[^>]*>(.*?)</g>', text, re.S):
        named = {group[1], *re.findall(r'data-device="([^"]+)"', group[2])}
        for used in re.findall(r'<use href="#([^"]+)"', group[2]):
            users.setdefault(used, []).append((group[1], bool(named & devices)))
    return users


def _symbol_lines(text: str, ids: set[str]) -> set[str]:
    lines: set[str] = set()
    for symbol in re.finditer(r'<symbol id="([^"]+)".*?</symbol>', text, re.S):
        if symbol[1] in ids:
            first, *rest = symbol[0].splitlines()
            lines |= {"  " + first, *rest}
    return lines


def _uses(text: str, racks: set[str]) -> set[str]:
    """The lines of ``racks``' uses of symbols in an elevation."""
    return {line for group in re.finditer(r'<g data-rack="([^"]+)"[^>]*>.*?</g>', text, re.S)
            if group[1] in racks
            for line in group[0].splitlines() if line.lstrip().startswith("<use href=")}


def _grown(text: str, devices: set[str]) -> set[str]:
    """The racks of an elevation that name one of ``devices`` (or are one)."""
    return {rack for used in _symbol_users(text, devices).values() for rack, new in used if new}


def _new_shapes(text: str, devices: set[str]) -> set[str]:
    """The lines of the elevation's symbols that only rack faces with a new device (or of a
    new rack: ``devices`` holds the new racks' names) use, and those racks' uses: a rack
    face's shapes, drawn once as a symbol (emit/elevations.py), name no device; the face's
    labels do."""
    users = _symbol_users(text, devices)
    return _uses(text, _grown(text, devices)) | _symbol_lines(
        text, {symbol for symbol, used in users.items() if all(new for _, new in used)})


def _dropped_shapes(old: str, text: str, devices: set[str]) -> set[str]:
    """The lines of the old elevation's symbols that only racks which now hold a new device
    used, and those racks' uses of them: such a rack's face changed, so it uses another
    symbol (ids are the faces' digests), and the old one, if no other rack uses it, is gone."""
    grown = _grown(text, devices)
    users = _symbol_users(old, set())
    return _uses(old, grown) | _symbol_lines(old, {symbol for symbol, used in users.items()
                                                   if all(rack in grown for rack, _ in used)})


def _left_ranking(path: str, row: str, files: dict[str, str]) -> bool:
    """A row of a ranked page (pdu_breakers.md's tightest lines: rack, PDU, breaker, line,
    outlets, PSUs, normal A, single failures, worst A, limit A, %, verdict) that its full
    table (pdu_breakers.csv) still has with the same cords and currents: it left the
    listing, the line itself did not change."""
    if path not in RANKED:
        return False
    cells = [cell.strip() for cell in row.strip("|").split(" | ")]
    if len(cells) != 12:
        return False
    wanted = (*cells[:7], *cells[8:11])
    columns = ("rack", "pdu", "breaker", "line", "outlets", "psus", "normal_a", "worst_a",
               "limit_a", "worst_pct")
    table = csv.DictReader(io.StringIO(files.get(RANKED[path], "")))
    return any(tuple(map(found.get, columns)) == wanted for found in table)


def _unexpected(small: Build, large: Build) -> list[str]:
    small = replace(small, files=_tables(small.files))
    large = replace(large, files=_tables(large.files))
    before, after = _names(small), _names(large)
    new = {key: after[key] - before[key] for key in after}
    racks = {r.name for r in small.plan.racks}
    existing = (before["devices"] - racks) | before["cables"]
    problems = []
    assert set(small.files) <= set(large.files)
    for path in sorted(large.files):
        if path.startswith(SUMMARIES):
            continue
        old = small.files.get(path, "").splitlines()
        lines = large.files[path].splitlines()
        totals = path.startswith(TOTALS)
        # a line the diff shows removed but that the new file still has (as often) only moved
        gone = Counter(old) - Counter(lines)
        dropped = _dropped_shapes(small.files.get(path, ""), large.files[path], new["devices"])
        matcher = difflib.SequenceMatcher(None, old, lines, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            added, removed = lines[j1:j2], old[i1:i2]
            near = lines if path in RANKED else added
            for line in removed:
                if gone[line] and line not in dropped and not (
                        _is_total(line, near, existing, totals) or _grew(line, near, new)
                        or _left_ranking(path, line, large.files)):
                    problems.append(f"{path}: - {line}")
            unexplained = [line for line in added
                           if not _install_field(path, line, old)
                           and not _announces_new_host(large, path, line, new["devices"])
                           and not any(_shape(line) == _shape(r)
                                      or (totals and _row_key(line) == _row_key(r))
                                      for r in removed)]
            # a rack face's shapes drawn for the first time (a symbol of an elevation that
            # only new racks use) name no device: their labels, in the racks, do
            drawn = _new_shapes(large.files[path], new["devices"])
            unexplained = [line for line in unexplained if line not in drawn]
            # a file of its own for a new device (imex/<new rack>/nodes_config.cfg holds only
            # its nodes' addresses) is explained by its path
            if unexplained and not (any(_names_new(line, new) for line in unexplained)
                                    or (path not in small.files
                                        and set(path.split("/")) & new["devices"])):
                problems += [f"{path}: + {line}" for line in unexplained]
    return problems


def _announces_new_host(large: Build, path: str, line: str, devices: set[str]) -> bool:
    """A leaf's frr.conf announcing the /31 of a port now cabled to a new host ('network
    10.254.4.84/31'): the line names no device, but the host port it announces is the new
    device's (a leaf announces each host link it numbers, plan/switching.py)."""
    match = re.fullmatch(r"switches/([^/]+)/frr\.conf", path)
    words = line.split()
    if match is None or words[:1] != ["network"] or len(words) != 2:
        return False
    config = large.plan.switch_configs.get(match[1])
    return config is not None and any(
        p.peer in devices and p.address and str(IPv4Network(p.address, strict=False)) == words[1]
        for p in config.host_ports)


def _install_field(path: str, line: str, old: list[str]) -> bool:
    """A fixed field of a new install entry of ansible/site.yml (owner, group, mode, how),
    as other entries hold it: the entry's src line names the new device's file."""
    return path == "ansible/site.yml" and line.strip().startswith(
        ("owner: ", "group: ", "mode: ", "how: ")) and line in old


def _places(result: Build) -> dict[str, tuple[str, ...]]:
    """Each drawn device's file and rectangle in the rack elevations."""
    found = {}
    for path, text in result.files.items():
        if "/elevation-" in path:
            for (device, face), box in device_boxes(text).items():
                if face == "rear":  # every device is on the rear face
                    found[device] = (path, box.rack, box.x, box.y, box.width, box.height)
    return found


def _unmoved(small: Build, large: Build) -> None:
    """No device of the smaller design is drawn elsewhere in the larger one."""
    before, after = _places(small), _places(large)
    assert len(before) == len(small.plan.devices)
    assert {name: after[name] for name in before} == before


def test_adding_a_rack_changes_only_its_lines(tmp_path: Path) -> None:
    """The SuperPOD example without its last rack (su4-r8, three DGX), then with it."""
    large = _example("dgx-h100-superpod-4su")
    small = _example("dgx-h100-superpod-4su")
    small["node_groups"][0]["count"] = 124
    small["node_groups"][0]["racks"] = "su[1-3]-r[1-8],su4-r[1-7]"
    small["rows"][3]["racks"][0]["names"] = "su4-r[1-7]"
    before, after = _build(small, tmp_path, "small"), _build(large, tmp_path, "large")
    assert _unexpected(before, after) == []
    _unmoved(before, after)
    # and the check can fail: an existing cable renumbered, an existing device readdressed
    cable = before.plan.cables.cable_id[0]
    host = before.plan.nodes[0].hostname
    address = before.plan.addresses["management"][host]
    files = dict(after.files)
    files["cabling/cables.csv"] = files["cabling/cables.csv"].replace(cable, cable + "0")
    files["ansible/inventory.yml"] = files["ansible/inventory.yml"].replace(
        f"'{address}'", f"'{address}0'")  # yaml_text quotes an address (YAML 1.1 reads numbers)
    planted = _unexpected(before, replace(after, files=files))
    assert {line.split(":")[0] for line in planted} == {"cabling/cables.csv",
                                                        "ansible/inventory.yml"}


def _nvl72(sus: int) -> dict[str, Any]:
    """The GB200 NVL72 example with ``sus`` scalable units of two NVL72 racks, and network
    racks and subnets large enough for four."""
    data = _example("gb200-nvl72")
    racks = 2 * sus
    data["node_groups"][0]["count"] = 18 * racks
    data["node_groups"][0]["racks"] = f"nvl[1-{racks}]"
    row = data["rows"][0]["racks"]
    row[2] = {"names": "net[1-2]", "height_u": 48, "max_power_kw": 60, "pdu": "net-ab"}
    # new NVL72 racks go at the end of the row (racks already on the floor do not move)
    row.append({**row[0], "names": f"nvl[5-{racks}]"})
    row[0]["names"] = "nvl[1-4]"
    data["fabric"]["compute"]["racks"] = "net[1-2]"
    data["cooling"]["heat_rejection_kw"] = 1500
    loop = data["cooling"]["loops"][-1]  # one CDU per two racks, as the example's
    data["cooling"]["loops"] += [{**loop, "name": f"cdu-{chr(ord('a') + pair)}",
                                  "racks": f"nvl[{2 * pair + 1}-{2 * pair + 2}]"}
                                 for pair in range(2, sus)]
    data["networks"] = {"management": {"cidr": "10.40.0.0/22"}, "bmc": {"cidr": "10.41.0.0/22"}}
    # growth adds design findings, not device lines: the fourth SU fills the nine spines
    # (FABRIC-GROWTH) and each new loop has one CDU (SPOF-CDU); report.html's findings table
    # is one line, which a new row rewrites
    data.setdefault("policy", {}).setdefault("levels", {}).update(
        {"FABRIC-GROWTH": "ignore", "SPOF-CDU": "ignore"})
    return data


@pytest.mark.parametrize("sus", [3])
def test_adding_a_scalable_unit_changes_only_its_lines(tmp_path: Path, sus: int) -> None:
    """GB200 NVL72: three scalable units, then four (nine spines either way, as sized)."""
    small = _build(_nvl72(sus), tmp_path, "small")
    large = _build(_nvl72(sus + 1), tmp_path, "large")
    assert small.plan.fabrics["compute"].switch_counts["spine"] == \
        large.plan.fabrics["compute"].switch_counts["spine"]
    assert _unexpected(small, large) == []
    _unmoved(small, large)


def _superpod(sus: int) -> dict[str, Any]:
    """DGX H100 SuperPOD SUs of 32 nodes (8 racks of four), planned for eight SUs: compute
    racks in a row of their own, the fabric's racks in another (five SUs keep the management
    networks under 44 access switches, one aggregation pair)."""
    return {
        "cluster": {"name": "pod", "slurm_version": "22.05"},
        "node_types": {"dgx": {"platform": "dgx-h100"}, "head": {"platform": "mgmt-1u"}},
        "node_groups": [
            {"name": "dgx", "node_type": "dgx", "count": 32 * sus, "hostname": "dgx-###",
             "racks": f"r[1-{8 * sus}]", "per_rack": 4},
            {"name": "head", "role": "controller", "node_type": "head", "count": 1,
             "hostname": "head#", "racks": "net1"}],
        "rows": [
            {"name": "compute", "racks": [{"names": f"r[1-{8 * sus}]", "height_u": 48,
                                           "pdu": "p"}]},
            {"name": "network", "racks": [{"names": "net[1-4]", "height_u": 48, "pdu": "p",
                                           "max_power_kw": 60}]}],
        "power": {"pdu_profiles": {"p": {"layout": "three", "voltage_v": 415, "phases": 3,
                                         "breaker_a": 63, "rated_100_percent": True,
                                         "outlets": 60}}},
        "fabric": {"compute": {"technology": "infiniband", "design": "rail-optimized",
                               "leaf_switch": "qm9700", "scalable_unit_nodes": 32,
                               "planned_scalable_units": 8, "racks": "net[1-4]"}},
        "networks": {"management": {"cidr": "10.0.0.0/21"}, "bmc": {"cidr": "10.1.0.0/21"}},
        "slurm": {"partitions": [{"name": "batch", "node_groups": ["dgx"], "default": True}]},
        "policy": {"air_cooled_rack_kw": 45},
    }


def test_adding_a_planned_scalable_unit_moves_no_uplink(tmp_path: Path) -> None:
    """Four SUs, then five, of a SuperPOD planned for eight: NVIDIA's sizing would go from 16
    to 32 spines at the fifth SU and re-spread every uplink; planned, nothing moves."""
    small = _build(_superpod(4), tmp_path, "small")
    large = _build(_superpod(5), tmp_path, "large")
    assert small.plan.fabrics["compute"].switch_counts["spine"] == 32
    assert _unexpected(small, large) == []
    _unmoved(small, large)
