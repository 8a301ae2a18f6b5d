"""The lock at its edges (issue 39), each case through the CLI: a node never left without
power by retired cords, every hint the tool prints is a command that works when followed."""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed

Spec = dict[str, Any]

FULL: Spec = {  # one rack whose PDUs have exactly the outlets its three GPU nodes and head take
    "cluster": {"name": "tiny"},
    "node_types": {"gpu": {"platform": "hgx-h100-8gpu"}, "head": {"platform": "mgmt-1u"}},
    "node_groups": [
        {"name": "gpu", "node_type": "gpu", "count": 3, "hostname": "gpu##", "racks": "r01"},
        {"name": "head", "role": "controller", "node_type": "head", "count": 1,
         "hostname": "head#", "racks": "r01"}],
    "rows": [{"name": "a", "racks": [{"names": "r01", "pdu": "three-415v"}]}],
    "power": {"pdu_profiles": {"three-415v": {"layout": "three", "voltage_v": 415,
                                              "phases": 3, "breaker_a": 63, "outlets": 8}}},
    "slurm": {"partitions": [{"name": "gpu", "node_groups": ["gpu"]}]},
}


def write(data: Spec, path: Path) -> Path:
    with path.open("w") as handle:
        YAML(typ="safe").dump(data, handle)
    return path


