"""A rendered folder confirmed current without rendering it again, from what its files were
rendered from.

Rendering is a function: the same spec bytes, the same lock, the same options and the same
tool (its code and data, the libraries it runs on, the Python running it) make the same bytes
(the golden tests hold every example to that). So once a render or a check has made the tree
of some inputs, the SHA-256s of that tree's manifest and of the lock text its plan made are
remembered under a key, the SHA-256 of those inputs (``inputs_key``), in the user's cache
(scan.py's folder, ``renders/<key>``: 130 bytes each, and what the commands print of the
plan, write/outcome.py; shared by every output folder, as it says nothing of any folder). A later
``render --check``, or a render over its own tree, with the same key, whose folder's manifest
has that SHA-256 and whose files all hold the bytes that manifest lists (``confirmed``: their
SHA-256s from scan.py, the stat record's where a file's stat is as recorded, else read again,
so a hand edit, a deleted file or a file the manifest does not list is still found), knows
what a render would make without making it: the emitters (some 8 s of CPU at 100,000 GPUs)
are not run; and a lock whose text has the remembered SHA-256 is the one the plan would make,
so it is not made again (0.5-1 s). Any other case (the spec, the lock, the tool or a library
changed; no entry, as in a fresh checkout or after the cache is emptied) renders and compares
as before, and remembers the key it rendered.

What this trusts beyond the stat record: that the output depends on nothing but the key's
inputs. The key holds the spec's bytes, the lock's text, the options that reach the plan
(``--reallocate``, ``--strict``), every file of the cluster_iac package (its code, templates
and catalog data: 2.6 MB read and hashed, some 15 ms; in a source checkout the templates and
schemas beside it too), the Python version, and the version
of each library the package requires (its installed metadata). An emitter that read anything
else (an environment variable, a file outside the package, the clock) would break it; none
does, as the output is byte-identical run to run and machine to machine by design. And a
render that writes the lock (without ``--reallocate``) remembers the key of the next render
over that lock too, with the same tree and lock: that trusts that a render over the lock it
wrote makes the same files and keeps the lock as it is (the lock holds the plan's
identities; tests/test_render_inputs.py holds every example to it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from cluster_iac.base.resources import schemas_dir, templates_dir
from cluster_iac.write.manifest import MANIFEST
from cluster_iac.write.outcome import Outcome
from cluster_iac.write.scan import Scanned, cache_folder

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # cluster_iac/
DISTRIBUTION = "cluster-iac"


def inputs_key(spec_file: str | Path | bytes, lock_digest: str | None,
               options: tuple[str, ...]) -> str:
    """The SHA-256 of what a render of ``spec_file`` (or of these spec bytes) is made from:
    the spec's bytes, the lock as read (its text's SHA-256, files.text_digest, which the
    render needs anyway; None: there was none), ``options``, and the tool (``tool_digest``)."""
    spec = spec_file if isinstance(spec_file, bytes) else Path(spec_file).read_bytes()
    digest = hashlib.sha256()
    for part in (spec, b"\0" if lock_digest is None else b"\1" + lock_digest.encode("ascii"),
                 "\0".join(options).encode("utf-8"), tool_digest().encode("ascii")):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def render_key(spec_file: str | Path | bytes, read: str | None, strict: bool,
               reallocate: tuple[str, ...]) -> str:
    """The key of a render of the spec (its file, or its bytes) with the lock as read
    (``read``: its SHA-256) and the options that reach the plan or what is printed of it:
    --strict and --reallocate."""
    return inputs_key(spec_file, read, ("strict" if strict else "", *reallocate))


@cache
def tool_digest() -> str:
    """The SHA-256 of the tool that renders: every file of the cluster_iac package (by path,
    in order; compiled bytecode left out) and of its templates and schemas where a source
    checkout keeps them beside the package (base/resources.py), the Python version and each
    required library's installed version."""
    digest = hashlib.sha256()
    for root in _roots():
        for name in _package_files(root):
            with open(os.path.join(root, name), "rb") as handle:
                digest.update(f"{os.path.basename(root)}/{name}".encode() + b"\0"
                              + hashlib.sha256(handle.read()).digest())
    digest.update(sys.version.encode("utf-8"))
    for name in _libraries():
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"\0{name}={version}".encode())
    return digest.hexdigest()


def _roots() -> list[str]:
    """The folders the tool's files are in: the package, and the templates and schemas where
    they are outside it (a source checkout's top level; a wheel has them inside)."""
    roots = [PACKAGE]
    for folder in (str(templates_dir()), str(schemas_dir())):
        if not folder.startswith(PACKAGE + os.sep):
            roots.append(folder)
    return roots


def _package_files(root: str = PACKAGE) -> list[str]:
    """Every file below ``root`` ('emit/slurm.py'), compiled bytecode left out, in order
    (plain os.walk: pathlib took most of the 0.1 s this once cost)."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        found += [name if rel == "." else f"{rel}/{name}" for name in files]
    return sorted(found)


def _libraries() -> list[str]:
    """The libraries cluster-iac requires (its installed metadata; none when it runs from a
    tree that is not installed, where the package's own files still make the key)."""
    try:
        required = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    names = {re.split(r"[\s<>=!~;\[(]", line, maxsplit=1)[0]
             for line in required if "extra ==" not in line}
    return sorted(name for name in names if name)


class Known(NamedTuple):
    """What the inputs of one key were last rendered to: the SHA-256s of the tree's manifest
    and of the lock text the plan made, and what the commands print of that plan
    (write/outcome.py; None where it is not known)."""

    manifest: str
    lock: str
    outcome: Outcome | None = None


def known(key: str) -> Known | None:
    """What the inputs of ``key`` were last rendered to, if this cache knows it: the entry's
    first line, the two SHA-256s; its second, if any, the outcome (an outcome cut short or
    garbled is none)."""
    try:
        text = (cache_folder() / "renders" / key).read_text(encoding="ascii")
    except (OSError, ValueError):
        return None
    first, _, rest = text.partition("\n")
    words = first.split()
    if len(words) != 2 or not all(len(w) == 64 for w in words):
        return None
    line = rest.partition("\n")[0]
    return Known(words[0], words[1], Outcome.parse(line) if line else None)


def remember(key: str, made: Known) -> None:
    """Keep, for the next run, what the inputs of ``key`` render to (a cache that cannot be
    written is only a slower run); an outcome the cache has is kept where ``made`` knows
    none."""
    had = known(key)
    if had == made or (had is not None and made.outcome is None and had[:2] == made[:2]):
        return
    folder = cache_folder() / "renders"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{key}.")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(f"{made.manifest} {made.lock}\n")
            if made.outcome is not None:
                handle.write(made.outcome.text() + "\n")
        os.replace(tmp, folder / key)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def confirmed(found: Scanned, made: Known | None) -> dict[str, str] | None:
    """The files a render would make (path -> SHA-256, the manifest left out) when the folder
    ``found`` holds exactly them: its manifest is the one ``made`` names, every file
    it lists holds the listed bytes, none is missing and nothing else is there. None
    otherwise (render and compare)."""
    digests, listed = found.digests, found.listed
    if (made is None or digests.get(MANIFEST) != made.manifest
            or found.foreign or len(digests) != len(listed) + 1):
        return None
    files: dict[str, str] = {}
    for path, digest in listed.items():
        if digest is None or digests.get(path) != digest:
            return None
        files[path] = digest
    return files
