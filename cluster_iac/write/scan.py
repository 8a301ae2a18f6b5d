"""What a rendered folder holds now, and each file's SHA-256, without reading every file.

The manifest (manifest.py) says which files are the tool's and what their SHA-256 was when it
wrote them; it is committed with the tree, so it must stay byte-identical run to run and can
hold no times. Whether a file still holds those bytes is told by a stat record kept outside
the tree, as git's index does: for each file the device, inode, size, modification and change
times (ns) seen once its bytes were known, and their SHA-256. A file whose stat is the one
recorded is taken to hold the recorded bytes; any other file (no record, another stat: edited,
replaced, touched) is read and hashed again, and only those are. The change time (ctime) is
set by the kernel on every write, rename, link and chmod, and no program can set it back, so
an editor that restores the modification time is still caught. A file changed within one
tick of the file system's clock after its stat was taken could keep the same times (git's
"racy" entries): an entry is recorded only when its ctime is RACY_NS older than the moment its
stat was taken, so any later write lands on a later ctime; render waits out those few
milliseconds once before it records.

The record lives in the user's cache ($CLUSTER_IAC_CACHE, else $XDG_CACHE_HOME/cluster-iac,
else ~/.cache/cluster-iac; trees/<SHA-256 of the folder's real path>, one per output
folder, some 140 bytes a file), not beside the tree: nothing appears in the repository that
holds the tree. A fresh checkout (CI) has no record and every file is hashed once (SHA-256 at
about 1 GB/s; a 100,000-GPU tree is 317 MiB in 41,788 files); a record that cannot be read or
written is only a slower run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cluster_iac.write.files import file_digest
from cluster_iac.write.manifest import MANIFEST, read_manifest

RACY_NS = 50_000_000
"""A file's timestamps come from the kernel's coarse clock, one tick (1 to 10 ms: HZ 1000 to
100) behind the fine clock time.time_ns() reads; 50 ms is five ticks at the coarsest."""
_VERSION = 1
CACHE_ENV = "CLUSTER_IAC_CACHE"
"""The cache folder, where set (the tests set it); else $XDG_CACHE_HOME/cluster-iac."""
Stat = str  # 'device:inode:size:mtime_ns:ctime_ns'


@dataclass
class Scanned:
    """A rendered folder as found: each of the tool's files with its SHA-256 now (the
    manifest's own included), the manifest as read, and what is there that the manifest does
    not list (files, symlinks, folders that hold none of the tool's files)."""

    digests: dict[str, str] = field(default_factory=dict)
    listed: dict[str, str | None] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)
    hashed: list[str] = field(default_factory=list)  # read and hashed: stat not as recorded


def scan(out: Path) -> Scanned:
    """``out`` as it is now (empty when it does not exist); the files whose stat is not the one
    recorded are hashed, and the record kept up to date with them."""
    found = Scanned()
    if not out.is_dir() or out.is_symlink():
        return found
    found.listed = read_manifest(out)
    stats: dict[str, Stat] = {}
    _walk(os.fspath(out), "", found, stats)
    found.foreign.sort()
    recorded = _read_record(out)
    fresh: dict[str, tuple[Stat, str]] = {}
    taken = time.time_ns()  # before any stat taken below
    for path in sorted(stats):
        entry = recorded.get(path)
        if entry is not None and entry[0] == stats[path]:
            found.digests[path] = entry[1]
            continue
        digest, key = _hashed(out / path)
        found.digests[path] = digest
        if path != MANIFEST:
            found.hashed.append(path)
            fresh[path] = (key, digest)
    if found.hashed:  # what was read once need not be read again
        kept = {p: recorded[p] for p in found.digests if p not in fresh and p in recorded}
        kept.update((p, e) for p, e in fresh.items() if _settled(e[0], taken))
        _write_record(out, kept)
    return found


