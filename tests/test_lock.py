"""The lock file: a change to the spec never moves what already exists.

Each example is built, its lock written beside a changed copy of its spec, and the changed
spec built with it: no device that is in both keeps anything but its own address on every
network, rack and U, fabric position and first fabric port, and Lustre target indices (and
so its NID). Conflicts, hand edits and hostile text are located in the lock.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.console import format_diagnostic
from cluster_iac.cli.main import main
from cluster_iac.lock import collisions as collisions_module
from cluster_iac.lock import fast as fast_module
from cluster_iac.lock import read as lock_module
from cluster_iac.lock import text as lock_text_module
from cluster_iac.lock.grammar import HEADER
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import checked_trailer, sealed, unsealed
from cluster_iac.render import Build, PipelineError, build
from cluster_iac.write.files import text_digest
from tests.conftest import EXAMPLE_IDS, ROOT, example_build
from tests.superpod_fixtures import infiniband_storage
from tests.test_growth import TOTALS
from tests.test_growth import _unexpected as unexpected_lines

Spec = dict[str, Any]
Change = Callable[[Spec], None]


def _load(name: str) -> Spec:
    data: Spec = YAML(typ="safe").load((ROOT / "examples" / f"{name}.yaml").read_text())
    return data


def _write(data: Spec, path: Path) -> Path:
    with path.open("w") as handle:
        YAML(typ="safe").dump(data, handle)
    return path


def identities(result: Build) -> dict[tuple[str, ...], object]:
    """Every identity of every device the plan holds: what must stay put (its addresses,
    place, fabric position, Lustre targets and NID, and the id and far end of every cable
    and power cord from it)."""
    plan = result.plan
    found: dict[tuple[str, ...], object] = {}
    for network, table in plan.addresses.items():
        found.update((("address", network, device), address) for device, address in table.items())
    found.update((("place", device), tuple(where)) for device, where in plan.placements.items())
    for network, (position, _, first) in lock_text_module.fabric_positions(plan):
        found.update((("fabric", network, host), (position[host], first[host]))
                     for host in position)
    for server, target in lock_text_module.lustre_targets(plan):
        found[("lustre", target.label)] = (server, target.index)
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    for server in hardware.servers if hardware is not None else ():
        found[("nid", server.hostname)] = server.nid
    cables = plan.cables  # every cable by its A end: its id and its B end (a port, an outlet)
    for cable_id, a, a_port, b, b_port in zip(cables.cable_id, cables.a_device, cables.a_port,
                                              cables.b_device, cables.b_port, strict=True):
        found[("cable", a, a_port)] = (cable_id, b, b_port)
    for cord in plan.power_cords:
        found[("cord", cord.device, str(cord.psu))] = (cord.pdu, cord.circuit, cord.line,
                                                       cord.outlet)
    return found


def moved(before: Build, after: Build) -> list[tuple[tuple[str, ...], object, object]]:
    """The identities of ``before`` that ``after`` still has, with another value."""
    new = identities(after)
    return [(key, value, new[key]) for key, value in identities(before).items()
            if key in new and new[key] != value]


def changed(name: str, change: Change, tmp_path: Path,
            emit: bool = False) -> tuple[Build, Build]:
    """The example, and the changed example built with the example's lock."""
    before = build(_write(_load(name), tmp_path / "before.yaml"))
    data = _load(name)
    change(data)
    spec = _write(data, tmp_path / "after.yaml")
    lock_path(spec).write_text(before.lock.after)
    return before, build(spec, emit=emit)


def _group(data: Spec, index: int) -> Spec:
    group: Spec = data["node_groups"][index]
    return group


def _count(delta: int, index: int) -> Change:
    def change(data: Spec) -> None:
        _group(data, index)["count"] += delta
    return change


def _reorder(data: Spec) -> None:
    data["node_groups"].reverse()


def _group_first(data: Spec) -> None:
    """A copy of the first compute group, named to sort before every other group, in a new
    rack of its own."""
    compute = next(g for g in data["node_groups"] if g.get("role", "compute") == "compute")
    data["rows"][0]["racks"].append({**data["rows"][0]["racks"][0], "names": "aaa-r1"})
    data["node_groups"].append({**copy.deepcopy(compute), "name": "aaa", "count": 1,
                                "hostname": "aaa##", "racks": "aaa-r1", "per_rack": 1})


