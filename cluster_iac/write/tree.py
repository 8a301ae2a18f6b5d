"""Write the rendered tree atomically as a whole (--check compares it instead: compare.py).

The new tree is built in a staging folder beside the output folder while the files are rendered
(each changed file written as soon as its family is made, by whichever process made it; an
unchanged file is never written, and is hard-linked into the staging folder only when something
changed, so it keeps its inode, mode and time, and a render that changes nothing touches
nothing) and swapped with it in one rename (Linux renameat2 RENAME_EXCHANGE): a render killed
at any moment leaves the whole previous tree or the whole new one, and the next render removes
what a killed one left beside it; renders into one folder take turns (a lock on the folder
that holds it). The output folder holds only what the manifest lists (each file with its
SHA-256; scan.py tells which files changed since without reading the others); anything else
there, a symlink, or a listed file that changed since and would be removed, is refused, and
the output folder is left as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from cluster_iac.write.files import (
    Text,
    file_mode,
    folder_mode,
    text_digest,
    write_changed,
    write_new,
)
from cluster_iac.write.inputs import Known, confirmed
from cluster_iac.write.manifest import MANIFEST, manifest_text
from cluster_iac.write.scan import Scanned, record, scan

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


def write_tree(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Replace the tree in ``out_dir`` by ``files`` as a whole; the paths that changed.

    Raises OutputRefused (nothing written) when the folder holds a file, folder or symlink the
    manifest does not list, or a listed file that would be removed has changed since it was
    written; OSError when the system refuses a write (the old tree stays as it was).
    """
    with staged_tree(out_dir) as tree:
        return tree.commit(dict(tree.write_all(dict(files))))


@contextlib.contextmanager
def staged_tree(out_dir: Path) -> Iterator[StagedTree]:
    """A new tree for ``out_dir``, built in a staging folder beside it while the files are
    rendered; ``commit`` swaps it in. Leaving the block any other way (an error, a refusal, a
    commit that found nothing changed) removes the staging folder and any folder made for it,
    so the output stays as it was. Renders into one folder take turns for the whole block."""
    out = Path(os.path.realpath(out_dir))  # a symlink named by -o: the folder it names
    made = _make_folders(out.parent)
    try:
        with _turn(out.parent):
            _recover(out)
            on_disk, listed = _own_files(out)
            stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{_STAGING}"))
            tree = StagedTree(out, stage, on_disk, listed)
            try:
                os.chmod(stage, folder_mode(out))
                yield tree
            finally:
                shutil.rmtree(stage, ignore_errors=True)  # the previous tree, or the unused stage
            if tree.kept is not None:  # its files' stat, once the previous tree's links are gone
                record(out, tree.kept)
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


