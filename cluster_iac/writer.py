"""Write the rendered tree atomically, or compare it with what is on disk (--check)."""

from __future__ import annotations

import contextlib
import difflib
import os
import tempfile
from pathlib import Path, PurePosixPath

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
    """Write every changed file; remove files an earlier render made.

    Every new text goes to a temp file beside its target first; only when all are written are
    they renamed into place, so a full disk or a refused path leaves the old tree as it was.
    """
    files = with_manifest(files)
    removed = sorted(_previous(out_dir) - set(files))
    changed = [path for path, text in files.items() if _read(out_dir / path) != text]
    staged: list[tuple[Path, Path]] = []
    created: list[Path] = []
    try:
        for path in changed:
            target = out_dir / path
            created += _make_parents(target.parent)
            staged.append((_stage(target, files[path]), target))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):  # not empty: something else put a file there
                folder.rmdir()
        raise
    for tmp, target in staged:
        os.replace(tmp, target)
    for path in removed:
        (out_dir / path).unlink(missing_ok=True)
    return [path for path in changed + removed if path != MANIFEST]


def _stage(target: Path, text: str) -> Path:
    """Write ``text`` to a temp file in the target's folder (same file system: rename is atomic)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        # mkstemp makes 0600 files; rendered configs are read by other users (slurmd, ansible).
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _mode_for(target: Path) -> int:
    """Keep the mode of the file being replaced; a new file gets 0666 less the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the ones created, outermost first."""
    missing = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))


def write_file(target: Path, text: str) -> bool:
    """Write one file through a temp file + rename; False when it already holds ``text``."""
    if _read(target) == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(_stage(target, text), target)
    return True


def _previous(out_dir: Path) -> set[str]:
    """Files the last render wrote; only plain relative paths, so a hand-edited manifest can
    never make a render delete a file outside ``out_dir``."""
    text = _read(out_dir / MANIFEST)
    return {line for line in (text or "").splitlines() if _inside(line)}


def _inside(line: str) -> bool:
    path = PurePosixPath(line)
    return bool(line) and not path.is_absolute() and ".." not in path.parts and "\\" not in line


def _read(path: Path) -> str | None:
    try:
        # A file that is not UTF-8 (edited by hand, or binary) simply differs from our text.
        return path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