def _widen_subnets(data: Spec) -> None:
    for network in (data.get("networks") or {}).values():
        if isinstance(network, dict) and "cidr" in network:
            address, prefix = network["cidr"].split("/")
            network["cidr"] = f"{address}/{int(prefix) - 1}"


SAME_RADIX = {"qm8700": "qm8790", "qm8790": "qm8700", "qm9700": "qm9790", "qm9790": "qm9700"}


def _swap_switches(data: Spec) -> None:
    """Every fabric switch for the other model of its radix (managed for unmanaged)."""
    for fabric in (data.get("fabric") or {}).values():
        for key in ("leaf_switch", "spine_switch", "core_switch"):
            if fabric.get(key) in SAME_RADIX:
                fabric[key] = SAME_RADIX[fabric[key]]


def _breakers(data: Spec) -> None:
    for profile in data["power"]["pdu_profiles"].values():
        profile["breaker_a"] += 8


def _add_rack(data: Spec) -> None:
    data["rows"][-1]["racks"].append({**data["rows"][-1]["racks"][-1], "names": "zz-r1"})


def _cases() -> list[tuple[str, str, Change]]:
    cases: list[tuple[str, str, Change]] = []
    for name in EXAMPLE_IDS:
        groups = _load(name)["node_groups"]
        for i, group in enumerate(groups):
            cases.append((name, f"add-{group['name']}", _count(1, i)))
            if group["count"] > 1:
                cases.append((name, f"remove-{group['name']}", _count(-1, i)))
        cases += [(name, "reorder-groups", _reorder), (name, "group-sorting-first", _group_first),
                  (name, "widen-subnets", _widen_subnets), (name, "same-radix", _swap_switches),
                  (name, "breakers", _breakers), (name, "add-rack", _add_rack)]
    return cases


CASES = _cases()
ADDS = {what for _, what, _ in CASES if what.startswith("add-") and what != "add-rack"}


@pytest.mark.parametrize(("name", "what", "change"), CASES,
                         ids=[f"{n}-{w}" for n, w, _ in CASES])
def test_a_change_moves_no_existing_identity(name: str, what: str, change: Change,
                                             tmp_path: Path) -> None:
    try:
        before, after = changed(name, change, tmp_path, emit=what in ADDS)
    except PipelineError as exc:
        # a change the design itself refuses (a rack too full, a breaker over its limit):
        # never because of the lock
        codes = {d.code for d in exc.diagnostics if d.is_error}
        assert codes and not any(code.startswith("LOCK-") for code in codes), codes
        return
    assert moved(before, after) == []
    # and every output line that changes names the added or removed device, its cables, or
    # is a total (tests/test_growth.py's reading of a diff; a removal is a growth backwards)
    if what in ADDS:
        assert _unexplained(before, after) == []


def _unexplained(before: Build, after: Build) -> list[str]:
    """test_growth's unexpected lines, less what a new device makes of its neighbours: a
    JSON entry that now has a comma after it, a new row of a bill of materials."""
    kept = []
    for problem in unexpected_lines(before, after):
        path, _, line = problem.partition(": ")
        sign, text = line[:2], line[2:]
        if sign == "+ " and path.startswith(TOTALS):
            continue  # a new row of loads or parts
        if sign == "+ " and text.endswith(",") and \
                text[:-1] in before.files.get(path, "").splitlines():
            continue  # the same entry, now followed by the new one
        kept.append(problem)
    return kept


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_removing_a_rack_moves_no_existing_identity(name: str, tmp_path: Path) -> None:
    """The example with one more (empty) rack, then without it."""
    data = _load(name)
    _add_rack(data)
    try:
        before = build(_write(data, tmp_path / "before.yaml"))
    except PipelineError as exc:  # the design refuses the extra rack (its cooling, its row)
        assert not any(d.code.startswith("LOCK-") for d in exc.diagnostics)
        return
    spec = _write(_load(name), tmp_path / "after.yaml")
    lock_path(spec).write_text(before.lock.after)
    try:
        after = build(spec, emit=False)
    except PipelineError as exc:  # devices the lock holds in the removed rack: conflicts
        assert {d.code for d in exc.diagnostics} == {"LOCK-CONFLICT"}
        assert all("rack zz-r1, which the spec no longer has" in d.message
                   for d in exc.diagnostics)
        return
    assert moved(before, after) == []


