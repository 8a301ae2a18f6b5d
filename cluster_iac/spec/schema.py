"""The spec's JSON Schema, as editors and `cluster-iac schema` see it."""

from __future__ import annotations

import json

from cluster_iac.spec.cluster import ClusterSpec

SCHEMA_FILE = "cluster.schema.json"
SCHEMA_ID = "https://github.com/cluster-iac/cluster-iac/schemas/cluster.schema.json"


def schema_dict() -> dict[str, object]:
    schema = ClusterSpec.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def schema_text() -> str:
    """Deterministic text of the schema (sorted keys, trailing newline)."""
    return json.dumps(schema_dict(), indent=2, sort_keys=True) + "\n"
