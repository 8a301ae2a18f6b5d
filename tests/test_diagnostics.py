"""Diagnostics: pydantic errors -> located codes, 'did you mean', and the printed form."""

from __future__ import annotations

import copy

import pytest

from cluster_iac.base.errors import CompileError, Diagnostic, Severity
from cluster_iac.base.suggest import closest, did_you_mean
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.load.loader import load_spec_file, load_spec_text
from cluster_iac.spec.cluster import ClusterSpec
from cluster_iac.spec.parse import _field_names, parse_spec
from tests.conftest import EXAMPLE_IDS, ROOT

SPEC = """\
cluster:
  name: tiny
node_types:
  gpu: {platform: hgx-h100-8gpu}
node_groups:
  - {name: gpu, node_type: gpu, count: 2, hostname: "gpu##", racks: r01}
rows:
  - {name: a, racks: [{names: r01, pdu: ab}]}
power:
  pdu_profiles:
    ab: {layout: ab, voltage_v: 415, phases: 3, breaker_a: 32}
slurm:
  partitions:
    - {name: gpu, node_groups: [gpu]}
"""


def _parse_errors(text: str) -> list[Diagnostic]:
    data, _ = load_spec_text(text)
    with pytest.raises(CompileError) as info:
        parse_spec(data)
    return info.value.diagnostics


def test_the_base_spec_parses() -> None:
    data, _ = load_spec_text(SPEC)
    assert parse_spec(data).cluster.name == "tiny"


def test_misspelt_required_key_is_one_error_with_a_suggestion() -> None:
    [diag] = _parse_errors(SPEC.replace("node_groups:\n", "node_grups:\n"))
    assert (diag.code, diag.path) == ("SPEC-UNKNOWN-KEY", ("node_grups",))
    assert diag.hint == "did you mean 'node_groups'?"


def test_misspelt_optional_key_in_a_list_item() -> None:
    [diag] = _parse_errors(SPEC.replace("racks: r01}", "racks: r01, per_rak: 2}"))
    assert (diag.code, diag.path) == ("SPEC-UNKNOWN-KEY", ("node_groups", 0, "per_rak"))
    assert diag.message == "unknown key 'per_rak' in node_groups[0]"
    assert diag.hint == "did you mean 'per_rack'?"


def test_misspelt_key_under_a_dict_of_models() -> None:
    [diag] = _parse_errors(SPEC.replace("{platform: hgx", "{platfrom: hgx"))
    assert diag.path == ("node_types", "gpu", "platfrom")
    assert diag.hint == "did you mean 'platform'?"


def test_wrong_type_names_the_field_and_how_to_write_it() -> None:
    [diag] = _parse_errors(SPEC.replace("count: 2", "count: [2]"))
    assert (diag.code, diag.path) == ("SPEC-TYPE", ("node_groups", 0, "count"))
    assert diag.message.startswith("node_groups[0].count: Input should be a valid integer")
    assert diag.hint == "count takes a whole number, e.g. count: 8"


def test_choice_error_lists_the_choices_and_suggests_one() -> None:
    [diag] = _parse_errors(SPEC.replace("layout: ab", "layout: abb"))
    assert diag.code == "SPEC-CHOICE"
    assert diag.path == ("power", "pdu_profiles", "ab", "layout")
    assert diag.hint == "did you mean 'ab'?"


def test_every_error_of_the_stage_at_once_in_document_order() -> None:
    text = (SPEC.replace("name: tiny", "name: Tiny")
                .replace("count: 2", "count: -1")
                .replace("breaker_a: 32", "breaker_a: 32, colour: red"))
    diags = _parse_errors(text)
    assert [(d.code, d.path) for d in diags] == [
        ("SPEC-FORMAT", ("cluster", "name")),
        ("SPEC-VALUE", ("node_groups", 0, "count")),
        ("SPEC-UNKNOWN-KEY", ("power", "pdu_profiles", "ab", "colour")),
    ]


def test_missing_key_is_cited_at_its_parent() -> None:
    [diag] = _parse_errors(SPEC.replace(" count: 2,", ""))
    assert (diag.code, diag.path) == ("SPEC-MISSING", ("node_groups", 0))
    assert diag.message == "missing required key 'count' in node_groups[0]"


def test_format_has_position_code_source_line_caret_and_hint() -> None:
    text = SPEC.replace("node_groups:\n", "node_grups:\n")
    data, source = load_spec_text(text, "c.yaml")
    with pytest.raises(CompileError) as info:
        parse_spec(data)
    printed = format_diagnostic(info.value.diagnostics[0], source, "c.yaml")
    assert printed.splitlines() == [
        "c.yaml:5:1: error[SPEC-UNKNOWN-KEY] unknown key 'node_grups' in the top level",
        "    5 | node_grups:",
        "      | ^",
        "      = hint: did you mean 'node_groups'?",
    ]