def test_the_battery_catches_an_allocator_that_ignores_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted regression: with the lock read as empty, the same changes move identities."""
    monkeypatch.setattr("cluster_iac.render.read_lock",
                        lambda path, reallocate=(): lock_module.Lock(file=str(path)))
    found = 0
    for change in (_count(1, 1), _reorder):  # the cases: a login node; reordering
        before, after = changed("dgx-h100-superpod-4su", change, tmp_path)
        found += len(moved(before, after))
    assert found > 100


def test_every_example_lock_is_committed_and_current(example: str) -> None:
    result = example_build(example)
    assert result.lock is not None and result.lock.before is not None, "commit the lock"
    assert not result.lock.stale


def test_a_removed_device_keeps_its_identities_reserved(tmp_path: Path) -> None:
    """Removing a login node and adding another in the same change: the new one does not
    get the removed one's address or units; the lock says they are retired; reallocating
    'retired' frees them."""
    data = _load("dgx-h100-superpod-4su")
    before = build(_write(data, tmp_path / "a.yaml"))
    logins = next(g for g in data["node_groups"] if g["name"] == "login")
    logins["count"] -= 1
    spec = _write(data, tmp_path / "b.yaml")
    lock_path(spec).write_text(before.lock.after)
    after = build(spec, emit=False)
    assert "retired address management login-02 " in after.lock.after
    assert "retired place login-02 " in after.lock.after
    logins["count"] += 1
    logins["hostname"] = "lgn-##"  # other nodes in the removed ones' places
    spec = _write(data, tmp_path / "c.yaml")
    lock_path(spec).write_text(after.lock.after)
    with pytest.raises(PipelineError) as refused:  # a rename unless said otherwise
        build(spec, emit=False)
    assert [d.code for d in refused.value.diagnostics] == ["LOCK-RENAME"]
    # new machines: the old group removed in one change, the new one added in the next
    data["node_groups"].remove(logins)
    spec = _write(data, tmp_path / "d.yaml")
    lock_path(spec).write_text(after.lock.after)
    gone = build(spec, emit=False)
    assert "retired place login-01 " in gone.lock.after
    data["node_groups"].append(logins)
    dgx = next(g for g in data["node_groups"] if g["name"] == "dgx")
    dgx["count"] -= 1  # a node retired by this change
    spec = _write(data, tmp_path / "e.yaml")
    lock_path(spec).write_text(gone.lock.after)
    again = build(spec, emit=False)
    old = before.plan.addresses["management"]["login-02"]
    assert again.plan.addresses["management"]["lgn-02"] != old
    assert again.plan.placements["lgn-02"] != before.plan.placements["login-02"]
    freed = build(spec, emit=False, reallocate=("retired",))
    assert "login-02" not in freed.lock.after  # what was retired is free now
    last = f"dgx-{dgx['count'] + 1:03d}"
    assert f"retired place {last} " in freed.lock.after  # retired by this change: kept


# -- conflicts: each a located error in the lock, nothing written ---------------------------

def _conflict(tmp_path: Path, name: str, change: Change,
              edit: Callable[[str], str] = lambda text: text) -> tuple[str, Path]:
    before = build(_write(_load(name), tmp_path / "before.yaml"))
    data = _load(name)
    change(data)
    spec = _write(data, tmp_path / "after.yaml")
    lock_path(spec).write_text(edit(before.lock.after))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert not out.exists()  # nothing written
    assert lock_path(spec).read_text() == edit(before.lock.after)  # the lock untouched
    return result.output, lock_path(spec)


def _located(output: str, lock: Path, code: str, words: str) -> None:
    """The first ``code`` finding is at a line of the lock that names the device the
    message names first, says ``words`` and offers the ways out."""
    lines = lock.read_text().splitlines()
    head = next(line for line in output.splitlines() if f"[{code}]" in line)
    file, line, column = head.split(":")[:3]
    assert file == str(lock) and int(column) >= 1
    device = head.split("] ", 1)[1].split()[0].split("'")[0]
    assert device in lines[int(line) - 1].split()
    assert words in head
    assert "--reallocate" in output


def test_conflict_address_outside_a_changed_subnet(tmp_path: Path) -> None:
    def move(data: Spec) -> None:
        data["networks"]["management"]["cidr"] = "10.200.0.0/16"
    output, lock = _conflict(tmp_path, "seed-64gpu-h100", move)
    _located(output, lock, "LOCK-CONFLICT", "is not a usable address of networks.")


def test_conflict_recorded_rack_removed(tmp_path: Path) -> None:
    def drop(data: Spec) -> None:  # the group now names only its first rack
        group = next(g for g in data["node_groups"] if g["name"] == "oss")
        group["racks"] = "mgmt-r2"
    output, lock = _conflict(tmp_path, "dgx-h100-superpod-4su", drop)
    _located(output, lock, "LOCK-CONFLICT", "no longer lists")


def test_conflict_unit_overlapped_by_a_taller_device(tmp_path: Path) -> None:
    def taller(data: Spec) -> None:
        data["node_types"]["gpu"]["height_u"] = 10
    output, lock = _conflict(tmp_path, "minimal", taller)
    _located(output, lock, "LOCK-CONFLICT", "overlaps gpu01")


def test_conflict_port_beyond_a_new_switch_radix(tmp_path: Path) -> None:
    """A leaf of another radix puts the hosts' positions on other leaves and ports."""
    def smaller(data: Spec) -> None:
        data["fabric"]["storage"]["leaf_switch"] = "qm8790"
    output, lock = _conflict(tmp_path, "dgx-h100-superpod-4su", smaller)
    _located(output, lock, "LOCK-CONFLICT", "fabric cable would move")


