"""One file's bytes: written as UTF-8 a slice at a time into a new file (its SHA-256 made as
it goes), or through a temp file and a rename (write_file); its SHA-256 on disk; the mode a
file or folder keeps when it is replaced; and a file read back, None when it is missing.
The staged tree (tree.py), the manifest (manifest.py) and --check (compare.py) build on these.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

Text = str | Iterable[str]
"""A file's text, whole or in pieces made as they are read (emit.formats.Chunks)."""
_CHUNK = 1 << 16
"""Text is encoded a slice at a time: encoding an 84 MiB file at once would take 84 MiB of
fresh memory (page faults cost more than the copy), and the peak would hold it beside the
text. A slice below glibc's mmap threshold (128 KiB) reuses one block of the heap; a 1 MiB
slice is a fresh mapping each time, or the heap grown and trimmed each time, whose page
faults took 3-4x the time of encoding, hashing and writing it (140 MiB of CSV: 0.55-0.64 s
of CPU where 64 KiB slices take 0.16-0.19 s)."""


def _chunks(text: Text) -> Iterator[bytes]:
    for piece in (text,) if isinstance(text, str) else text:
        for start in range(0, len(piece), _CHUNK):
            yield piece[start:start + _CHUNK].encode("utf-8")


def text_digest(text: Text) -> str:
    """The SHA-256 of ``text`` as UTF-8 (Chunks are made again to be hashed)."""
    digest = hashlib.sha256()
    for chunk in _chunks(text):
        digest.update(chunk)
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_new(target: str | Path, text: Text, mode: int | None = None) -> str:
    """Write ``text`` as UTF-8 into a new file with ``mode`` (None: a new file's, 0666 less
    the umask, as the system makes it); its SHA-256."""
    return _write_bytes(target, mode, _chunks(text))


def _write_bytes(target: str | Path, mode: int | None, chunks: Iterable[bytes]) -> str:
    """A new file, its bytes hashed as they are written: open, a write per slice, close (and
    fchmod only for a mode kept from a file being replaced), as a render writes some 10,000
    files, where a buffered file object would add an fstat, an ioctl and an lseek to each."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, 0o600 if mode is not None else 0o666)
    digest = hashlib.sha256()
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            for chunk in chunks:
                digest.update(chunk)
                _write_all(fd, chunk)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        raise
    return digest.hexdigest()


def _write_all(fd: int, chunk: bytes) -> None:
    """Every byte of ``chunk`` (os.write may write fewer than it is given)."""
    view = memoryview(chunk)
    while view:
        view = view[os.write(fd, view):]


def write_changed(target: str | Path, text: Text, mode: int, old: Path) -> str | None:
    """Write ``text`` into a new file unless the file ``old`` holds the same bytes: None when
    it does, else the new file's SHA-256. Compared a slice at a time as the text is made (a
    large file's Chunks, made once): an unchanged file is never written, and a changed one is
    written from the bytes it shares with ``old`` and the rest of the text as it comes."""
    chunks = _chunks(text)
    shared = 0
    with open(old, "rb") as held:
        for chunk in chunks:
            if held.read(len(chunk)) != chunk:
                break
            shared += len(chunk)
        else:
            if not held.read(1):
                return None
            chunk = b""
        held.seek(0)
        return _write_bytes(target, mode, itertools.chain(_prefix(held, shared), (chunk,),
                                                          chunks))


def _prefix(held: BinaryIO, size: int) -> Iterator[bytes]:
    while size > 0:
        piece = held.read(min(size, _CHUNK))
        if not piece:
            return
        size -= len(piece)
        yield piece


def folder_mode(path: str | Path) -> int:
    """Keep the mode of the folder being replaced; a new folder gets 0777 less the umask."""
    try:
        found = os.stat(path)
    except OSError:
        return _default(0o777)
    return found.st_mode & 0o7777 if stat.S_ISDIR(found.st_mode) else _default(0o777)


def file_mode(target: Path) -> int:
    """Keep the mode of the file being replaced; a new file gets 0666 less the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return new_file_mode()


def new_file_mode() -> int:
    """A new file's mode: 0666 less the umask."""
    return _default(0o666)


def umask() -> int:
    """The process's umask (read by setting it and setting it back: two system calls)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _default(mode: int) -> int:
    return mode & ~umask()


def write_file(target: Path, text: str) -> bool:
    """Write one file through a temp file + rename; False when it already holds ``text``."""
    if read_or_none(target) == text:
        return False
    replace_file(target, text)
    return True


def replace_file(target: Path, text: Text) -> None:
    """``text`` (whole, or pieces made as they are written) into ``target`` through a temp
    file beside it and a rename: a failure leaves the file as it was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)
    try:
        write_new(Path(tmp), text, file_mode(target))
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def read_or_none(path: Path) -> str | None:
    """The file's text, None when there is no such file."""
    try:
        # A file that is not UTF-8 (edited by hand, or binary) simply differs from our text.
        return path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
