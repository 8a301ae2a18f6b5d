"""Write the rendered tree atomically as a whole, or compare it with what is on disk (--check).

The new tree is built in a staging folder beside the output folder (unchanged files hard-linked,
so they keep their inode, mode and time) and swapped with it in one rename (Linux
renameat2 RENAME_EXCHANGE): a render killed at any moment leaves the whole previous tree or the
whole new one, and the next render removes what a killed one left beside it; renders into one
folder take turns (a lock on the folder that holds it). The output folder
holds only what the manifest lists (each file with its SHA-256); anything else there, a symlink,
or a listed file that changed since and would be removed, is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import errno
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

MANIFEST = ".cluster-iac-manifest"
"""Lists each file cluster-iac wrote with its SHA-256 (the format of ``sha256sum``), so a later
render knows which files are its own and may replace or remove them."""
_STAGING = ".cluster-iac-new."
_PREVIOUS = ".cluster-iac-old."
_RENAME_EXCHANGE = 2  # linux/fs.h


class OutputRefused(OSError):
    """The output folder holds something the tool did not write; nothing was changed."""

    def __init__(self, folder: Path, paths: list[str], why: str) -> None:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(errno.EEXIST, f"{why}: {shown}")
        self.filename = str(folder)
        self.paths = paths


def with_manifest(files: dict[str, str]) -> dict[str, str]:
    return {**files, MANIFEST: _listing({path: _text_digest(text) for path, text in files.items()})}


def stale_diff(out_dir: Path, files: dict[str, str]) -> str:
    """Unified diff from what is on disk to what a render would write ('' when up to date)."""
    files = with_manifest(files)
    chunks: list[str] = []
    for path in sorted(set(files) | set(_manifest(out_dir))):
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
    """Replace the tree in ``out_dir`` by ``files`` as a whole; the paths that changed.

    Raises OutputRefused (nothing written) when the folder holds a file, folder or symlink the
    manifest does not list, or a listed file that would be removed has changed since it was
    written; OSError when the system refuses a write (the old tree stays as it was).
    """
    out = Path(os.path.realpath(out_dir))  # a symlink named by -o: the folder it names
    out.parent.mkdir(parents=True, exist_ok=True)
    with _turn(out.parent):
        _recover(out)
        on_disk = _own_files(out, files)
        # A file already on disk is unchanged when its SHA-256 is; the others are written (and
        # hashed as they are written), so no output is encoded or held twice.
        digests = {path: _text_digest(files[path]) for path in files if path in on_disk}
        changed = sorted(path for path in files if on_disk.get(path, "") != digests.get(path))
        removed = sorted(set(on_disk) - set(files) - {MANIFEST})
        if not changed and not removed:
            listing = _listing(digests)
            if on_disk.get(MANIFEST) == _text_digest(listing):
                return []
        stage = _stage_tree(out, files, set(changed), digests)
        try:
            _swap(stage, out)
        finally:
            shutil.rmtree(stage, ignore_errors=True)  # the previous tree, or a staging left over
    return changed + removed


@contextlib.contextmanager
def _turn(folder: Path) -> Iterator[None]:
    """An exclusive lock (flock) on the folder that holds the output and its staging folders,
    for one render's whole write: a second render into the same output waits its turn rather
    than removing the first one's staging folder as a leftover (which broke the tree)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _listing(digests: dict[str, str]) -> str:
    """The manifest: each file's SHA-256 and path, in ``sha256sum`` format, by path."""
    return "".join(f"{digests[path]}  {path}\n" for path in sorted(digests))


def _own_files(out: Path, files: dict[str, str]) -> dict[str, str]:
    """The files in ``out`` (path -> SHA-256), after checking that all of them are the tool's."""
    if not out.exists():
        return {}
    if out.is_symlink() or not out.is_dir():
        raise OutputRefused(out, [str(out)], "the output is not a folder")
    listed = _manifest(out)
    found: dict[str, str] = {}
    foreign: list[str] = []
    folders: set[str] = set()
    for root, dirs, names in os.walk(out):
        base = Path(root)
        for name in sorted(dirs + names):
            path = base / name
            rel = path.relative_to(out).as_posix()
            if path.is_symlink():
                foreign.append(rel)
            elif path.is_dir():
                folders.add(rel)
            elif rel == MANIFEST or rel in listed:
                found[rel] = _file_digest(path)
            else:
                foreign.append(rel)
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
    parents = {parent.as_posix() for path in found for parent in PurePosixPath(path).parents}
    foreign += sorted(folders - parents)  # an empty folder the tool did not make
    if foreign:
        raise OutputRefused(out, sorted(foreign), "the output folder holds files cluster-iac did "
                            "not write (not in its manifest); move them away or choose another "
                            "folder")
    edited = [path for path, digest in found.items() if path not in files
              and path != MANIFEST and listed.get(path) != digest]
    if edited:
        raise OutputRefused(out, sorted(edited), "files cluster-iac no longer makes were changed "
                            "since it wrote them; it will not remove them: move them away")
    return found


