"""`render --check`: the files a render would write compared with the folder's, and a rendered
folder read back as its manifest lists it (`cluster-iac changes`).

Two ways to the same answer. ``TreeCheck`` is the one the CLI runs, in work proportional to
what differs: the folder's SHA-256s come from scan.py (the manifest and the stat record:
only a file whose stat changed is read), each rendered file is hashed as its family is made
and dropped when its SHA-256 is the one on disk, and only the files that differ are kept and
read back for the diff. ``stale_diff`` and ``foreign_paths`` are the plain way, every file
rendered in memory and every file on disk read and compared; the tests hold the first to the
second (tests/test_check_paths.py).
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cluster_iac.formats.chunks import concatenated
from cluster_iac.write.files import Text, read_or_none, text_digest
from cluster_iac.write.manifest import MANIFEST, manifest_text, read_manifest, with_manifest
from cluster_iac.write.scan import Scanned

Made = tuple[str, str | None]
"""One rendered file as the check keeps it: its SHA-256, and its text when it differs from
the folder's (None when the folder holds these bytes)."""


def stale_diff(out_dir: Path, files: dict[str, str]) -> str:
    """Unified diff from what is on disk to what a render would write ('' when up to date):
    the plain way, every file read."""
    files = with_manifest(files)
    chunks: list[str] = []
    for path in sorted(set(files) | set(read_manifest(out_dir))):
        chunks += file_diff(path, read_or_none(out_dir / path), files.get(path))
    return "".join(chunks)


def foreign_paths(out_dir: Path) -> list[str]:
    """What ``out_dir`` holds that its manifest does not list (a render refuses to run over
    it): the plain way, a walk of the folder."""
    listed = read_manifest(out_dir)
    found: list[str] = []
    folders: set[str] = set()
    owned: set[str] = set()
    for root, dirs, names in os.walk(out_dir):
        for name in dirs + names:
            path = Path(root) / name
            rel = path.relative_to(out_dir).as_posix()
            if path.is_symlink():
                found.append(rel)
            elif path.is_dir():
                folders.add(rel)
            elif rel == MANIFEST or rel in listed:
                owned.add(rel)
            else:
                found.append(rel)
    parents = {p.as_posix() for rel in owned for p in Path(rel).parents}
    return sorted(found + sorted(folders - parents))


def file_diff(path: str, old: str | None, new: str | None) -> list[str]:
    """One file's unified diff (no lines when equal); /dev/null for a side that is missing."""
    if old == new:
        return []
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null")
    return [line if line.endswith("\n") else line + "\n" for line in lines]


class TreeCheck:
    """The sink of render --check (emit.render_each): it runs in the process that rendered a
    family (this one or the forked worker, which inherits ``on_disk``), and answers each
    file's SHA-256, with its text only where the folder's bytes differ."""

    def __init__(self, found: Scanned) -> None:
        self.on_disk = found.digests

    def compare_all(self, files: dict[str, Text]) -> list[tuple[str, Made]]:
        made: list[tuple[str, Made]] = []
        for path in sorted(files):
            text = files.pop(path)
            digest = text_digest(text)
            if digest == self.on_disk.get(path):
                made.append((path, (digest, None)))
            else:
                whole = text if isinstance(text, str) else concatenated(text)  # made again
                made.append((path, (digest, whole)))
        return made


@dataclass(frozen=True)
class Checked:
    """What render --check found: the folder's files, the rendered files that differ (their
    text) and the paths rendered, the files of the folder's manifest no longer made, and
    what the folder holds that the tool did not write."""

    out_dir: Path
    found: Scanned
    differ: dict[str, str]  # path -> the text a render would write (the manifest's too)
    rendered: tuple[str, ...]  # every path a render writes, the manifest left out
    gone: tuple[str, ...]  # the tool's files on disk that a render would remove
    manifest: str = ""  # the SHA-256 of the manifest a render would write

    @classmethod
    def of(cls, out_dir: Path, found: Scanned, made: dict[str, Made]) -> Checked:
        differ = {path: text for path, (_digest, text) in made.items() if text is not None}
        listing = manifest_text({path: digest for path, (digest, _text) in made.items()})
        manifest = text_digest(listing)
        if manifest != found.digests.get(MANIFEST):
            differ[MANIFEST] = listing
        gone = tuple(sorted(set(found.digests) - set(made) - {MANIFEST}))
        return cls(out_dir, found, differ, tuple(sorted(made)), gone, manifest)

    @property
    def stale(self) -> bool:
        return bool(self.differ or self.gone or self.found.foreign)

    @property
    def changed(self) -> set[str]:
        """Every path whose bytes differ between the folder and the render (the manifest's
        among them when it differs): the only files the change plan need read."""
        return {*self.differ, *self.gone}

    def diff(self) -> str:
        """The same text as stale_diff, from the files that differ only."""
        chunks: list[str] = []
        for path in sorted({*self.differ, *self.gone}):
            chunks += file_diff(path, read_or_none(self.out_dir / path), self.differ.get(path))
        return "".join(chunks)

    def trees(self) -> tuple[RenderedTree | None, Mapping[str, str]]:
        """The folder's tree (None when it has no manifest: nothing rendered there) and the
        rendered one, for the change plan: a file the folder already holds is read from it,
        once for both sides."""
        reader = _Reader(self.out_dir)
        found = self.found  # its listed files as the scan found them: a stat only for the rest
        old = (RenderedTree(self.out_dir, reader, [
            p for p in found.listed if p in found.digests or (self.out_dir / p).is_file()])
            if MANIFEST in found.digests else None)
        return old, _Rendered(self.rendered, self.differ, reader)


class _Reader:
    """A folder's files as text, the last one read kept: the change plan asks for a path of
    the old tree and then of the new one, which for an unchanged file are the same bytes."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self._last: tuple[str, str] = ("", "")

    def read(self, path: str) -> str:
        if self._last[0] != path:
            # compared with what a render would write, never written back: a damaged byte
            # reads as U+FFFD and the file is a change like any other
            self._last = (path, (self.out_dir / path).read_text(encoding="utf-8",
                                                                errors="replace"))
        return self._last[1]


class RenderedTree(Mapping[str, str]):
    """A rendered folder's files as its manifest lists them, each read from disk when asked
    and not kept."""

    def __init__(self, out_dir: Path, reader: _Reader | None = None,
                 paths: list[str] | None = None) -> None:
        """``paths``: the manifest's paths that are files, where the caller knows them
        (Checked.trees, from the folder's scan: the same paths, in the manifest's order)."""
        self.out_dir = out_dir
        self.paths = [p for p in read_manifest(out_dir) if (out_dir / p).is_file()] \
            if paths is None else paths
        self._reader = reader or _Reader(out_dir)

    def __getitem__(self, path: str) -> str:
        if path not in self._listed:
            raise KeyError(path)
        return self._reader.read(path)

    @functools.cached_property
    def _listed(self) -> set[str]:
        return set(self.paths)

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


class _Rendered(Mapping[str, str]):
    """The rendered tree: the text kept where it differs from the folder's, else the
    folder's file (the same bytes)."""

    def __init__(self, paths: tuple[str, ...], differ: dict[str, str], reader: _Reader) -> None:
        self._paths, self._differ, self._reader = paths, differ, reader

    @functools.cached_property
    def _set(self) -> set[str]:
        return set(self._paths)

    def __getitem__(self, path: str) -> str:
        if path not in self._set:
            raise KeyError(path)
        return self._differ[path] if path in self._differ else self._reader.read(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)