def record(out: Path, digests: dict[str, str]) -> None:
    """Record the stat of each file of ``digests`` (path -> the SHA-256 of the bytes the caller
    just wrote or kept there), under the render's turn so no other render changes them
    meanwhile. The caller has just written or linked them (a link changes a file's ctime
    too), so their ctimes are no later than now: RACY_NS is waited out once (sleep, no CPU),
    then each file's stat taken once (an entry still too recent is left out)."""
    folder = os.fspath(out)
    paths = [p for p in digests if p != MANIFEST]
    time.sleep(RACY_NS / 1e9)
    taken = time.time_ns()  # before each stat below: the stat is no older than this
    entries: dict[str, tuple[Stat, str]] = {}
    for path in paths:
        try:
            key = _key(os.stat(os.path.join(folder, path), follow_symlinks=False))
        except OSError:
            continue
        if _settled(key, taken):
            entries[path] = (key, digests[path])
    _write_record(out, entries)


def record_file(out: Path) -> Path:
    """Where the stat record of the folder ``out`` lives."""
    name = hashlib.sha256(os.fsencode(os.path.realpath(out))).hexdigest()[:32]
    return cache_folder() / "trees" / name


def cache_folder() -> Path:
    """The user's cluster-iac cache: $CLUSTER_IAC_CACHE, else $XDG_CACHE_HOME/cluster-iac,
    else ~/.cache/cluster-iac."""
    return Path(os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"), "cluster-iac"))


def _walk(out: str, prefix: str, found: Scanned, stats: dict[str, Stat]) -> bool:
    """Each entry under ``out/prefix``: the manifest's files (and the manifest) with their
    stat, the rest as foreign (a folder that holds none of the tool's files too); symlinks
    are never followed. Whether the folder holds any of the tool's files. (Paths joined as
    strings: a pathlib join per folder was a third of a 100,000-GPU tree's scan.)"""
    owned = False
    with os.scandir(f"{out}/{prefix}" if prefix else out) as entries:
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.is_symlink():
                found.foreign.append(rel)
            elif entry.is_dir(follow_symlinks=False):
                if _walk(out, f"{rel}/", found, stats):
                    owned = True
                else:
                    found.foreign.append(rel)
            elif rel == MANIFEST or rel in found.listed:
                stats[rel] = _key(entry.stat(follow_symlinks=False))
                owned = True
            else:
                found.foreign.append(rel)
    return owned


def _hashed(path: Path) -> tuple[str, Stat]:
    """The file's SHA-256 and its stat taken before it was read (a write while it is read
    lands on a later ctime, so the entry will not match)."""
    key = _key(os.stat(path, follow_symlinks=False))
    return file_digest(path), key


def _key(st: os.stat_result) -> Stat:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _settled(key: Stat, taken_ns: int) -> bool:
    """Whether a write after ``taken_ns`` must land on a later ctime than ``key``'s."""
    return int(key.rpartition(":")[2]) + RACY_NS <= taken_ns


def _read_record(out: Path) -> dict[str, tuple[Stat, str]]:
    """The record: a header line naming the folder, then per file 'SHA-256 stat path'
    (a line format, as JSON took 0.3 s to read for 40,000 files)."""
    try:
        text = record_file(out).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every file is hashed
    head, _, body = text.partition("\n")
    if head != _header(out):
        return {}
    recorded: dict[str, tuple[Stat, str]] = {}
    for line in body.splitlines():
        digest, _, rest = line.partition(" ")
        key, _, path = rest.partition(" ")
        if len(digest) == 64 and key.count(":") == 4 and path and path != MANIFEST:
            recorded[path] = (key, digest)
    return recorded


def _header(out: Path) -> str:
    return f"cluster-iac stat record {_VERSION} {os.path.realpath(out)!r}"


def _write_record(out: Path, entries: dict[str, tuple[Stat, str]]) -> None:
    target = record_file(out)
    text = "".join([f"{_header(out)}\n", *(f"{digest} {key} {path}\n" for path, (key, digest)
                                            in sorted(entries.items()))])
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError:
        return  # no cache to write into: the next run hashes again
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
