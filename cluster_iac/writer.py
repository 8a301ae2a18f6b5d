"""Write the rendered tree atomically, or compare it with what is on disk (--check)."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

MANIFEST = ".cluster-iac-manifest"
"""Lists the files cluster-iac wrote, so a later render can remove the ones it no longer makes."""


def with_manifest(files: dict[str, str]) -> dict[str, str]:
    listing = "".join(f"{path}\n" for path in sorted(files))
    return {**files, MANIFEST: listing}


def stale_diff(out_dir: Path, files: dict[str, str]) -> str:
    """Unified diff from what is on disk to what a render would write ('' when up to date)."""
    files = with_manifest(files)
    chunks: list[str] = []
    for path in sorted(set(files) | _previous(out_dir)):
        old = _read(out_dir / path)
        new = files.get(path)
        if old == new:
            continue
        chunks.extend(difflib.unified_diff(
            (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        ))
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def write_tree(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Write every file through a temp file + rename; remove files an earlier render made."""
    files = with_manifest(files)
    removed = sorted(_previous(out_dir) - set(files))
    changed = []
    for path, text in files.items():
        if write_file(out_dir / path, text):
            changed.append(path)
    for path in removed:
        (out_dir / path).unlink(missing_ok=True)
    return changed + removed


def write_file(target: Path, text: str) -> bool:
    """Write one file through a temp file + rename; False when it already holds ``text``."""
    if _read(target) == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def _previous(out_dir: Path) -> set[str]:
    text = _read(out_dir / MANIFEST)
    return {line for line in (text or "").splitlines() if line and ".." not in line}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