def test_conflict_pool_no_longer_holds_its_devices(tmp_path: Path) -> None:
    """The new device needs a free address; the held ones leave none: located at the cidr."""
    def crowd(data: Spec) -> None:
        data["networks"]["bmc"]["cidr"] = "10.1.0.0/26"
    before = build(_write(_load("seed-64gpu-h100"), tmp_path / "before.yaml"))
    data = _load("seed-64gpu-h100")
    crowd(data)
    spec = _write(data, tmp_path / "after.yaml")
    lock_path(spec).write_text(before.lock.after)
    with pytest.raises(PipelineError) as caught:
        build(spec, emit=False)
    codes = {d.code for d in caught.value.diagnostics}
    assert codes & {"SPEC-SUBNET-TOO-SMALL", "LOCK-CONFLICT"}


# -- the lock is input: hand edits and hostile text ---------------------------------------

def _minimal(tmp_path: Path) -> tuple[Path, str]:
    spec = _write(_load("minimal"), tmp_path / "cluster.yaml")
    return spec, build(spec).lock.after


def edited(text: str, old: str, new: str) -> str:
    """A deliberate edit of a sealed lock: ``old`` made ``new``, the trailer made again (as
    docs/lock.md tells; the trailer's error prints the new one)."""
    return sealed(unsealed(text).replace(old, new))


def test_a_hand_edit_moves_a_node_to_a_free_unit_everywhere(tmp_path: Path) -> None:
    spec, text = _minimal(tmp_path)
    lock_path(spec).write_text(edited(text, "place head1 r01 17 1", "place head1 r01 30 1"))
    result = build(spec)
    assert result.plan.placements["head1"].u == 30
    files = result.files
    assert "rack_u: 30" in files["ansible/inventory.yml"] or "u: 30" in files[
        "ansible/inventory.yml"]
    devices = files["netbox/devices/a/001.csv"].splitlines()
    assert any(line.startswith("head1,") and ",30," in line for line in devices)
    assert "r01.U30" in files["cabling/cables.csv"]
    assert any("head1" in line for line in files["facility/pdu_breakers.csv"].splitlines())
    assert not result.lock.stale  # the edit is kept as it is


def test_a_hand_edit_onto_another_device_is_a_located_collision(tmp_path: Path) -> None:
    spec, text = _minimal(tmp_path)
    lock_path(spec).write_text(edited(text, "place head1 r01 17 1", "place head1 r01 5 1"))
    with pytest.raises(PipelineError) as caught:
        build(spec)
    diag = caught.value.diagnostics[0]
    assert diag.code == "LOCK-COLLISION" and diag.file == str(lock_path(spec))
    assert "head1" in diag.message and "gpu01" in diag.message


