"""The lock's integrity trailer: its last line, ``# end: N lines sha256 HEX``, says how many
identity lines it holds and the SHA-256 of every byte before the trailer. render writes it; a
lock whose trailer is missing (a cut at a line boundary), wrong (a line lost, added or
changed: a bad merge, a truncated copy) or not last is a LOCK-TRAILER error at the trailer's
line, never a silent re-allocation. A lock of version 1 (before the trailer) is read without
one and rewritten with it. After a deliberate hand edit, the error prints the trailer the
lock's lines now have: put it in place of the old one (docs/lock.md)."""

from __future__ import annotations

import hashlib
import re

from cluster_iac.base.errors import Diagnostic

PREFIX = "# end: "
_TRAILER = re.compile(r"# end: (0|[1-9][0-9]{0,8}) lines sha256 ([0-9a-f]{64})")


def entry_count(text: str) -> int:
    """The identity lines of a lock's text (each ending in a newline): the lines that are
    not comments."""
    return text.count("\n") - (text.startswith("#") + text.count("\n#", 0, len(text) - 1))


def trailer(text: str) -> str:
    """The trailer line (with its newline) of the lock text before it."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{PREFIX}{entry_count(text)} lines sha256 {digest}\n"


def sealed(text: str) -> str:
    """``text`` (a lock without its trailer) with its trailer."""
    return text + trailer(text)


def unsealed(text: str) -> str:
    """A sealed lock's text without its trailer line (``text`` as it is without one)."""
    if not text.endswith("\n"):
        return text
    start = text.rfind("\n", 0, len(text) - 1) + 1
    return text[:start] if text.startswith(PREFIX, start) else text


def trailer_problem(text: str, file: str) -> Diagnostic | None:
    """None when the last line is the trailer of the text before it; else the error at that
    line, with the trailer the lines now have for a deliberate edit."""
    return checked_trailer(text, file)[0]


def checked_trailer(text: str, file: str) -> tuple[Diagnostic | None, str | None]:
    """trailer_problem's answer, and the SHA-256 of the whole text as UTF-8 (as
    files.text_digest makes it) where its bytes were hashed (a trailer last, its count
    right), from the same pass: the hash of the lines the trailer seals, carried on over the
    trailer line, so the render's key need not hash the lock again. The lines are counted and
    hashed once (13.5 MiB at 100,000 GPUs), the error's text made only for an error."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    start = text.rfind("\n", 0, end) + 1
    last, before = text[start:end], text[:start]
    found = _TRAILER.fullmatch(last)
    if found is None:
        where = ("is not its last line" if PREFIX in text[:start] and
                 f"\n{PREFIX}" in "\n" + text[:start] else "is missing")
        return _problem(
            text, start, f"the lock's trailer ('{PREFIX}N lines sha256 HEX') {where}: the "
            f"lock was cut short or joined with other text (a truncated copy, a bad merge), "
            f"and identities it held may be lost", 1, file, trailer(text)), None
    count, digest = int(found.group(1)), found.group(2)
    held = entry_count(before)
    if held != count:
        return _problem(
            text, start, f"the lock holds {held} identity line(s) but its trailer says "
            f"{count}: lines were lost or added since render wrote it (a bad merge, a "
            f"truncated copy, a hand edit)", len(PREFIX) + 1, file, trailer(before)), None
    sealing = hashlib.sha256(before.encode("utf-8"))
    whole = sealing.copy()
    whole.update(text[start:].encode("utf-8"))
    if sealing.hexdigest() != digest:
        return _problem(
            text, start, "the lock's lines are not those render wrote (its SHA-256 differs "
            "from its trailer's): a line was changed, reordered or replaced (a bad merge, a "
            "hand edit)", last.index("sha256") + 8, file, trailer(before)), whole.hexdigest()
    return None, whole.hexdigest()


def _problem(text: str, start: int, message: str, column: int, file: str,
             now: str) -> Diagnostic:
    """The LOCK-TRAILER error at the last line (from ``start``), ``now`` the trailer the
    lines have (for a deliberate edit)."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    restore = (f"restore the lock from version control (or the last render's), or render "
               f"again from the spec with the lock removed only if nothing is built yet; if "
               f"every line is as you meant (a deliberate edit), make its last line: "
               f"{now.strip()}")
    return Diagnostic("LOCK-TRAILER", message, line=text.count("\n", 0, start) + 1,
                      column=column, file=file, excerpt=text[start:end], hint=restore)
