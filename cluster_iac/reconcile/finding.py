"""What reconcile reports: a finding (a difference from the plan, with its place and what to
do), a located read error, and what every source module offers (the reader protocol)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from cluster_iac.plan import Plan


class Finding(NamedTuple):
    """One difference between the delivered cluster and the plan: a stable code (see
    codes.yaml), the object and its place ('gb-001 (rack nvl1 U05)', a cable label), what
    was found against what was planned, and what to do about it."""

    code: str
    place: str
    message: str
    fix: str
    file: str = ""  # the discovery file it was read from

    def line(self) -> str:
        """The finding as one line for a person."""
        return f"error[{self.code}] {self.place}: {self.message}; fix: {self.fix}"


class ReadError(ValueError):
    """A discovery file a reader cannot read, with the line (1-based; 0: the whole file)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class Discovery(NamedTuple):
    """One discovery file, read: its path, the host the file is about (from its name or
    content; '' when the file is about many), and what the reader made of it."""

    path: Path
    host: str
    data: Any


class Source(Protocol):
    """A reader and its comparison, one module each (registered in sources.SOURCES):
    ``detect`` tells its format from the text, ``read`` parses it (ReadError on a line it
    cannot), ``host`` names the host a file is about, ``compare`` judges every file of its
    kind against the plan at once (an NVLink domain is judged across trays). A source that
    reads facts of delivered hardware (MACs, serials, GUIDs) also has ``facts(plan, found)``
    yielding accept.Fact, which ``reconcile --accept`` records in the lock."""

    KIND: str

    def detect(self, text: str) -> bool: ...

    def read(self, text: str) -> Any: ...

    def host(self, data: Any) -> str: ...

    def compare(self, plan: Plan, found: Sequence[Discovery]) -> Iterable[Finding]: ...
