"""The built-in catalog's YAML files, read at start-up from a JSON copy while it is current.

The YAML files (with their comments and sources) are the catalog: people edit them, and
nothing else. Parsing them takes about 0.1 s, parsing one JSON document well under a
millisecond, so builtin.json keeps them parsed, with a SHA-256 of their bytes: when the
files no longer match it (a catalog file was just edited), the YAML is parsed instead, so
an edit takes effect at once, and the copy only saves time once it is made again:

    python -m cluster_iac.catalog > cluster_iac/catalog/builtin.json

(tests/test_catalog.py fails while the copy is not current, so a release ships a fresh one).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

SNAPSHOT = "builtin.json"


def _yaml_files() -> list[Traversable]:
    folder = resources.files(__package__)
    return sorted((item for item in folder.iterdir() if item.name.endswith(".yaml")),
                  key=lambda item: item.name)


def yaml_digest() -> str:
    """The SHA-256 of every catalog YAML file's name and bytes, in name order."""
    digest = hashlib.sha256()
    for item in _yaml_files():
        digest.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.hexdigest()


def parsed_yaml() -> dict[str, Any]:
    """Every catalog YAML file of the package, parsed, keyed by file name (in the files'
    order: media are tried in it)."""
    from ruamel.yaml import YAML  # only when the copy is stale or being made

    yaml = YAML(typ="safe")
    return {item.name: yaml.load(item.read_text("utf-8")) for item in _yaml_files()}


def snapshot_text() -> str:
    """builtin.json as it should be: the digest of the YAML files and their parsed content."""
    return json.dumps({"yaml_sha256": yaml_digest(), "files": parsed_yaml()}, indent=1) + "\n"


@lru_cache(maxsize=1)
def _snapshot() -> dict[str, Any]:
    copy = resources.files(__package__).joinpath(SNAPSHOT)
    data: dict[str, Any] = json.loads(copy.read_text("utf-8")) if copy.is_file() else {}
    if data.get("yaml_sha256") == yaml_digest():
        return dict(data["files"])
    return parsed_yaml()


def builtin_file(name: str) -> Any:
    """The parsed content of the catalog file ``name`` (e.g. 'gpus.yaml')."""
    return _snapshot()[name]
