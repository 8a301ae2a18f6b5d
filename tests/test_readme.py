"""The README and the docs pages stay true: their commands, examples, output table and error
sample match the tool. Text that moved from the README to a page under docs/ is checked there."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.render import build
from tests.conftest import ROOT, example_build
from tests.lldp_fixtures import DATA, sample_spec

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```$", README, flags=re.M | re.S)
CI_RUN = ROOT / ".ci" / "run"
# The README's test command ends with this: the suite on 4 pytest-xdist workers, loadgroup so
# that the tests sharing a daemon stay on one worker (tests/conftest.py's xdist_group marks)
TEST_COMMAND = "python -m pytest -q -n 4 --dist loadgroup"


def _page(name: str) -> str:
    """A page of the documentation site, as written under docs/."""
    return (DOCS / name).read_text()


def _block_after(marker: str, text: str = README) -> str:
    """The first fenced block after the sentence containing ``marker`` (in the README, or in
    ``text``: a docs page)."""
    start = text.index(marker)
    match = re.compile(r"^```\w*\n(.*?)^```$", re.M | re.S).search(text, start)
    assert match, marker
    return match.group(1)


def test_readme_opens_with_the_two_newcomer_commands() -> None:
    (_, install), (_, tests) = BLOCKS[0], BLOCKS[1]
    assert README.index("```") < README.index("## ")  # before any section
    assert install.strip() == (".ci/install-deps python && python3 -m venv .venv && "
                               ". .venv/bin/activate && pip install . && "
                               "cluster-iac render examples/minimal.yaml -o out/")
    assert tests.strip().startswith(".ci/install-deps && python3 -m venv .venv")
    assert "pip install '.[test]'" in tests and tests.strip().endswith(f" && {TEST_COMMAND}")


def test_the_test_extra_installs_what_the_test_command_runs() -> None:
    """-n and --dist are pytest-xdist's options: '.[test]' must install it."""
    extra = re.search(r"^test = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
    assert extra and re.search(r'"pytest-xdist\b', extra.group(1)), "no pytest-xdist in test"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = BLOCKS[1][1].strip()
    lines = [ln for ln in CI_RUN.read_text().splitlines() if ln and not ln.startswith("#")]
    assert test_command in lines
    assert lines[-1] == test_command  # the last thing CI does, so its exit code is CI's


@pytest.mark.parametrize("script", ["run", "install-deps"])
def test_ci_scripts_are_strict_executable_bash(script: str) -> None:
    path = ROOT / ".ci" / script
    assert os.access(path, os.X_OK)
    lines = path.read_text().splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines


def test_readme_shows_the_minimal_example_verbatim() -> None:
    shown = _block_after("is the smallest useful spec")
    body = (ROOT / "examples" / "minimal.yaml").read_text().split("\ncluster:", 1)[1]
    assert shown == "cluster:" + body


def test_readme_error_sample_is_what_the_cli_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    errors = _page("errors.md")
    sample = _block_after("For example, `cluster-iac validate", errors)
    command = re.search(r"For example, `cluster-iac (validate \S+)`", errors)
    assert command
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, command.group(1).split())
    assert result.exit_code == 1
    assert result.output == sample


def test_readme_catalog_snippet_validates(tmp_path: Path) -> None:
    snippet = _block_after("an entry with a built-in key replaces the built-in one",
                           _page("hardware.md"))
    minimal = (ROOT / "examples" / "minimal.yaml").read_text()
    head, rest = minimal.split("node_types:\n", 1)
    spec = tmp_path / "custom.yaml"
    spec.write_text(head + snippet + rest.split("\n\n", 1)[1])
    plan = build(spec, emit=False).plan
    gpu_type = plan.node_types["gpu"]
    assert (gpu_type.platform, gpu_type.gpu_model, gpu_type.gpu_count) == (
        "hgx-h200-8gpu", "h200-sxm-141gb", 8)


def test_readme_lists_every_command() -> None:
    table = _table_after("## Commands")
    listed = {re.match(r"`cluster-iac (\w+)", row[0]).group(1) for row in table}  # type: ignore[union-attr]
    assert listed == set(main.list_commands(click.Context(main)))  # loaded or not


def test_readme_output_table_matches_a_render() -> None:
    # the SuperPOD (InfiniBand: opensm/) and the RoCE example (switches/)
    files = [*example_build("dgx-h100-superpod-4su").files,
             *example_build("spectrum-x-roce").files]
    top = {path.split("/", 1)[0] + ("/" if "/" in path else "") for path in files}
    listed = {row[0].strip("`") for row in _table_after("# Outputs", _page("outputs.md"))}
    assert listed == top


def _table_after(heading: str, text: str = README) -> list[list[str]]:
    """The table rows (each header left out) between ``heading`` and the next section."""
    section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows[1:]]