@pytest.mark.parametrize(("line", "code", "column", "words"), [
    ("place head1 r01 17 1; rm -rf /", "LOCK-SYNTAX", 20, "holds 4 fields"),
    ("place head1\x1b[2J r01 17 1", "LOCK-SYNTAX", 12, "control character"),
    ("plaec head1 r01 17 1", "LOCK-SYNTAX", 1, "did you mean 'place'"),
    ("place head1 r01 seventeen 1", "LOCK-SYNTAX", 17, "whole number"),
    ("place he'ad1 r01 17 1", "LOCK-SYNTAX", 7, "not a name"),
    ("address management gpu01 10.0.0.300", "LOCK-SYNTAX", 26, "IPv4"),
    ("place gpu01 r01 101 1", "LOCK-SYNTAX", 17, "out of range"),
    ("place gpu01 r01 1 8", "LOCK-DUPLICATE", 1, "also at line"),
    ("serial gpu01 SN/1", "LOCK-SYNTAX", 14, "not a serial number"),
    ("guid gpu01 ib0 0xB83FD20300A1B2C3", "LOCK-SYNTAX", 16, "not a GUID"),
    ("zone x.internal 4294967296 " + "0" * 64, "LOCK-SYNTAX", 17, "not an SOA serial"),
    ("zone x.internal 7 " + "0" * 63, "LOCK-SYNTAX", 19, "not a SHA-256"),
    ("zone x;internal 7 " + "0" * 64, "LOCK-SYNTAX", 6, "not a zone name"),
])
def test_hostile_or_broken_lock_lines_are_located(tmp_path: Path, line: str, code: str,
                                                  column: int, words: str) -> None:
    spec, text = _minimal(tmp_path)
    lock_path(spec).write_text(text + line + "\n")
    with pytest.raises(PipelineError) as caught:
        build(spec)
    diag = caught.value.diagnostics[0]
    assert (diag.code, diag.line, diag.column) == (code, len(text.splitlines()) + 1, column)
    assert words in (diag.message + (diag.hint or ""))
    shown = format_diagnostic(diag, caught.value.source, str(spec))
    assert "\x1b" not in shown and shown.splitlines()[-1].strip().startswith(("|", "="))


def test_a_lock_without_its_header_is_refused(tmp_path: Path) -> None:
    spec, text = _minimal(tmp_path)
    lock_path(spec).write_text("\n".join(text.splitlines()[2:]) + "\n")
    with pytest.raises(PipelineError) as caught:
        build(spec)
    assert caught.value.diagnostics[0].code == "LOCK-VERSION"


def test_a_binary_lock_is_a_located_error(tmp_path: Path) -> None:
    spec, text = _minimal(tmp_path)
    lock_path(spec).write_bytes(text.encode() + b"place \xff\xfe r01 1 1\n")
    with pytest.raises(PipelineError) as caught:
        build(spec)
    diag = caught.value.diagnostics[0]
    assert diag.code == "LOCK-SYNTAX" and diag.line == len(text.splitlines()) + 1


# -- CI: render --check fails on a missing or stale lock ----------------------------------

def test_render_check_fails_on_a_missing_or_stale_lock(tmp_path: Path) -> None:
    spec, _ = _minimal(tmp_path)
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    assert runner.invoke(main, ["render", str(spec), "-o", str(out), "--check"]).exit_code == 0
    lock = lock_path(spec)
    text = lock.read_text()
    lock.unlink()
    missing = runner.invoke(main, ["render", str(spec), "-o", str(out), "--check"])
    assert missing.exit_code == 1 and "missing" in missing.output
    assert "+place head1 r01 17 1" in missing.output
    lock.write_text(sealed(unsealed(text).replace("place head1 r01 17 1", "place head1 r01 30 1")
                           .replace("place gpu02 r01 9 8\n", "")))
    stale = runner.invoke(main, ["render", str(spec), "-o", str(out), "--check"])
    assert stale.exit_code == 1 and "+place gpu02 r01 9 8" in stale.output