def _stage_tree(out: Path, files: dict[str, str], changed: set[str],
                digests: dict[str, str]) -> Path:
    """The whole new tree in a staging folder beside ``out`` (same file system): changed files
    written, the others hard-linked, then the manifest of them all."""
    stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{_STAGING}"))
    digests = dict(digests)
    try:
        os.chmod(stage, _folder_mode(out))
        made: set[PurePosixPath] = set()
        for path in sorted(files):
            target = stage / path
            for folder in reversed(PurePosixPath(path).parents[:-1]):
                if folder not in made:  # a new folder keeps the old one's mode
                    (stage / folder).mkdir()
                    os.chmod(stage / folder, _folder_mode(out / folder))
                    made.add(folder)
            if path in changed:
                digests[path] = _write(target, files[path], _file_mode(out / path))
            else:
                os.link(out / path, target)  # unchanged: same inode, mode and time
        _write(stage / MANIFEST, _listing(digests), _file_mode(out / MANIFEST))
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


_CHUNK = 1 << 20
"""Text is encoded a slice at a time: encoding an 84 MiB file at once would take 84 MiB of
fresh memory (page faults cost more than the copy), and the peak would hold it beside the
text."""


def _chunks(text: str) -> Iterator[bytes]:
    for start in range(0, len(text), _CHUNK):
        yield text[start:start + _CHUNK].encode("utf-8")


def _text_digest(text: str) -> str:
    digest = hashlib.sha256()
    for chunk in _chunks(text):
        digest.update(chunk)
    return digest.hexdigest()


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write(target: Path, text: str, mode: int) -> str:
    """Write ``text`` as UTF-8 into a new file; its SHA-256."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    digest = hashlib.sha256()
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            for chunk in _chunks(text):
                digest.update(chunk)
                handle.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def _swap(stage: Path, out: Path) -> None:
    """``stage`` becomes ``out`` in one step; the previous tree is then at ``stage``."""
    if not out.exists():
        os.rename(stage, out)
        return
    if _exchange(stage, out):
        return
    # No RENAME_EXCHANGE (not Linux, or a file system without it): two renames; a kill between
    # them leaves the previous tree beside the output, and the next render puts it back.
    previous = out.parent / stage.name.replace(_STAGING, _PREVIOUS)
    os.rename(out, previous)
    os.rename(stage, out)
    os.rename(previous, stage)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100  # AT_FDCWD
    if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _recover(out: Path) -> None:
    """Undo what a killed render left beside ``out``: put a previous tree moved aside back when
    ``out`` is missing, then remove every staging folder."""
    parent = out.parent
    if not parent.is_dir():
        return
    prefix = f".{out.name}"
    leftovers = sorted(p for p in parent.iterdir() if p.name.startswith(prefix)
                       and (_STAGING in p.name or _PREVIOUS in p.name)
                       and p.is_dir() and not p.is_symlink())
    for path in leftovers:
        if _PREVIOUS in path.name and not out.exists():
            os.rename(path, out)
        else:
            shutil.rmtree(path, ignore_errors=True)


def _folder_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777 if path.is_dir() else _default(0o777)
    except OSError:
        return _default(0o777)


def _file_mode(target: Path) -> int:
    """Keep the mode of the file being replaced; a new file gets 0666 less the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return _default(0o666)


def _default(mode: int) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def write_file(target: Path, text: str) -> bool:
    """Write one file through a temp file + rename; False when it already holds ``text``."""
    if _read(target) == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)
    try:
        _write(Path(tmp), text, _file_mode(target))
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return True


def _manifest(out_dir: Path) -> dict[str, str | None]:
    """Path -> SHA-256 of the files the last render wrote (None for a line without one, from
    an older manifest: such a file may be replaced but never removed). Only plain relative
    paths count, so a hand-edited manifest can never reach outside ``out_dir``."""
    text = _read(out_dir / MANIFEST)
    listed: dict[str, str | None] = {}
    for line in (text or "").splitlines():
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64:
            digest, path = "", line
        if _inside(path):
            listed[path] = digest or None
    return listed


def _inside(line: str) -> bool:
    path = PurePosixPath(line)
    return (bool(line) and not path.is_absolute() and ".." not in path.parts
            and "\\" not in line and line != MANIFEST)


def _read(path: Path) -> str | None:
    try:
        # A file that is not UTF-8 (edited by hand, or binary) simply differs from our text.
        return path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
