"""`render --check`: the files a render would write compared with the folder's (a unified
diff), and a rendered folder read back as its manifest lists it (`cluster-iac changes`)."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

from cluster_iac.write.files import read_or_none
from cluster_iac.write.manifest import read_manifest, with_manifest


def stale_diff(out_dir: Path, files: dict[str, str]) -> str:
    """Unified diff from what is on disk to what a render would write ('' when up to date)."""
    files = with_manifest(files)
    chunks: list[str] = []
    for path in sorted(set(files) | set(read_manifest(out_dir))):
        old = read_or_none(out_dir / path)
        new = files.get(path)
        if old == new:
            continue
        chunks.extend(difflib.unified_diff(
            (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        ))
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


class RenderedTree(Mapping[str, str]):
    """A rendered folder's files as its manifest lists them, each read from disk when asked
    and not kept."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.paths = [p for p in read_manifest(out_dir) if (out_dir / p).is_file()]

    def __getitem__(self, path: str) -> str:
        if path not in self._listed:
            raise KeyError(path)
        # compared with what a render would write, never written back: a damaged byte reads
        # as U+FFFD and the file is a change like any other
        return (self.out_dir / path).read_text(encoding="utf-8", errors="replace")

    @functools.cached_property
    def _listed(self) -> set[str]:
        return set(self.paths)

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)
