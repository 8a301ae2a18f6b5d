"""Where templates/ and schemas/ are: inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # cluster_iac/


def data_dir(name: str) -> Path:
    """The packaged copy (wheel) when present, else the checkout's top-level folder."""
    packaged = _PACKAGE / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent / name


def templates_dir() -> Path:
    return data_dir("templates")


def schemas_dir() -> Path:
    return data_dir("schemas")
