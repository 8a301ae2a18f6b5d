"""`cluster-iac init`: a starting spec, written by a YAML serializer, that validates."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.init import Answers, spec_data, starting_spec
from cluster_iac.cli.main import main
from cluster_iac.render import build

CASES = [
    ["--nodes", "4"],
    ["--nodes", "1"],
    ["--nodes", "3", "--fabric", "none"],
    ["--nodes", "32", "--gpu", "h200-sxm-141gb", "--lustre", "--accounting"],
    ["--nodes", "16", "--fabric", "roce", "--voltage", "208", "--breaker", "50"],
    ["--nodes", "8", "--voltage", "230", "--phases", "1"],
    ["--platform", "dgx-h100", "--nodes", "64", "--lustre", "--oss", "4"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a))
def test_the_starting_spec_validates_without_errors(args: list[str], tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    made = CliRunner().invoke(main, ["init", *args, "-o", str(spec)])
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(main, ["validate", str(spec)])
    assert checked.exit_code == 0, checked.output
    assert "error[" not in checked.output


def test_the_answers_are_in_the_spec(tmp_path: Path) -> None:
    text = CliRunner().invoke(main, ["init", "--name", "h200", "--nodes", "32", "--gpu",
                                     "h200-sxm-141gb", "--lustre", "--accounting"]).output
    data = YAML(typ="safe").load(text)
    assert data["cluster"]["name"] == "h200"
    assert data["node_types"]["gpu"]["gpu"] == {"model": "h200-sxm-141gb"}
    # the platform has no storage NIC: one is added, the platform's own list kept
    assert data["node_types"]["gpu"]["nics_add"] == [{"role": "storage", "model": "cx7-ndr"}]
    assert "nics" not in data["node_types"]["gpu"]
    assert data["node_groups"][0]["count"] == 32
    assert data["fabric"]["compute"]["technology"] == "infiniband"
    assert data["storage"]["lustre"]["oss_group"] == "oss"
    assert data["slurm"]["accounting"]["storage"]["password_env"] == "SLURMDBD_STORAGE_PASS"
    plan = build_text(text, tmp_path).plan
    assert plan.gpu_count == 256 and plan.node_types["gpu"].gpu_model == "h200-sxm-141gb"


def build_text(text: str, tmp: Path):  # type: ignore[no-untyped-def]
    path = tmp / "spec.yaml"
    path.write_text(text)
    return build(path, emit=False)


def test_nodes_per_rack_are_the_most_the_checks_accept() -> None:
    """HGX H100 at 10.2 kW: 4 a rack is 40.8 kW, over the 40 kW an air-cooled rack sheds;
    3 pass. One more than init chose fails the checks."""
    text = starting_spec(Answers(nodes=12))
    data = YAML(typ="safe").load(text)
    assert data["node_groups"][0]["per_rack"] == 3
    from cluster_iac.cli.init import _errors, _platform

    answers = Answers(nodes=12)
    racks = {"gpu": 3, "svc": 1, "net": 1}
    more = spec_data(answers, _platform(answers), 4, racks)
    assert {d.code for d in _errors(more)} >= {"COOLING-AIR"}


def test_the_spec_is_written_by_a_serializer_and_is_deterministic() -> None:
    """Same answers, same bytes; the YAML reads back as the data it was made from."""
    answers = Answers(nodes=6, lustre=True)
    first, second = starting_spec(answers), starting_spec(answers)
    assert first == second
    assert first.startswith("# Written by `cluster-iac init`")
    data = YAML(typ="safe").load(first)
    assert data["node_groups"][0]["hostname"] == "gpu##"  # '#' inside a value, not a comment


def test_init_refuses_to_overwrite_a_file(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text("mine\n")
    result = CliRunner().invoke(main, ["init", "-o", str(spec)])
    assert result.exit_code == 2 and "exists" in result.output
    assert spec.read_text() == "mine\n"


@pytest.mark.parametrize("args,words", [
    (["--platform", "azure-nd-h100-v5"], "is not a GPU server platform of the catalog; one of"),
    (["--platform", "hgx-h100"], "is not a GPU server platform of the catalog; one of"),
    (["--gpu", "h300"], "GPU 'h300' is not in the catalog; one of"),
    (["--name", "My Cluster"], "name 'My Cluster': lower-case letters"),
    (["--nodes", "2", "--breaker", "10"], "a larger --breaker or --voltage"),
])
def test_answers_no_design_can_meet_are_refused_with_why(args: list[str], words: str) -> None:
    result = CliRunner().invoke(main, ["init", *args])
    assert result.exit_code == 1
    assert words in result.output and "Traceback" not in result.output
