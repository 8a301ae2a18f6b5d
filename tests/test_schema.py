"""JSON Schema: the committed file matches the models, examples validate, editors find it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from cluster_iac.base.resources import schemas_dir
from cluster_iac.cli.main import main
from cluster_iac.load.loader import load_spec_file
from cluster_iac.spec.schema import SCHEMA_FILE, schema_text
from tests.conftest import EXAMPLES, ROOT

COMMITTED = ROOT / "schemas" / SCHEMA_FILE
MODELINE = "# yaml-language-server: $schema=../schemas/cluster.schema.json"
INVALID_SPECS = sorted((ROOT / "tests" / "data" / "invalid" / "spec").glob("*.yaml"))


def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(COMMITTED.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_committed_schema_is_not_stale() -> None:
    assert COMMITTED.read_text() == schema_text(), (
        "schemas/cluster.schema.json is stale: run "
        "'python -m cluster_iac schema > schemas/cluster.schema.json'")


def test_schema_command_prints_the_committed_file() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    assert result.output == COMMITTED.read_text()


def test_packaged_schema_is_the_committed_one() -> None:
    """In a source tree and in an installed wheel, the loader finds the same schema."""
    assert (schemas_dir() / SCHEMA_FILE).read_text() == COMMITTED.read_text()


def test_schema_is_draft_2020_12() -> None:
    schema = json.loads(COMMITTED.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_validates_against_the_schema(example: Path) -> None:
    data, _ = load_spec_file(example)
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_carries_the_yaml_language_server_modeline(example: Path) -> None:
    first = example.read_text().splitlines()[0]
    assert first == MODELINE
    target = (example.parent / first.split("$schema=", 1)[1]).resolve()
    assert target == COMMITTED.resolve()


@pytest.mark.parametrize("name", ["misspelt_top_key", "misspelt_nested_key", "wrong_type",
                                  "wrong_type_list", "bad_role", "bad_hostname_pattern",
                                  "missing_key", "bad_slurm_version"])
def test_schema_rejects_what_the_models_reject(name: str) -> None:
    """An editor flags the same mistakes as `cluster-iac validate` (for spec-level errors)."""
    data, _ = load_spec_file(ROOT / "tests" / "data" / "invalid" / "spec" / f"{name}.yaml")
    assert list(_validator().iter_errors(data))


def test_every_field_has_a_description() -> None:
    """Attribute docstrings become the editor's tooltips: none may be missing."""
    schema = json.loads(COMMITTED.read_text())
    missing = [where for where, prop in _properties(schema, schema, "")
               if not _description(schema, prop)]
    assert not missing, f"fields without a docstring: {missing}"


def test_every_section_and_field_has_its_own_description() -> None:
    """An editor shows a field's own description on hover: power, cooling and storage had
    none (their docstrings equalled their models', so pydantic dropped them)."""
    schema = json.loads(COMMITTED.read_text())
    missing = [where for where, prop in _properties(schema, schema, "")
               if not prop.get("description")]
    assert not missing


def test_defs_names_are_readable() -> None:
    """No module path in a $defs name (two models of one name made
    'cluster_iac__spec__scheduling__Storage')."""
    schema = json.loads(COMMITTED.read_text())
    assert [name for name in schema["$defs"] if not name.isidentifier() or "__" in name] == []


def _properties(schema: dict[str, Any], node: object, where: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, prop in (node.get("properties") or {}).items():
            found.append((f"{where}.{key}", prop))
        for key, value in node.items():
            found += _properties(schema, value, f"{where}/{key}")
    elif isinstance(node, list):
        for value in node:
            found += _properties(schema, value, where)
    return found


def _description(schema: dict[str, Any], prop: dict[str, Any]) -> str | None:
    """A field's own description, or that of the model it refers to (pydantic drops the
    field's copy when it equals the model's docstring)."""
    if prop.get("description"):
        return str(prop["description"])
    ref = prop.get("$ref")
    if ref:
        return schema["$defs"][ref.rsplit("/", 1)[1]].get("description")
    return None