def render(spec: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(main, ["render", str(spec), "-o", str(out), *extra])


def cords(lock: Path) -> dict[str, int]:
    """Device -> its cords the lock holds on an outlet (retired ones left out)."""
    found: dict[str, int] = {}
    for line in lock.read_text().splitlines():
        if line.startswith("outlet "):
            found[line.split()[1]] = found.get(line.split()[1], 0) + 1
    return found


def hints(output: str) -> list[list[str]]:
    """The options of every '--reallocate X' a printed hint offers, once each."""
    return [["--reallocate", name] for name in
            dict.fromkeys(re.findall(r"'--reallocate ([^' ]+)'", output))]


def test_retired_cords_never_leave_a_new_node_without_power(tmp_path: Path) -> None:
    """Remove two nodes from a full rack, then add two others: the retired cords hold the
    outlets the new nodes need, so the render is refused at the retired cords' lock line,
    naming the rack, the PDU and those cords; its hint ('--reallocate retired') powers every
    PSU."""
    spec = write(FULL, tmp_path / "c.yaml")
    assert render(spec, tmp_path / "o1").exit_code == 0
    fewer = copy.deepcopy(FULL)
    fewer["node_groups"][0]["count"] = 1
    assert render(write(fewer, spec), tmp_path / "o2").exit_code == 0
    lock = lock_path(spec)
    assert "retired outlet gpu03 PSU6 " in lock.read_text()
    other = copy.deepcopy(fewer)
    other["node_groups"].insert(1, {"name": "gpx", "node_type": "gpu", "count": 2,
                                    "hostname": "gpx##", "racks": "r01"})
    write(other, spec)
    kept = lock.read_text()
    result = render(spec, tmp_path / "o3")
    assert result.exit_code == 1, result.output
    assert not (tmp_path / "o3").exists() and lock.read_text() == kept  # nothing written
    head = next(line for line in result.output.splitlines() if "[POWER-OUTLET]" in line)
    file, number = head.split(":")[:2]
    assert file == str(lock)
    assert kept.splitlines()[int(number) - 1].startswith("retired outlet ")
    assert "rack r01 PDU r01-pdu-a " in head and "gpx02 PSU1" in head
    assert "gpu02 PSU1 outlet 3" in head
    assert hints(result.output) == [["--reallocate", "retired"]]
    followed = render(spec, tmp_path / "o4", "--reallocate", "retired")
    assert followed.exit_code == 0, followed.output
    assert cords(lock) == {"gpu01": 6, "gpx01": 6, "gpx02": 6, "head1": 2}
    assert shlex.split("--reallocate retired") == hints(result.output)[0]


def _example(name: str) -> Spec:
    data: Spec = YAML(typ="safe").load(
        (Path(__file__).parent.parent / "examples" / f"{name}.yaml").read_text())
    return data


def follow(spec: Path, result: Result, out: Path) -> Result:
    """Follow every '--reallocate X' hint the output prints, one run after another, until the
    render passes or prints none: each run ends in an exit code (never a crash) and names no
    device it was told to reallocate in a LOCK error again (each hint makes progress)."""
    args: list[str] = []
    for step in range(8):
        told = hints(result.output)
        if result.exit_code == 0 or not told:
            return result
        args += [word for hint in told for word in hint]
        result = render(spec, out / f"step{step}", *args)
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            result.exception
        assert result.exit_code in (0, 1), result.output
        again = [line for line in result.output.splitlines()
                 if "error[LOCK-" in line and any(f" {name} " in line.split("]", 1)[1] + " "
                                                  for _, name in told)]
        assert not again, again
    raise AssertionError("the hints never settle")


def test_a_collision_after_a_merge_clears_with_its_hint(tmp_path: Path) -> None:
    """Two branches each add a node from one lock; the merged lock (both sides' lines) has
    them on one U and outlets: LOCK-COLLISION, whose hint ('--reallocate DEVICE') is applied
    before the collision check, so following it renders."""
    data = _example("minimal")
    data["power"]["pdu_profiles"]["three-415v"]["breaker_a"] = 63
    base = write(data, tmp_path / "base.yaml")
    assert render(base, tmp_path / "o0").exit_code == 0
    one, two = copy.deepcopy(data), copy.deepcopy(data)
    one["node_groups"].append({"name": "svc", "node_type": "head", "count": 1,
                               "hostname": "svc#", "racks": "r01"})
    two["node_groups"][0]["count"] = 3
    locks = []
    for n, side in enumerate((one, two)):
        spec = write(side, tmp_path / f"side{n}.yaml")
        lock_path(spec).write_text(lock_path(base).read_text())
        assert render(spec, tmp_path / f"o{n + 1}").exit_code == 0
        locks.append(lock_path(spec).read_text().splitlines())
    merged = copy.deepcopy(one)
    merged["node_groups"][0]["count"] = 3
    spec = write(merged, tmp_path / "merged.yaml")
    head = [line for line in locks[0] if line.startswith("#") and not line.startswith("# end")]
    body = sorted({line for lines in locks for line in lines if not line.startswith("#")})
    lock_path(spec).write_text("\n".join(head + body) + "\n")  # both sides, one trailer lost
    result = render(spec, tmp_path / "o3")
    assert result.exit_code == 1 and "error[LOCK-TRAILER]" in result.output, result.output
    lock_path(spec).write_text(sealed("\n".join(head + body) + "\n"))  # the merge resolved
    result = render(spec, tmp_path / "o4")
    assert result.exit_code == 1 and "error[LOCK-COLLISION]" in result.output, result.output
    assert follow(spec, result, tmp_path).exit_code == 0


def test_hints_after_removing_a_rack_the_lock_holds_devices_in(tmp_path: Path) -> None:
    """hgx-h200 without rack r03 (its MIG server and head node moved to r02): the lock holds
    them and the leaf and access switch in r03; each '--reallocate' hint, followed, gets
    further (it used to crash with KeyError: 'r03' once the nodes were reallocated) until
    only the spec's own errors are left."""
    data = _example("hgx-h200")
    spec = write(data, tmp_path / "c.yaml")
    assert render(spec, tmp_path / "o0").exit_code == 0
    for group in data["node_groups"][1:]:
        group["racks"] = "r02"
    data["rows"][0]["racks"].pop(1)
    data["fabric"]["compute"]["racks"] = "r02"
    result = render(write(data, spec), tmp_path / "o1")
    assert result.exit_code == 1 and "error[LOCK-CONFLICT]" in result.output
    last = follow(spec, result, tmp_path)
    assert "error[LOCK-" not in last.output and "error[" in last.output  # r02's power


def test_cords_of_devices_removed_in_the_same_change_name_them_in_the_hint(
        tmp_path: Path) -> None:
    """Two nodes removed and two others added in one change: the removed ones' cords still
    hold their outlets; the hint names them ('--reallocate gpu02', ...), and following it
    powers every PSU."""
    spec = write(FULL, tmp_path / "c.yaml")
    assert render(spec, tmp_path / "o1").exit_code == 0
    other = copy.deepcopy(FULL)
    other["node_groups"][0]["count"] = 1
    other["node_groups"].insert(1, {"name": "gpx", "node_type": "gpu", "count": 2,
                                    "hostname": "gpx##", "racks": "r01"})
    result = render(write(other, spec), tmp_path / "o2")
    assert result.exit_code == 1 and "error[POWER-OUTLET]" in result.output, result.output
    assert hints(result.output) == [["--reallocate", "gpu02"], ["--reallocate", "gpu03"]]
    assert follow(spec, result, tmp_path).exit_code == 0
    assert cords(lock_path(spec)) == {"gpu01": 6, "gpx01": 6, "gpx02": 6, "head1": 2}


def _sealed_minimal(tmp_path: Path) -> tuple[Path, str]:
    spec = write(_example("minimal"), tmp_path / "c.yaml")
    assert render(spec, tmp_path / "o0").exit_code == 0
    return spec, lock_path(spec).read_text()


def test_a_lock_cut_short_is_a_located_error_and_nothing_is_written(tmp_path: Path) -> None:
    """A lock cut at a line boundary (its trailer and the lines before it lost) or in the
    middle of a line still parses, but its trailer is missing: LOCK-TRAILER at its last
    line, nothing written, the lock untouched (it used to render and move identities)."""
    spec, text = _sealed_minimal(tmp_path)
    assert text.splitlines()[-1].startswith("# end: ")
    lines = text.splitlines(keepends=True)
    place = next(n for n, line in enumerate(lines) if line.startswith("place gpu02"))
    cuts = {"line": "".join(lines[:place]), "mid-line": text[:text.index("place gpu02") + 9],
            "trailer": "".join(lines[:-1])}
    for what, cut in cuts.items():
        lock_path(spec).write_text(cut)
        out = tmp_path / f"out-{what}"
        result = render(spec, out)
        assert result.exit_code == 1, (what, result.output)
        head = next(line for line in result.output.splitlines() if "error[LOCK-TRAILER]" in line)
        assert head.startswith(f"{lock_path(spec)}:{len(cut.splitlines())}:"), (what, head)
        assert not out.exists() and lock_path(spec).read_text() == cut, what


def test_a_bad_merge_or_an_unsealed_edit_is_refused_at_the_trailer(tmp_path: Path) -> None:
    """A line added (a merge), a line dropped and a line changed: each LOCK-TRAILER at the
    trailer's line; a deliberate edit with the trailer the error prints renders."""
    spec, text = _sealed_minimal(tmp_path)
    lines = text.splitlines(keepends=True)
    n = len(lines)
    edits = {"added": "".join(lines[:-1]) + "place gpu09 r01 30 8\n" + lines[-1],
             "dropped": "".join(lines[:3] + lines[4:]),
             "changed": text.replace("place head1 r01 17 1", "place head1 r01 30 1")}
    for what, edited in edits.items():
        lock_path(spec).write_text(edited)
        result = render(spec, tmp_path / f"out-{what}")
        assert result.exit_code == 1, (what, result.output)
        head = next(line for line in result.output.splitlines() if "error[LOCK-TRAILER]" in line)
        number = int(head.split(":")[1])
        assert number == len(edited.splitlines()) and abs(number - n) <= 1, (what, head)
    printed = re.search(r"make its last line: (# end: .*)$", result.output, re.MULTILINE)
    assert printed is not None
    lock_path(spec).write_text("".join(edits["changed"].splitlines(keepends=True)[:-1])
                               + printed.group(1) + "\n")
    again = render(spec, tmp_path / "out-sealed")
    assert again.exit_code == 0, again.output
    assert "place head1 r01 30 1\n" in lock_path(spec).read_text()


def test_a_lock_from_before_the_trailer_is_read_once_and_rewritten_with_it(
        tmp_path: Path) -> None:
    spec, text = _sealed_minimal(tmp_path)
    old = "".join(text.splitlines(keepends=True)[:-1]).replace(
        "# cluster-iac lock 2", "# cluster-iac lock 1", 1)
    lock_path(spec).write_text(old)
    check = CliRunner().invoke(main, ["render", "--check", str(spec), "-o",
                                      str(tmp_path / "o0")])
    assert check.exit_code != 0  # CI: the lock would change (it gains its trailer)
    assert render(spec, tmp_path / "o1").exit_code == 0
    assert lock_path(spec).read_text() == text  # the same identities, sealed
