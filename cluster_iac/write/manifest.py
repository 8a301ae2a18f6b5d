"""The manifest in the output folder (MANIFEST): made for the files a render writes, and
read back, only plain relative paths counted, by the next render and by --check."""

from __future__ import annotations

from pathlib import Path

from cluster_iac.write.files import read_or_none, text_digest

MANIFEST = ".cluster-iac-manifest"
"""Lists each file cluster-iac wrote with its SHA-256 (the format of ``sha256sum``), so a later
render knows which files are its own and may replace or remove them."""


def with_manifest(files: dict[str, str]) -> dict[str, str]:
    """``files`` and the manifest that lists them."""
    digests = {path: text_digest(text) for path, text in files.items()}
    return {**files, MANIFEST: manifest_text(digests)}


def manifest_text(digests: dict[str, str]) -> str:
    """The manifest: each file's SHA-256 and path, in ``sha256sum`` format, by path."""
    return "".join(f"{digests[path]}  {path}\n" for path in sorted(digests))


def read_manifest(out_dir: Path) -> dict[str, str | None]:
    """Path -> SHA-256 of the files the last render wrote (None for a line without one, from
    an older manifest: such a file may be replaced but never removed). Only plain relative
    paths count, so a hand-edited manifest can never reach outside ``out_dir``."""
    text = read_or_none(out_dir / MANIFEST)
    listed: dict[str, str | None] = {}
    for line in (text or "").splitlines():
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64:
            digest, path = "", line
        if _inside(path):
            listed[path] = digest or None
    return listed


def _inside(line: str) -> bool:
    """A plain relative path: not absolute, no '..' part, no backslash (string tests, as
    PurePosixPath would read it, at a tenth of the cost: a manifest has 40,000 lines)."""
    return (bool(line) and not line.startswith("/") and ".." not in line.split("/")
            and "\\" not in line and line != MANIFEST)
