"""The built-in hardware catalog, merged with the spec's own entries."""

from __future__ import annotations

from functools import lru_cache

from cluster_iac.catalog.snapshot import builtin_file
from cluster_iac.spec.hardware import Catalog

_FILES = {"gpus": "gpus.yaml", "cpus": "cpus.yaml", "nics": "nics.yaml",
          "switches": "switches.yaml", "platforms": "platforms.yaml",
          "power_shelves": "power_shelves.yaml", "drives": "drives.yaml",
          "coolants": "coolants.yaml"}


@lru_cache(maxsize=1)
def builtin_catalog() -> Catalog:
    """The catalog shipped with cluster-iac (validated by the same models as user entries)."""
    data = {section: builtin_file(name) for section, name in _FILES.items()}
    return Catalog.model_validate(data)


def merged_catalog(extra: Catalog) -> Catalog:
    """Built-in entries overlaid with the spec's ``catalog`` section (same key replaces)."""
    base = builtin_catalog()
    return Catalog(**{
        section: {**getattr(base, section), **getattr(extra, section)} for section in _FILES
    })
