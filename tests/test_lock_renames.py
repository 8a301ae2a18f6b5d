"""Renames (issue 39), through the CLI: a node group's hostname pattern changed in a locked
example is refused at that key; the `moved` entry the hint gives lets the render keep every
identity (rack, U, port, outlet, address, Lustre target, cable id), the lock's lines the same
but for the names; kept in the spec, the move is harmless."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.compile.expand_nodes import hostname
from cluster_iac.lock.path import lock_path

EXAMPLES = Path(__file__).parent.parent / "examples"
HOSTNAME = re.compile(r'hostname: "([a-z0-9#-]+)"')


def render(spec: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(main, ["render", str(spec), "-o", str(out), *extra])


def copied(name: str, tmp_path: Path) -> Path:
    spec = tmp_path / f"{name}.yaml"
    shutil.copy(EXAMPLES / f"{name}.yaml", spec)
    shutil.copy(EXAMPLES / f"{name}.lock", lock_path(spec))
    return spec


def renames(spec: Path) -> dict[str, str]:
    """Old host -> new host when every group's pattern gains a leading 'x'."""
    data = YAML(typ="safe").load(spec.read_text())
    return {hostname(group["hostname"], index): hostname("x" + group["hostname"], index)
            for group in data["node_groups"]
            for first in [group.get("first_index", 1)]
            for index in range(first, first + group["count"])}


def identity_lines(lock: Path) -> set[str]:
    return {line for line in lock.read_text().splitlines() if not line.startswith("#")}


def zone_lines(lines: set[str]) -> dict[str, str]:
    """The lock's zone lines by zone: a rename changes the zones' records, so their serials."""
    return {line.split()[1]: line for line in lines if line.startswith("zone ")}


def renamed_line(line: str, names: dict[str, str]) -> str:
    return " ".join(names.get(word, word) for word in line.split(" "))


def renamed_csv(text: str, names: dict[str, str]) -> str:
    return "\n".join(",".join(names.get(cell, cell) for cell in line.split(","))
                     for line in text.split("\n"))


@pytest.mark.parametrize("name", sorted(path.stem for path in EXAMPLES.glob("*.yaml")))
def test_a_pattern_rename_is_refused_at_its_key_and_its_hint_keeps_every_identity(
        tmp_path: Path, name: str) -> None:
    spec = copied(name, tmp_path)
    before_lock = identity_lines(lock_path(spec))
    assert render(spec, tmp_path / "o0").exit_code == 0
    before_cables = (tmp_path / "o0" / "cabling" / "cables.csv").read_text()
    names = renames(spec)
    text = spec.read_text()
    text = HOSTNAME.sub(lambda m: f'hostname: "x{m[1]}"', text)
    for old, new in names.items():  # the hosts the spec names elsewhere (subnet managers...)
        text = re.sub(rf"(?<![a-z0-9-]){old}(?![a-z0-9-])", new, text)
    spec.write_text(text)
    lines = spec.read_text().splitlines()

    result = render(spec, tmp_path / "o1")
    assert result.exit_code == 1, result.output
    assert not (tmp_path / "o1").exists()
    refused = re.findall(r"^(\S+):(\d+):(\d+): error\[LOCK-RENAME\]", result.output, re.M)
    patterns = HOSTNAME.findall(spec.read_text())
    assert len(refused) == len(patterns), result.output  # every group, each once
    for file, line, column in refused:  # at the hostname's value, with its caret
        assert file == str(spec)
        assert lines[int(line) - 1][int(column) - 1:].startswith('"x'), (line, column)
    assert "error[" not in result.output.replace("error[LOCK-RENAME]", ""), result.output
    moves = re.findall(r"add 'moved: \[(\{from: \"[^\"]+\", to: \"[^\"]+\"\})\]'", result.output)
    assert len(moves) == len(patterns), result.output

    # the hints followed: one moved list with each entry the hints give
    spec.write_text(spec.read_text() + "moved:\n" + "".join(f"  - {m}\n" for m in moves))
    result = render(spec, tmp_path / "o2")
    assert result.exit_code == 0, result.output
    after_lock = identity_lines(lock_path(spec))
    zones_before, zones_after = zone_lines(before_lock), zone_lines(after_lock)
    assert after_lock - set(zones_after.values()) == \
        {renamed_line(line, names) for line in before_lock - set(zones_before.values())}
    # the hosts' DNS names changed: each zone holding one is served again, its serial one more
    assert zones_after.keys() == zones_before.keys()
    for zone, line in zones_after.items():
        _, _, serial, digest = line.split()
        _, _, old_serial, old_digest = zones_before[zone].split()
        assert int(serial) == int(old_serial) + (digest != old_digest), line
    assert not any(old in line.split() for line in after_lock for old in names)
    after_cables = (tmp_path / "o2" / "cabling" / "cables.csv").read_text()
    assert after_cables == renamed_csv(before_cables, names)  # ids, ends, lengths
    assert after_cables != before_cables or not any(old in before_cables for old in names)

    # the move kept in the spec is harmless: the tree and the lock are up to date
    kept = lock_path(spec).read_text()
    result = render(spec, tmp_path / "o2", "--check")
    assert result.exit_code == 0, result.output
    assert lock_path(spec).read_text() == kept


