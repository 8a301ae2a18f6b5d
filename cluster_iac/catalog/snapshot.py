"""The built-in catalog's YAML files as one JSON document, read at start-up instead of YAML.

The YAML files (with their comments and sources) are what people edit; parsing them takes
about 0.1 s, parsing this JSON well under a millisecond. After editing a catalog file:

    python -m cluster_iac.catalog > cluster_iac/catalog/builtin.json

(tests/test_catalog.py fails while the JSON and the YAML differ).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

SNAPSHOT = "builtin.json"


def snapshot_text() -> str:
    """Every catalog YAML file of the package, parsed, keyed by file name."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    folder = resources.files(__package__)
    data = {item.name: yaml.load(item.read_text("utf-8"))
            for item in sorted(folder.iterdir(), key=lambda i: i.name)
            if item.name.endswith(".yaml")}
    return json.dumps(data, indent=1) + "\n"  # in the files' order: media are tried in it


@lru_cache(maxsize=1)
def _snapshot() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(SNAPSHOT).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def builtin_file(name: str) -> Any:
    """The parsed content of the catalog file ``name`` (e.g. 'gpus.yaml')."""
    return _snapshot()[name]