def test_a_lock_holding_the_same_lines_is_kept_and_one_line_more_is_stale(
        tmp_path: Path) -> None:
    """A render that allocates nothing new keeps the lock's text as it is, even reordered
    by hand (lock._same_lines); one identity more or changed makes it stale, and render
    writes it sorted again."""
    spec, _ = _minimal(tmp_path)
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    lock = lock_path(spec)
    text = lock.read_text()
    lines = unsealed(text).splitlines(keepends=True)
    reordered = sealed("".join(lines[:2] + lines[:1:-1]))  # the head, the rest reversed
    assert reordered != text
    lock.write_text(reordered)
    assert runner.invoke(main, ["render", str(spec), "-o", str(out), "--check"]).exit_code == 0
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    assert lock.read_text() == reordered
    lock.write_text(edited(reordered, "place gpu02 r01 9 8\n", ""))
    stale = runner.invoke(main, ["render", str(spec), "-o", str(out), "--check"])
    assert stale.exit_code == 1 and "+place gpu02 r01 9 8" in stale.output
    assert runner.invoke(main, ["render", str(spec), "-o", str(out)]).exit_code == 0
    assert lock.read_text() == text


# -- the fast reader against the plain one -------------------------------------------------

def _plain(text: str) -> dict[tuple[str, ...], tuple[object, ...]]:
    lock = lock_module.Lock(file="x", text=text)
    for number, line in enumerate(text.splitlines(), start=1):
        assert lock_module._parse_line(lock, number, line) is None, line
    return {key: (entry.value, entry.retired) for key, entry in lock.entries.items()}


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_the_fast_reader_reads_what_the_plain_one_reads(name: str) -> None:
    text = (ROOT / "examples" / f"{name}.lock").read_text()
    text += ("retired place gone-1 r9 3 2\nretired address bmc gone-1 10.9.9.9\n"
             "retired bgp storage gone-1 4200009999 10.255.9.9\n"
             "retired p2p storage gone-1 10.254.200.0\n")
    text += ("mac management gone-2 02:00:5e:00:00:0a\nmac bmc gone-2 7c:fe:90:12:34:56\n"
             "retired mac bmc gone-1 7c:fe:90:12:34:57\n")
    text += ("serial gone-2 437XR1138R2\nretired serial gone-1 SN-1.a_b\n"
             "guid gone-2 ib0 0xb83fd20300a1b2c3\nguid gone-3 ib0 0xb83fd20300a1b2c4\n"
             "guid sw-1 node 0xb83fd20300a1b2c5\nretired guid gone-1 ib1 0xb83fd20300a1b2c6\n")
    text += ("zone gone.example 4294967295 " + "a" * 64 + "\n"
             "retired zone 9.9.10.in-addr.arpa 1 " + "0" * 64 + "\n")
    fast = fast_module.fast_entries(text)
    assert fast is not None
    assert {entry.key: (entry.value, entry.retired) for group in fast.values()
            for entry in group.values()} == _plain(text)
    assert all(name == entry.key[2] and scope == entry.key[:2]  # each where get() looks
               for scope, group in fast.items() for name, entry in group.items())


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.lock")))
def test_the_reader_hashes_the_lock_once_for_its_trailer_and_the_renders_key(name: str) -> None:
    """lock/trailer.py checked_trailer carries the hash of the sealed lines on over the trailer:
    the whole text's SHA-256, as files.text_digest makes it (render's key reads it)."""
    path = ROOT / "examples" / name
    assert lock_module.read_lock(path).digest == text_digest(path.read_text())
    edited = path.read_text().replace("\n", "\n# a comment\n", 3)  # the trailer now wrong
    problem, digest = checked_trailer(edited, "x")
    assert problem is not None and problem.code == "LOCK-TRAILER"
    assert digest == text_digest(edited)
    unsealed_text = unsealed(path.read_text())
    assert checked_trailer(unsealed_text, "x")[1] is None  # no trailer: nothing hashed