def test_readme_names_every_top_level_section_and_bolds_the_required_ones() -> None:
    from cluster_iac.spec.cluster import ClusterSpec

    paragraph = README.split("Top-level sections (required ones in bold):", 1)[1].split("\n\n")[0]
    bold = set(re.findall(r"\*\*`(\w+)`\*\*", paragraph))
    named = set(re.findall(r"`(\w+)`", paragraph))
    fields = ClusterSpec.model_fields
    assert bold == {name for name, field in fields.items() if field.is_required()}
    assert named == set(fields)


def test_install_deps_waits_for_the_dpkg_lock() -> None:
    """Every apt-get that takes the dpkg lock waits for it (DPkg::Lock::Timeout) rather than
    failing at once when another apt holds it; `update` is retried (the lists' own lock)."""
    text = (ROOT / ".ci" / "install-deps").read_text()
    assert "APT_WAIT=(-o DPkg::Lock::Timeout=600)" in text
    code = [line.split(" #", 1)[0] for line in text.splitlines()
            if not line.lstrip().startswith(("#", "echo"))]
    calls = [line for line in code if re.search(r"\bapt-get\b", line) and "clean" not in line]
    assert len(calls) == 3 and all('"${APT_WAIT[@]}"' in line for line in calls), calls
    assert not any("apt-get update" in line for line in code)  # only through apt_update


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _same(printed: str, value: float) -> bool:
    """``value`` printed at the precision of ``printed`` ('1,024', '0.08', '13.0')."""
    decimals = len(printed.split(".", 1)[1]) if "." in printed else 0
    return f"{value:,.{decimals}f}" == printed


def _fleet_table() -> tuple[list[list[str]], str]:
    """The README's fleet table (rows, header left out) and the text shared with the site."""
    match = re.search(r"^<!-- docs: fleets -->\n(.*?)^<!-- /docs: fleets -->$", README,
                      re.M | re.S)
    assert match, "README.md has no section marked '<!-- docs: fleets -->'"
    rows = [line for line in match.group(1).splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.split("|")[1:-1]] for row in rows[1:]], match.group(1)


def test_the_fleet_table_is_written_once() -> None:
    """docs/goodput.md shows the README's table (docs/hooks/readme.py), with none of its own."""
    page = _page("goodput.md")
    assert page.count("<!-- readme: fleets -->") == 1
    assert "| fleet (source) |" not in page and "| fleet (source) |" in README


def test_the_fleet_table_is_what_the_model_predicts() -> None:
    """Every figure of the README's table of published fleets, against the catalog and the
    model (plan/fleets.py; the Llama 3 job's ETTR from its spec): each fleet in catalog order,
    its shape, published figure, the predicted expected, lowest and highest figures, the ratio,
    and each published figure within the printed range."""
    from cluster_iac.plan.fleets import ENDS, fleets, predicted_per_day, scale
    from cluster_iac.plan.goodput import goodputs

    rows, shared = _fleet_table()
    order = iter(fleets().values())
    fleet = None
    seen: set[tuple[str, int]] = set()
    ettr_rows = 0
    for name, shape, published, tool, ratio in rows:
        if name != "same":
            fleet = next(order)
            generation, gpus = re.match(r"(\w+), ([\d,]+) GPUs", shape).groups()  # type: ignore[union-attr]
            assert (generation.lower(), _number(gpus)) == (fleet.generation, fleet.gpus), name
            given = re.search(r"([\d.]+)(?: interruptions)?/day", published)
            assert given and _same(given.group(1), fleet.per_day), (name, published)
            per_1000 = re.match(r"([\d.]+) per 1,000 node-days", published)
            assert per_1000 is None or _same(per_1000.group(1), fleet.per_node_day * 1000)
            figures = {end: predicted_per_day(fleet.gpus, fleet.generation, end, fleet.covers)
                       for end in ENDS}
            reference = fleet.per_day
            pattern = r"([\d.]+)(?:/day)? \(([\d.]+) - ([\d.]+)\)"
        elif "ETTR" in shape:
            assert fleet is not None and fleet.ettr_at_least is not None
            at_least = re.fullmatch(r"above (\d+) %", published)
            assert at_least and _same(at_least.group(1), 100 * fleet.ettr_at_least)
            spec = ROOT / re.search(r"`(tests/data/goodput/[\w.-]+)`", tool).group(1)  # type: ignore[union-attr]
            plan = build(spec, emit=False).plan
            figures = {end: 100 * (goodputs(plan, end)[0].useful or 0) for end in ENDS}
            printed = re.match(r"([\d.]+) % \(([\d.]+) - ([\d.]+)\)", tool)
            assert printed, tool
            assert all(_same(p, figures[end]) for p, end in
                       zip(printed.groups(), ("expected", "lowest", "highest"), strict=True))
            assert figures["highest"] < 100 * fleet.ettr_at_least < figures["lowest"]
            ettr_rows += 1
            continue
        else:
            assert fleet is not None
            size = int(_number(re.fullmatch(r"job of ([\d,]+) GPUs", shape).group(1)))  # type: ignore[union-attr]
            mttf = re.match(r"MTTF ([\d.]+) h", published)
            assert mttf and _same(mttf.group(1), fleet.mttf_h[size]), (fleet.key, size)
            seen.add((fleet.key, size))
            figures = {end: 24 / predicted_per_day(size, fleet.generation, end) for end in ENDS}
            reference = fleet.mttf_h[size]
            pattern = r"([\d.]+) h \(([\d.]+) - ([\d.]+)\)"
        printed = re.fullmatch(pattern, tool)
        assert printed, (name, shape, tool)
        expected, low_rates, high_rates = printed.groups()
        assert _same(expected, figures["expected"]), (name, shape, tool)
        assert _same(low_rates, figures["lowest"]) and _same(high_rates, figures["highest"])
        assert _same(ratio.split(" ", 1)[0], figures["expected"] / reference), (name, shape)
        # the spread shown honestly: the published figure lies within the printed range
        ends = sorted((_number(low_rates), _number(high_rates)))
        assert ends[0] <= reference <= ends[1], (name, shape)
    assert next(order, None) is None, "a catalog fleet the README's table does not show"
    assert seen == {(f.key, size) for f in fleets().values() for size in f.mttf_h}
    assert ettr_rows == sum(1 for f in fleets().values() if f.ettr_at_least is not None)
    spread = re.search(r"RSC-2 to OPT-175B is ([\d.]+)x per node", shared)
    assert spread and _same(spread.group(1),
                            scale(fleets()["opt175b"]) / scale(fleets()["rsc2"]))
