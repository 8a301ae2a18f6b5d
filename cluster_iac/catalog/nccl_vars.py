"""The environment variables NCCL reads, and in which releases (catalog/nccl_env_vars.tsv)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

Version = tuple[int, ...]

# The table was built from NVIDIA/nccl at 5067397c (2.30.7) by diffing every release tag; its
# 'source' column names the first and last tag whose src/ reads the variable.
_IN_SOURCE = re.compile(r"in source v(\d+(?:\.\d+)+)\.\.(v\d+(?:\.\d+)+|master)")
_MARKER = re.compile(r"^\[(DEPRECATED|REMOVED)([^\]]*)\]")
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")
_REPLACEMENT = re.compile(
    r"(?:use|favour of|->|replaced by|renamed|Old name of)\s+(NCCL_[A-Z0-9_]+)")


def parse_version(text: str) -> Version:
    """'2.21' -> (2, 21); '2.21.5' -> (2, 21, 5)."""
    return tuple(int(part) for part in text.split("."))


def at_least(target: Version, release: Version) -> bool:
    """Whether a target such as 2.21 (any 2.21.x) includes ``release`` (2.21.5 counts)."""
    return target >= release[: len(target)]


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class NcclVariable:
    """One row of the table."""

    name: str
    values: str
    default: str
    meaning: str
    first: Version | None  # first release whose source reads it (None: not recorded)
    deprecated: Version | None  # () when deprecated with no release named
    removed: Version | None
    replacement: str | None

    def status(self, target: Version) -> tuple[str, str] | None:
        """(code suffix, reason) when ``target`` must not use this variable, else None."""
        if self.removed is not None and at_least(target, self.removed):
            return "REMOVED", f"was removed in NCCL {_text(self.removed)}"
        if self.deprecated is not None and at_least(target, self.deprecated):
            since = f" since NCCL {_text(self.deprecated)}" if self.deprecated else ""
            return "DEPRECATED", f"is deprecated{since}"
        if self.first is not None and not at_least(target, self.first):
            return "TOO-NEW", f"is first read by NCCL {_text(self.first)}"
        return None


def _text(version: Version) -> str:
    return ".".join(str(part) for part in version)


def _row(row: dict[str, str]) -> NcclVariable:
    meaning, source = row["meaning"], row["source"]
    in_source = _IN_SOURCE.search(source)
    marker = _MARKER.match(meaning)
    deprecated = removed = None
    if marker:
        found = _VERSION.search(marker.group(2))
        version = parse_version(found.group()) if found else ()
        if marker.group(1) == "REMOVED":
            removed = version
        else:
            deprecated = version
    replacement = _REPLACEMENT.search(meaning)
    return NcclVariable(
        name=row["name"], values=row["values"], default=row["default"], meaning=meaning,
        first=parse_version(in_source.group(1)) if in_source else None,
        deprecated=deprecated, removed=removed,
        replacement=replacement.group(1) if replacement else None,
    )


@lru_cache(maxsize=1)
def nccl_variables() -> dict[str, NcclVariable]:
    """Every variable in the table, by name."""
    text = resources.files(__package__).joinpath("nccl_env_vars.tsv").read_text("utf-8")
    rows = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    return {row["name"]: _row(row) for row in rows}