def test_the_fast_reader_holds_each_word_once() -> None:
    """lock/fast.py keeps one string per distinct word (the plan holds the entries through
    every pass): a device's name in its place, its addresses and its access cable, a rack's
    name in every place line, are each one object, the dictionaries' keys included."""
    text = (ROOT / "examples" / "dgx-h100-superpod-4su.lock").read_text()
    fast = fast_module.fast_entries(text)
    assert fast is not None
    place = fast[("place", "")]["dgx-001"]
    named = [fast[("address", network)]["dgx-001"].key[2] for network in ("bmc", "management")]
    named += [fast[("access", "bmc")]["dgx-001"].key[2], place.key[2]]
    named += [name for group in fast.values() for name in group if name == "dgx-001"]
    assert len(named) > 4 and all(name is named[0] for name in named)
    racks = [entry.value[0] for entry in fast[("place", "")].values()
             if entry.value[0] == place.value[0]]
    assert len(racks) > 1 and all(rack is racks[0] for rack in racks)


@pytest.mark.parametrize("order", ["reversed", "split", "retired-first", "no-last-feed"])
def test_the_fast_reader_reads_a_lock_in_any_order_of_its_kinds(order: str) -> None:
    """lock/fast.py finds each kind's runs of lines in one walk: kinds in another order, a
    kind's lines in two runs, retired lines before the active ones, a last line without its
    line feed are read as the plain reader reads them; a kind whose active and retired lines
    are mixed is left to the plain reader."""
    lines = (ROOT / "examples" / "dgx-h100-superpod-4su.lock").read_text().splitlines()
    head, body = lines[:2], [line for line in lines[2:] if not line.startswith("#")]
    if order == "reversed":
        body = sorted(body, key=lambda line: line.split()[0], reverse=True)
    elif order == "split":  # the places between the addresses
        places = [line for line in body if line.startswith("place ")]
        body = [line for line in body if not line.startswith("place ")]
        body[len(body) // 2:len(body) // 2] = places
    elif order == "retired-first":
        body = ["retired place gone-1 r9 3 2", "retired address bmc gone-1 10.9.9.9", *body]
    text = "\n".join([*head, *body]) + ("" if order == "no-last-feed" else "\n")
    fast = fast_module.fast_entries(text)
    assert fast is not None
    assert {entry.key: (entry.value, entry.retired) for group in fast.values()
            for entry in group.values()} == _plain(text)
    second = text.index("\n", text.index("\naddress ") + 1)  # after the first address
    mixed = f"{text[:second]}\nretired address bmc gone-1 10.9.9.9{text[second:]}"
    assert fast_module.fast_entries(mixed) is None


@pytest.mark.parametrize("line", [
    "place a r1 0 1", "place a r1 1 101", "address bmc a 10.0.0.01", "address bmc a 1.2.3",
    "fabric compute a 1 65 s p1", "outlet a PSU0 p 1", "outlet a PSU1 p 1001", "place a r1 1 1 ",
    "place  a r1 1 1", "uplink bmc a agg1 100001", "lustre ost 01 a", "# \x1b comment",
    "address bmc a 256.0.0.1", "place a r1 1 1\r", "# \x7f comment", "# \x85 comment",
    "# \u2028 comment", "# caf\u00e9 \x00",
    "bgp compute a 4294967295 10.0.0.1", "bgp compute a 0 10.0.0.1", "bgp compute a 01 1.2.3.4",
    "bgp mgmt a 4200000000 10.0.0.1", "p2p compute a 10.0.0.01", "p2p compute a 10.0.0.1 x",
    "mac bmc a 7C:FE:90:12:34:56", "mac bmc a 01:00:5e:00:00:01", "mac bmc a 00:00:00:00:00:00",
    "mac bmc a 7c-fe-90-12-34-56", "mac bmc a 7c:fe:90:12:34", "mac ipx a 02:00:00:00:00:01",
    "mac bmc a 7c:fe:90:12:34:56 x",
    "serial a", "serial a S/N1", "serial a -SN", "serial a " + "S" * 65, "serial a SN x",
    "guid a ib0 0x0000000000000000", "guid a ib0 0xB83FD20300A1B2C3", "guid a ib0 b83fd20300a1b2c3",
    "guid a ib0 0xb83fd20300a1b2c", "guid a 0xb83fd20300a1b2c3", "guid a ib0 0xb83fd20300a1b2c3 x",
    "zone a 0 " + "0" * 64, "zone a 4294967296 " + "0" * 64, "zone a 01 " + "0" * 64,
    "zone a 1 " + "0" * 63, "zone a 1 " + "A" * 64, "zone a..b 1 " + "0" * 64,
    "zone a_b 1 " + "0" * 64, "zone " + "a." * 127 + "ab 1 " + "0" * 64,
    "zone a 1 " + "0" * 64 + " x",
])
def test_the_fast_reader_leaves_every_odd_line_to_the_plain_one(line: str) -> None:
    """Anything the fast reader cannot read exactly as the plain one would, it refuses,
    so the plain reader locates it."""
    text = f"{HEADER}\n{line}\n"
    assert fast_module.fast_entries(text) is None


def test_the_fast_reader_reads_a_comment_of_any_printable_text() -> None:
    text = f"{HEADER}\n# caf\u00e9 \u00fcber\nplace a r1 1 1\n"
    assert fast_module.fast_entries(text) is not None


def test_the_quick_collision_check_agrees_with_the_plain_search() -> None:
    """lock/collisions.py's _no_collision (a set and a sort) is true exactly when the plain
    search finds no collision, on random small locks where collisions are common."""
    import random

    chance = random.Random(23)
    for _ in range(400):
        lines = []
        for n in range(chance.randint(1, 8)):
            kind = chance.choice(["place", "address", "fabric", "access", "uplink", "outlet",
                                  "p2p", "serial", "guid"])
            lines.append(
                f"place d{n} r{chance.randint(1, 2)} {chance.randint(1, 6)} {chance.randint(1, 3)}"
                if kind == "place" else
                f"address bmc d{n} 10.0.0.{chance.randint(1, 4)}" if kind == "address" else
                f"fabric compute d{n} {chance.randint(0, 3)} 1 s1 p1" if kind == "fabric" else
                f"access bmc d{n} r1 {chance.randint(0, 3)} s1 p1" if kind == "access" else
                f"uplink bmc d{n} agg1 {chance.randint(0, 3)}" if kind == "uplink" else
                f"p2p compute d{n} 10.254.{chance.randint(0, 3)}.0" if kind == "p2p" else
                f"serial d{n} SN{chance.randint(1, 3)}" if kind == "serial" else
                f"guid d{n} {chance.choice(['ib0', 'node'])} 0x{chance.randint(1, 3):016x}"
                if kind == "guid" else
                f"outlet d{n} PSU1 p{chance.randint(1, 2)} {chance.randint(1, 3)}")
        lock = lock_module.Lock(file="x", text="\n".join(lines) + "\n")
        for number, line in enumerate(lines, start=1):
            assert lock_module._parse_line(lock, number, line) is None
        found = collisions_module._find_collisions(lock)
        assert collisions_module._no_collision(lock) == (not found), lines


def test_a_tenth_leaf_keeps_the_nine_names_the_lock_holds(tmp_path: Path) -> None:
    """The SuperPOD's storage fabric on InfiniBand (tests/superpod_fixtures.py; the example
    runs it on Ethernet, 18 leaves) has nine leaves, sib-leaf-1 to sib-leaf-9; four more
    OSS make a tenth. A first render of ten names them sib-leaf-01 to -10, but with the
    lock the nine keep their names (build_fabric._locked_widths) and the tenth is
    sib-leaf-10: no identity moves."""
    data = infiniband_storage(_load("dgx-h100-superpod-4su"))
    oss = next(i for i, g in enumerate(data["node_groups"]) if g["name"] == "oss")
    before = build(_write(data, tmp_path / "before.yaml"))
    assert [s.name for s in before.plan.switches if s.name.startswith("sib-leaf")] == [
        f"sib-leaf-{n}" for n in range(1, 10)]
    _count(4, oss)(data)
    spec = _write(data, tmp_path / "after.yaml")
    lock_path(spec).write_text(before.lock.after)
    after = build(spec, emit=False)
    leaves = [s.name for s in after.plan.switches if s.name.startswith("sib-leaf")]
    assert leaves == [f"sib-leaf-{n}" for n in range(1, 11)]
    assert moved(before, after) == []
    fresh = build(tmp_path / "after.yaml", lock_file=tmp_path / "none.lock", emit=False)
    assert [s.name for s in fresh.plan.switches if s.name.startswith("sib-leaf")] == \
        [f"sib-leaf-{n:02d}" for n in range(1, 11)]
