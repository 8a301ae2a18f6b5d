"""Reconcile: any mix of discovery files read and judged against the plan. Every readable
file is judged; a file that cannot be read is a located error beside the findings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.reconcile.accept import Fact
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import host_of
from cluster_iac.reconcile.sources import SOURCES, detect


class FileError(NamedTuple):
    """A discovery file not read: its path, the line (0: the whole file) and why."""

    path: Path
    line: int
    reason: str

    def text(self) -> str:
        at = f":{self.line}" if self.line else ""
        return f"{self.path}{at}: error[RECONCILE-READ] {self.reason}"


class Outcome(NamedTuple):
    """Every finding, every file not read, how many files of each kind were judged, and the
    facts of delivered hardware the files report (accept.py judges them against the lock)."""

    findings: list[Finding]
    errors: list[FileError]
    judged: dict[str, int]
    facts: list[Fact]


class Read(NamedTuple):
    """The files read, before any plan: each kind's files (path, what its reader made of
    it), in the order given, and every file not read."""

    files: dict[str, list[tuple[Path, object]]]
    errors: list[FileError]


def reconcile(plan: Plan, files: Sequence[tuple[str | None, Path]]) -> Outcome:
    """Read each (kind or None: detect it, path) and compare each kind's files with the plan."""
    return judged(plan, read_files(files))


def read_files(files: Sequence[tuple[str | None, Path]]) -> Read:
    """Each (kind or None: detect it, path) read by its kind's reader; a file that cannot be
    read is an error. No plan is read: which passes the comparison needs depends on the
    kinds read (sources.py)."""
    read: dict[str, list[tuple[Path, object]]] = {}
    errors: list[FileError] = []
    for kind, path in files:
        try:
            found_kind, data = _read(kind, path)
        except ReadError as exc:
            errors.append(FileError(path, exc.line, exc.reason))
            continue
        read.setdefault(found_kind, []).append((path, data))
    return Read(read, errors)


def agree(plan: Plan, read: Read) -> bool:
    """Whether every kind read agrees with ``plan`` (its source's ``agree``, asked of a plan
    compiled as far as sources.EARLY says)."""
    return all(SOURCES[kind].agree(plan, items) for kind, items in _found(plan, read).items())


def judged(plan: Plan, read: Read) -> Outcome:
    """The files read compared with the plan, kind by kind, and their facts."""
    found = _found(plan, read)
    findings = [finding for kind, items in found.items()
                for finding in SOURCES[kind].compare(plan, items)]
    facts = [fact for kind, items in found.items()
             for fact in getattr(SOURCES[kind], "facts", _no_facts)(plan, items)]
    return Outcome(findings, read.errors, {kind: len(items) for kind, items in found.items()},
                   facts)


def _found(plan: Plan, read: Read) -> dict[str, list[Discovery]]:
    """Each kind's files as its source reads them: with the host each is about."""
    return {kind: [Discovery(path, host_of(plan, path, SOURCES[kind].host(data)), data)
                   for path, data in files] for kind, files in read.files.items()}


def _no_facts(plan: Plan, found: Sequence[Discovery]) -> list[Fact]:
    """A source that reports no fact of delivered hardware."""
    return []


def _read(kind: str | None, path: Path) -> tuple[str, object]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ReadError(0, f"cannot read: {exc.strerror or exc}") from None
    kind = kind or detect(text)
    if kind is None:
        raise ReadError(0, "not a format reconcile reads (" + ", ".join(SOURCES) +
                        "): name it with --as KIND=FILE")
    return kind, SOURCES[kind].read(text)