def test_unknown_key_caret_sits_under_the_key_not_the_value() -> None:
    text = SPEC.replace("name: tiny", "name: tiny\n  sight: x")
    data, source = load_spec_text(text, "c.yaml")
    with pytest.raises(CompileError) as info:
        parse_spec(data)
    printed = format_diagnostic(info.value.diagnostics[0], source, "c.yaml").splitlines()
    assert printed[0].startswith("c.yaml:3:3: error[SPEC-UNKNOWN-KEY] unknown key 'sight'")
    assert printed[2] == "      |   ^"
    assert printed[3] == "      = hint: did you mean 'site'?"


def test_warning_without_source_prints_one_line() -> None:
    diag = Diagnostic("X-Y", "something", severity=Severity.WARNING)
    assert format_diagnostic(diag, None, "f.yaml") == "f.yaml:1:1: warning[X-Y] something"


def test_did_you_mean() -> None:
    names = ["dgx-h100", "dgx-a100", "hgx-h100-8gpu", "mgmt-1u"]
    assert closest("dgx-h10", names) == "dgx-h100"
    assert closest("DGX-A100", names) == "dgx-a100"
    assert closest("zzz", names) is None
    assert did_you_mean("zzz", names) == ("expected one of: 'dgx-a100', 'dgx-h100', "
                                          "'hgx-h100-8gpu', 'mgmt-1u'")
    assert did_you_mean("zzz", [f"n{i}" for i in range(20)]) is None


def test_finding_about_an_absent_section_quotes_no_line() -> None:
    """A default the file never wrote is cited at 1:1; quoting line 1 would mislead."""
    _, source = load_spec_text("# modeline\ncluster: {name: x}\n", "c.yaml")
    diag = Diagnostic("FABRIC-NONE", "no fabric", ("fabric", "compute"), Severity.INFO)
    assert format_diagnostic(diag, source, "c.yaml") == "c.yaml:1:1: info[FABRIC-NONE] no fabric"
    diag = Diagnostic("X", "about the name", ("cluster", "name", "deeper"))
    assert format_diagnostic(diag, source, "c.yaml").splitlines()[1:] == [
        "    2 | cluster: {name: x}", "      | " + " " * 10 + "^"]


def _mappings(node: object, path: tuple[str | int, ...] = ()):  # type: ignore[no-untyped-def]
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _mappings(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _mappings(value, (*path, index))


@pytest.mark.parametrize("example", EXAMPLE_IDS)
def test_every_misspelt_key_of_every_example_gets_one_error_and_a_suggestion(example: str) -> None:
    """Drop a letter from each key the examples use, one at a time: exactly one located error,
    'did you mean' the real key (no second 'missing key' error for a required one)."""
    data, _ = load_spec_file(ROOT / "examples" / f"{example}.yaml")
    tried = 0
    for path, mapping in list(_mappings(data)):
        for key in [k for k in mapping if len(k) >= 4 and k in _field_names(ClusterSpec, path)]:
            wrong = key[: len(key) // 2] + key[len(key) // 2 + 1:]
            mutated = copy.deepcopy(data)
            target = mutated
            for part in path:
                target = target[part]
            renamed = {(wrong if k == key else k): v for k, v in target.items()}
            target.clear()
            target.update(renamed)
            with pytest.raises(CompileError) as info:
                parse_spec(mutated)
            found = [(d.code, d.path, d.hint) for d in info.value.diagnostics]
            assert found == [("SPEC-UNKNOWN-KEY", (*path, wrong), f"did you mean '{key}'?")]
            tried += 1
    assert tried > 20


def test_an_unquoted_version_is_explained_as_a_yaml_number() -> None:
    diags = _parse_errors(SPEC.replace("name: tiny", "name: tiny\n  slurm_version: 23.02\n"
                                                     "  nccl_version: 2.20"))
    assert [(d.code, d.path[-1]) for d in diags] == [("SPEC-CHOICE", "slurm_version"),
                                                     ("SPEC-TYPE", "nccl_version")]
    assert diags[0].message.startswith("cluster.slurm_version: the number 23.02 is not one of")
    assert diags[0].hint == ('YAML reads the unquoted value as the number 23.02; put it in '
                             'quotes, e.g. slurm_version: "23.02"')
    assert diags[1].hint == "YAML reads the unquoted value as the number 2.2; put it in quotes"
