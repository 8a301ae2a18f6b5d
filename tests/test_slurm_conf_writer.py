"""slurm.conf through a writer that knows its format; slurm.extra checked against the release."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from cluster_iac.base.errors import CompileError, Severity
from cluster_iac.cli.main import main
from cluster_iac.emit import render_all
from cluster_iac.emit.slurm_conf import conf_line, conf_pair, conf_value
from cluster_iac.plan.slurm import OWNED_KEYS
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import example_data

# --- the writer ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "written"), [
    ("bf_continue", "bf_continue"),
    ("a b", '"a b"'),
    ("", '""'),
    ("x#y", "x\\#y"),
    ("c:\\d", "c:\\\\d"),
    ('say"hi', 'say"hi'),
    (True, "YES"),
    (8, "8"),
])
def test_values_are_escaped_and_quoted_as_slurm_reads_them(value: object, written: str) -> None:
    assert conf_value(value) == written


@pytest.mark.parametrize("value", ["a\nNodeName=evil", "a\rb", "tab\there", "nul\x00",
                                   'two "words"', '"quoted"'])
def test_values_slurm_cannot_carry_are_refused(value: str) -> None:
    with pytest.raises(ValueError):
        conf_value(value)


@pytest.mark.parametrize("key", ["Node Name", "A=B", "", "1Key", "Key\n"])
def test_keys_must_be_parameter_names(key: str) -> None:
    with pytest.raises(ValueError):
        conf_pair(key, "x")


def test_a_record_is_one_line() -> None:
    assert conf_line([("PartitionName", "gpu"), ("Nodes", "a[1-2]")]) == \
        "PartitionName=gpu Nodes=a[1-2]"


# --- slurm.extra --------------------------------------------------------------------------------


def _diagnostics(extra: dict[str, Any], version: str = "22.05") -> list[tuple[str, str]]:
    data = example_data("minimal", version)
    data["slurm"]["extra"] = extra
    try:
        plan = compile_data(data)
    except CompileError as exc:
        return [(d.code, str(d.path[-1])) for d in exc.diagnostics]
    return [(d.code, str(d.path[-1])) for d in plan.slurm.findings]


def test_a_known_key_is_written_once_and_replaces_a_generated_one() -> None:
    data = example_data("minimal")
    data["slurm"]["extra"] = {"SchedulerParameters": "bf_continue,bf_max_job_test=500",
                              "MailDomain": "example.org"}
    files = render_all(compile_data(data))
    lines = files["slurm/slurm.conf"].splitlines()
    assert [ln for ln in lines if ln.startswith("SchedulerParameters=")] == \
        ["SchedulerParameters=bf_continue,bf_max_job_test=500"]
    assert lines.index("SchedulerParameters=bf_continue,bf_max_job_test=500") < \
        lines.index("MailDomain=example.org")


@pytest.mark.parametrize("key", sorted(OWNED_KEYS))
def test_owned_keys_are_refused_with_the_field_that_sets_them(key: str) -> None:
    data = example_data("minimal")
    data["slurm"]["extra"] = {key: "x"}
    with pytest.raises(CompileError) as info:
        compile_data(data)
    [diag] = info.value.diagnostics
    assert (diag.code, diag.path) == ("SLURM-EXTRA-OWNED", ("slurm", "extra", key))
    assert OWNED_KEYS[key] in diag.message and diag.hint == f"set {OWNED_KEYS[key]} instead"


def test_owned_keys_are_refused_in_any_case() -> None:
    assert _diagnostics({"gRESTYPES": "gpu,mps"}) == [("SLURM-EXTRA-OWNED", "gRESTYPES")]


def test_an_unknown_key_gets_did_you_mean() -> None:
    data = example_data("minimal")
    data["slurm"]["extra"] = {"SchedulerParamters": "bf_continue"}
    with pytest.raises(CompileError) as info:
        compile_data(data)
    [diag] = info.value.diagnostics
    assert diag.code == "SLURM-EXTRA-KEY" and "SchedulerParameters" in (diag.hint or "")


def test_a_key_of_a_newer_release_is_refused_for_an_older_one() -> None:
    assert _diagnostics({"TLSType": "tls/none"}, "22.05") == [("SLURM-EXTRA-KEY", "TLSType")]
    assert _diagnostics({"TLSType": "tls/none"}, "24.11") == []
    assert _diagnostics({"FrontendName": "fe1"}, "26.05") == [("SLURM-EXTRA-OWNED",
                                                                "FrontendName")]
    assert _diagnostics({"AccountingStorageLoc": "/x"}, "26.05") == [
        ("SLURM-EXTRA-KEY", "AccountingStorageLoc")]


def test_a_key_the_table_cannot_vouch_for_is_a_warning() -> None:
    data = example_data("minimal", "23.11")
    data["slurm"]["extra"] = {"TLSType": "tls/none"}
    plan = compile_data(data)
    [diag] = plan.slurm.findings
    assert (diag.code, diag.severity) == ("SLURM-EXTRA-KEY-UNSURE", Severity.WARNING)


def test_a_key_in_another_case_is_written_but_warned() -> None:
    assert _diagnostics({"maildomain": "example.org"}) == [("SLURM-EXTRA-CASE", "maildomain")]
    assert _diagnostics({"maildomain": "a", "MailDomain": "b"}) == [
        ("SLURM-EXTRA-DUPLICATE", "MailDomain")]


@pytest.mark.parametrize("value", ["bf_continue\nNodeName=evil CPUs=1",
                                   "x\rPartitionName=p Nodes=ALL", 'a "b"'])
def test_a_value_cannot_add_a_line(value: str) -> None:
    assert _diagnostics({"SchedulerParameters": value}) == [
        ("SLURM-EXTRA-VALUE", "SchedulerParameters")]


# --- validate catches what would kill slurmctld (the real-daemon tests show it would) ----------


@pytest.mark.parametrize(("extra", "code"), [
    ({"NodeName": "evil CPUs=1"}, "SLURM-EXTRA-OWNED"),
    ({"GresTypes": "gpu,mps"}, "SLURM-EXTRA-OWNED"),
    ({"MaxConcurentJobs": "10"}, "SLURM-EXTRA-KEY"),
    # the loader refuses a control character in any spec string, before slurm.extra's check
    ({"SchedulerParameters": "bf_continue\nPartitionName=x Nodes=ALL"}, "SPEC-CONTROL-CHAR"),
    ({"SchedulerParameters": 'bf_continue "x y"'}, "SLURM-EXTRA-VALUE"),
])
def test_validate_refuses_extra_that_would_kill_slurmctld(extra: dict[str, str], code: str,
                                                          tmp_path: Any) -> None:
    from ruamel.yaml import YAML

    data = example_data("minimal")
    data["slurm"]["extra"] = extra
    spec = tmp_path / "spec.yaml"
    YAML(typ="safe", pure=True).dump(data, spec)
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    assert f"error[{code}]" in result.output and f"{spec}:" in result.output