def test_host_moves_keep_identities_when_a_group_renumbers(tmp_path: Path) -> None:
    """first_index 1 -> 11 with a move per host: gpu01 becomes gpu11 in its place."""
    spec = copied("minimal", tmp_path)
    before = identity_lines(lock_path(spec))
    text = spec.read_text().replace('hostname: "gpu##",', 'hostname: "gpu##", first_index: 11,')
    spec.write_text(text + "moved:\n  - {from: gpu01, to: gpu11}\n  - {from: gpu02, to: gpu12}\n")
    result = render(spec, tmp_path / "o")
    assert result.exit_code == 0, result.output
    names = {"gpu01": "gpu11", "gpu02": "gpu12"}
    assert identity_lines(lock_path(spec)) == {renamed_line(line, names) for line in before}


def test_a_move_onto_a_name_the_lock_holds_is_refused_at_the_move(tmp_path: Path) -> None:
    spec = copied("minimal", tmp_path)
    text = spec.read_text().replace('hostname: "head#"', 'hostname: "ctl#"')
    spec.write_text(text + "moved:\n  - {from: head1, to: gpu02}\n")
    kept = lock_path(spec).read_text()
    result = render(spec, tmp_path / "o")
    assert result.exit_code == 1, result.output
    line = len(spec.read_text().splitlines())
    assert f"{spec}:{line}:" in result.output and "error[LOCK-MOVED]" in result.output
    assert "the lock already holds gpu02" in result.output
    assert lock_path(spec).read_text() == kept and not (tmp_path / "o").exists()


def test_a_new_group_beside_kept_ones_is_no_rename(tmp_path: Path) -> None:
    """A group added to a locked rack (the lock knows every other group) renders."""
    spec = copied("minimal", tmp_path)
    text = spec.read_text().replace(
        '  - {name: head,',
        '  - {name: cpu, node_type: head, count: 2, hostname: "cpu##", racks: r01}\n'
        '  - {name: head,')
    spec.write_text(text)
    result = render(spec, tmp_path / "o")
    assert result.exit_code == 0, result.output


def test_a_lock_conflict_cites_the_spec_key_that_caused_it(tmp_path: Path) -> None:
    """A subnet narrowed under a locked address: the error is at the lock line and cites
    networks.management.cidr in the spec, with its line and a caret."""
    spec = copied("hgx-h200", tmp_path)
    spec.write_text(spec.read_text().replace("cidr: 10.50.0.0/24", "cidr: 10.50.0.0/26"))
    result = render(spec, tmp_path / "o")
    assert result.exit_code == 1, result.output
    lines = spec.read_text().splitlines()
    at = next(n for n, line in enumerate(lines, start=1) if "10.50.0.0/26" in line)
    column = lines[at - 1].index("10.50.0.0/26") + 1
    head = re.search(rf"^{re.escape(str(lock_path(spec)))}:\d+:\d+: error\[LOCK-CONFLICT\] "
                     r"ib-leaf-1's management address 10\.50\.0\.160 .*$", result.output, re.M)
    assert head, result.output
    after = result.output[head.end():].splitlines()
    assert f"      = caused by: {spec}:{at}:{column}" in after[:4], result.output
    assert after[after.index(f"      = caused by: {spec}:{at}:{column}") + 2].index("^") == \
        len("      | ") + column - 1


def test_a_group_no_longer_in_its_locked_rack_cites_the_group_racks(tmp_path: Path) -> None:
    spec = copied("hgx-h200", tmp_path)
    spec.write_text(spec.read_text().replace(
        'hostname: "h200-mig#", racks: r03}', 'hostname: "h200-mig#", racks: r02}'))
    result = render(spec, tmp_path / "o")
    assert result.exit_code == 1, result.output
    assert "error[LOCK-CONFLICT] h200-mig1 is locked in rack r03" in result.output
    line = next(n for n, text in enumerate(spec.read_text().splitlines(), start=1)
                if "h200-mig#" in text)
    assert re.search(rf"= caused by: {re.escape(str(spec))}:{line}:\d+", result.output)
