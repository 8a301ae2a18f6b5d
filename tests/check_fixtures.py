"""Helpers for the validator tests: run the checks on a spec variant and pick findings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from ruamel.yaml import YAML

from cluster_iac.base.errors import Diagnostic
from cluster_iac.checks import run_checks
from cluster_iac.cli.main import main
from cluster_iac.plan import Plan
from tests.facility_fixtures import compile_data


def findings_of(data: dict[str, Any] | Plan, code: str | None = None) -> list[Diagnostic]:
    """The findings of a spec variant (or of a plan), optionally only one code."""
    plan = data if isinstance(data, Plan) else compile_data(data)
    found = run_checks(plan)
    return [f for f in found if code is None or f.code == code]


def errors_of(data: dict[str, Any] | Plan) -> list[Diagnostic]:
    return [f for f in findings_of(data) if f.is_error]


def messages(data: dict[str, Any] | Plan, code: str) -> list[str]:
    return [f.message for f in findings_of(data, code)]


def cli_on_spec(tmp_path: Path, data: dict[str, Any], name: str, command: str,
                *args: str) -> Result:
    """Write data as tmp_path/name and run `cluster-iac COMMAND SPEC ARGS...` on it."""
    path = tmp_path / name
    with path.open("w") as stream:
        YAML().dump(data, stream)
    return CliRunner().invoke(main, [command, str(path), *args])


def validate_spec(tmp_path: Path, data: dict[str, Any], name: str) -> str:
    """Write data as tmp_path/name, run `cluster-iac validate` on it (exit 0), its output."""
    result = cli_on_spec(tmp_path, data, name, "validate")
    assert result.exit_code == 0, result.output
    return result.output
