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


def reconcile(plan: Plan, files: Sequence[tuple[str | None, Path]]) -> Outcome:
    """Read each (kind or None: detect it, path) and compare each kind's files with the plan."""
    read: dict[str, list[Discovery]] = {}
    errors: list[FileError] = []
    for kind, path in files:
        try:
            found_kind, discovery = _read(plan, kind, path)
        except ReadError as exc:
            errors.append(FileError(path, exc.line, exc.reason))
            continue
        read.setdefault(found_kind, []).append(discovery)
    findings = [finding for kind, found in read.items()
                for finding in SOURCES[kind].compare(plan, found)]
    facts = [fact for kind, found in read.items()
             for fact in getattr(SOURCES[kind], "facts", _no_facts)(plan, found)]
    return Outcome(findings, errors, {kind: len(found) for kind, found in read.items()}, facts)


def _no_facts(plan: Plan, found: Sequence[Discovery]) -> list[Fact]:
    """A source that reports no fact of delivered hardware."""
    return []


def _read(plan: Plan, kind: str | None, path: Path) -> tuple[str, Discovery]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ReadError(0, f"cannot read: {exc.strerror or exc}") from None
    kind = kind or detect(text)
    if kind is None:
        raise ReadError(0, "not a format reconcile reads (" + ", ".join(SOURCES) +
                        "): name it with --as KIND=FILE")
    module = SOURCES[kind]
    data = module.read(text)
    return kind, Discovery(path, host_of(plan, path, module.host(data)), data)