def test_the_boot_path_of_a_new_node_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """The README's boot path, its cluster-iac lines run in order on the RoCE sample (the new
    node played by gpu-01, its rack's switch by mgmt-r01-1, whose real `ip -j link` and LLDP
    table tests/data holds; the manifest gives gpu-02's MAC on its planned port): each exits
    0, the lock gains the MACs, Kea reserves them, the change plan is JSON with the release
    the playbook lines pass, and the playbook asks for exactly the variables they pass. (No
    node is added here, so the plan's actions are the reservations' reload-dhcp alone; the
    added node's reload-dns and start-slurmd are tests/test_changeplan.py's.)"""
    block = _block_after("The commands, in order")
    monkeypatch.chdir(tmp_path)
    spec = sample_spec(tmp_path)
    spec.rename(tmp_path / "cluster.yaml")
    assert CliRunner().invoke(main, ["render", "cluster.yaml", "-o", "out/"]).exit_code == 0
    shutil.copy(ROOT / "tests" / "data" / "iplink" / "gpu-01.ip-link.json", tmp_path)
    shutil.copy(DATA / "mgmt-r01-1.lldp.json", tmp_path)
    Path("manifest.csv").write_text("serial,host,mac,port\n"
                                    "SN-2,gpu-02,9e:c9:5a:1d:e7:f2,mgmt-r01-1:swp5\n")
    ran = []
    for line in block.splitlines():
        if not line.startswith("cluster-iac "):
            continue
        line = line.replace("gpu-05", "gpu-01").replace("mgmt-r03-1", "mgmt-r01-1")
        words = shlex.split(line, comments=True)
        into = words[words.index(">") + 1] if ">" in words else None
        args = words[1:words.index(">")] if into else words[1:]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (line, result.output)
        if into:
            Path(into).write_text(result.stdout)
        ran.append(args[0])
    assert ran == ["changes", "macs", "macs", "changes", "render"]
    lock = Path("cluster.lock").read_text()
    assert "mac management gpu-01 ce:80:80:44:d2:ba\n" in lock
    assert "mac management gpu-02 9e:c9:5a:1d:e7:f2\n" in lock
    kea = Path("out/dhcp/kea-dhcp4.conf").read_text()
    assert "ce:80:80:44:d2:ba" in kea and "9e:c9:5a:1d:e7:f2" in kea
    changes = json.loads(Path("changes.json").read_text())
    playbook = [line for line in block.splitlines() if "-e cluster_iac_" in line]
    releases = {re.search(r"cluster_iac_release=(\S+)", line)[1] for line in playbook}
    assert len(playbook) == 2 and releases <= set(changes["actions"]), releases
    kinds = [action["kind"] for action in changes["actions"][releases.pop()]]
    assert kinds == ["reload-dhcp"]  # the new reservations (no node added here: no zone change)
    site = Path("out/ansible/site.yml").read_text()
    assert "pass -e cluster_iac_changes=FILE" in site and "-e cluster_iac_release=" in site
