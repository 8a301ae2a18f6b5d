"""A render, render --check or `changes` over a tree already current, answered from what its
inputs were last rendered to (write/inputs.py) without loading the spec, reading the lock
beyond its bytes, compiling or checking.

Where the cache knows the key of the spec's bytes, the lock's bytes and the options, and
knows its outcome (write/outcome.py: the findings, the summary's counts), and the lock on
disk is the one the plan makes (its SHA-256 is the one the entry names), the command needs
only to confirm the folder (inputs.confirmed: its manifest and every file's SHA-256, from
the stat record) and print the outcome. Anything else (no entry, an entry without an
outcome or cut short, a stale lock, a folder that differs, an error reading the folder
before anything is printed) is None here, and the command takes the full path, which
prints the same for the same inputs (tests/test_recall.py holds every example to it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.source import SourceMap
from cluster_iac.lock.path import lock_path
from cluster_iac.write.compare import Checked
from cluster_iac.write.inputs import Known, confirmed, known, render_key
from cluster_iac.write.outcome import Outcome
from cluster_iac.write.scan import scan
from cluster_iac.write.tree import staged_tree


@dataclass(frozen=True)
class Recalled:
    """The known outcome of a spec's inputs, with the lock on disk as the plan makes it."""

    made: Known
    outcome: Outcome
    source: SourceMap  # the spec's, as the findings ask it
    lock: Path
    lock_text: str

    @property
    def findings(self) -> list[Diagnostic]:
        return list(self.outcome.findings)


def recall(spec_file: Path, strict: bool, reallocate: tuple[str, ...]) -> Recalled | None:
    """The known outcome of ``spec_file`` with its lock (beside it) and these options, where
    the cache has it and the lock is the one its plan makes; None otherwise."""
    lock = lock_path(spec_file)
    try:
        spec = spec_file.read_bytes()
        data = lock.read_bytes()
    except OSError:
        return None
    read = hashlib.sha256(data).hexdigest()
    made = known(render_key(spec, read, strict, reallocate))
    if made is None or made.outcome is None or made.lock != read:
        return None
    try:  # the bytes these were made from: UTF-8 (a SHA-256 collision aside)
        source = made.outcome.source(str(spec_file), spec)
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return Recalled(made, made.outcome, source, lock, text)


def confirm_into(out_dir: Path, recalled: Recalled,
                 tell: Callable[[], None]) -> tuple[int, list[str]] | None:
    """A render over a folder that holds what ``recalled`` names: ``tell`` (the findings
    printed, as a render prints them before it writes), then the tree left as it is (the
    same steps as render.render_into: write/tree.py's turn, its confirmation under it);
    (files, changed paths). None, nothing told, where the folder is not confirmed or cannot
    be read before anything is told."""
    told = False
    try:
        with staged_tree(out_dir) as tree:
            current = tree.confirmed(recalled.made)
            if current is None:
                return None
            tell()
            told = True
            return len(current), tree.commit(current)
    except OSError:
        if told:
            raise
        return None


def confirm_check(out_dir: Path, recalled: Recalled) -> Checked | None:
    """render --check's and `changes`' comparison of a folder that holds what ``recalled``
    names (nothing differs); None where it does not, or cannot be read."""
    out = Path(os.path.realpath(out_dir))  # as render_into writes it (write/tree.py)
    try:
        found = scan(out)
    except OSError:
        return None
    current = confirmed(found, recalled.made)
    if current is None:
        return None
    return Checked.of(out, found, {path: (digest, None) for path, digest in current.items()})