class StagedTree:
    """The staging folder of one render. ``write_all`` may run in this process or in a
    forked worker (each writes its own files; nothing here is shared but the folder): it
    writes each changed file, hard-links each unchanged one, and answers their SHA-256s,
    which ``commit`` (in the process that opened the tree) lists in the manifest."""

    def __init__(self, out: Path, stage: Path, on_disk: dict[str, str],
                 listed: dict[str, str | None]) -> None:
        self.out, self.stage = out, stage
        self._on_disk = on_disk  # path -> SHA-256 of each file the output holds now
        self._listed = listed  # what the manifest on disk says of them
        self._made: set[str] = set()  # folders made, as 'a/b'
        self._stage, self._out = str(stage), str(out)  # paths joined as strings: 100,000s
        self.kept: dict[str, str] | None = None  # the files the output holds once committed
        self.manifest = ""  # once committed: the SHA-256 of the manifest the output holds
        # The output's folders: those that hold its files (one that holds none is refused,
        # _own_files), the only ones whose mode is read to be kept; every other folder and
        # every new file is made with the mode the umask leaves (no chmod: 7,269 folders
        # and 10,309 files at 100,000 GPUs)
        self._held = {folder for path in on_disk for folder in _above(path)}

    def confirmed(self, made: Known | None) -> dict[str, str] | None:
        """The output's files (path -> SHA-256) when it holds the tree ``made`` names, every
        file with the bytes its manifest lists (inputs.confirmed)."""
        return confirmed(Scanned(digests=self._on_disk, listed=self._listed), made)

    def write_all(self, files: dict[str, Text]) -> list[tuple[str, str]]:
        """Write ``files`` (emptied as it goes, so each text is freed once it is on disk);
        (path, SHA-256) of each."""
        digests: list[tuple[str, str]] = []
        for path in sorted(files):
            digests.append((path, self.write(path, files.pop(path))))
        return digests

    def write(self, path: str, text: Text) -> str:
        """One file into the staging folder; its SHA-256. A file the output already holds is
        not written: a whole text is compared by its SHA-256, a text in pieces
        (formats.Chunks, made as they are read) byte for byte with the file as the pieces
        come, and written from the first piece that differs; ``commit`` links the unchanged
        files into the staging folder (same inode, mode and time) if anything changed."""
        old = self._on_disk.get(path)
        if old is not None and isinstance(text, str) and text_digest(text) == old:
            return old
        self._folders(path)
        target = f"{self._stage}/{path}"
        try:
            if old is None:  # the output holds no such file (it holds only on_disk's)
                return write_new(target, text)  # 0666 less the umask
            mode = file_mode(self.out / path)
            if isinstance(text, str):
                return write_new(target, text, mode)
            return write_changed(target, text, mode, self.out / path) or old
        except FileExistsError:  # the staging folder is new: only a second write of the path
            raise ValueError(f"{path!r} is written twice") from None

    def _folders(self, path: str) -> None:
        """The staging folder's folders above ``path`` ('a/b/c.txt': 'a', 'a/b'), outermost
        first, each made once with its mode in the output; a file's folder made already
        (a folder's files come one after another) has all of its own made."""
        parts = path.split("/")[:-1]
        if not parts or "/".join(parts) in self._made:
            return
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in self._made:
                continue
            with contextlib.suppress(FileExistsError):  # made by the other process
                made = f"{self._stage}/{folder}"
                os.mkdir(made)  # 0777 less the umask
                if folder in self._held:  # keeps the mode of the output's folder
                    os.chmod(made, folder_mode(f"{self._out}/{folder}"))
            self._made.add(folder)

    def commit(self, digests: dict[str, str]) -> list[str]:
        """Swap the staged tree in, with the manifest of ``digests`` (every file written into
        it; its SHA-256 kept in ``manifest``); the paths that changed or were removed ([] and
        nothing touched when none did).
        Refused (OutputRefused) when a file that would be removed was edited by hand."""
        on_disk = self._on_disk
        removed = sorted(set(on_disk) - set(digests) - {MANIFEST})
        edited = [path for path in removed if self._listed.get(path) != on_disk[path]]
        if edited:
            raise OutputRefused(self.out, edited, "files cluster-iac no longer makes were "
                                "changed since it wrote them; it will not remove them: move "
                                "them away")
        changed = sorted(path for path, digest in digests.items() if on_disk.get(path) != digest)
        listing = manifest_text(digests)
        self.manifest = text_digest(listing)
        if not changed and not removed and on_disk.get(MANIFEST) == self.manifest:
            return []  # nothing was written, nothing is linked: the output as it was
        for path in sorted(set(digests) - set(changed)):  # the unchanged files, as they are
            self._folders(path)
            with contextlib.suppress(FileExistsError):  # bytes written though the SHA-256 was
                os.link(f"{self._out}/{path}", f"{self._stage}/{path}")
        write_new(self.stage / MANIFEST, listing, file_mode(self.out / MANIFEST))
        _swap(self.stage, self.out)
        self.kept = digests
        return changed + removed


def _above(path: str) -> Iterator[str]:
    """The folders above ``path`` ('a/b/c.txt': 'a/b', 'a')."""
    while "/" in path:
        path = path.rpartition("/")[0]
        yield path


def _make_folders(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; the ones made, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.is_dir()]
    made: list[Path] = []
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if not path.is_dir():
                raise
            continue
        made.append(path)
    return made


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


def _own_files(out: Path) -> tuple[dict[str, str], dict[str, str | None]]:
    """The files in ``out`` (path -> SHA-256, scan.py: only files whose stat changed since
    they were recorded are read) and its manifest, after checking that all of them are the
    tool's."""
    if out.exists() and (out.is_symlink() or not out.is_dir()):
        raise OutputRefused(out, [str(out)], "the output is not a folder")
    found = scan(out)
    if found.foreign:
        raise OutputRefused(out, found.foreign, "the output folder holds files cluster-iac did "
                            "not write (not in its manifest); move them away or choose another "
                            "folder")
    return found.digests, found.listed


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
