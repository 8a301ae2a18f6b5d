"""What a render of known inputs prints that depends on its plan, kept with the inputs' key
(write/inputs.py) so that a later render, render --check or changes over a tree confirmed
current prints it without loading the spec, compiling or checking it.

Rendering is a function of the key's inputs (write/inputs.py); so are the checks' findings
and the plan's counts. An ``Outcome`` holds them in a structured form, not as printed text,
so that each command prints them as it would from the plan, in any --format, under any
name the spec is given on the command line: the findings (every field of each Diagnostic),
the positions of the spec the findings cite (the SourceMap's entries for each prefix of
each finding's paths: the only ones its ``locate`` and ``has`` are asked), the summary's
counts, the Slurm release `changes` defaults to, and whether the plan moved a locked cable.
The spec's lines are not kept: they are the spec's bytes, read for the key anyway.

An outcome is kept only where every finding round-trips through JSON unchanged and cites
the spec (a finding of the lock names the lock's path as the command line spells it); any
other plan keeps none, and the next run takes the full path. A kept outcome is written with
its SHA-256, so an entry cut short or garbled reads as none (``Outcome.parse``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.source import SourceMap, SpecPath


@dataclass(frozen=True)
class Outcome:
    """The findings (with the positions they cite), the counts of the summary line, the
    plan's Slurm release and whether it moved a locked cable (plan.link_moves)."""

    findings: tuple[Diagnostic, ...]
    values: dict[SpecPath, tuple[int, int]]  # SourceMap.positions of the findings' paths
    keys: dict[SpecPath, tuple[int, int]]
    nodes: int
    gpus: int
    racks: int
    release: str
    moves: bool

    @classmethod
    def of(cls, findings: tuple[Diagnostic, ...], source: SourceMap, *, nodes: int, gpus: int,
           racks: int, release: str, moves: bool) -> Outcome | None:
        """The outcome of a plan, or None where its findings cannot be kept (see the
        module's docstring)."""
        if any(diag.file is not None or not _round_trips(diag) for diag in findings):
            return None
        values, keys = source.positions(
            path for diag in findings for path in (diag.path, *diag.decided_by))
        return cls(tuple(findings), values, keys, nodes, gpus, racks, release, moves)

    def text(self) -> str:
        """One line: the SHA-256 of the JSON form, a space, the JSON form."""
        body = json.dumps({
            "findings": [_record(d) for d in self.findings],
            "values": [[list(p), list(at)] for p, at in self.values.items()],
            "keys": [[list(p), list(at)] for p, at in self.keys.items()],
            "counts": [self.nodes, self.gpus, self.racks], "release": self.release,
            "moves": self.moves,
        }, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return f"{hashlib.sha256(body.encode('ascii')).hexdigest()} {body}"

    @classmethod
    def parse(cls, line: str) -> Outcome | None:
        """The outcome ``text`` made, or None for anything else (cut short, garbled)."""
        digest, _, body = line.partition(" ")
        try:
            if hashlib.sha256(body.encode("ascii")).hexdigest() != digest:
                return None
            data = json.loads(body)
            nodes, gpus, racks = (int(n) for n in data["counts"])
            return cls(tuple(_diagnostic(r) for r in data["findings"]),
                       {tuple(p): (int(a), int(b)) for p, (a, b) in data["values"]},
                       {tuple(p): (int(a), int(b)) for p, (a, b) in data["keys"]},
                       nodes, gpus, racks, str(data["release"]), bool(data["moves"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def source(self, file: str, spec: bytes) -> SourceMap:
        """The spec's source map as the findings ask it (file: the spec as the command
        line names it; ``spec``: its bytes, the key's)."""
        return SourceMap.kept(file, spec.decode("utf-8"), self.values, self.keys)


def _record(diag: Diagnostic) -> dict[str, Any]:
    return {"code": diag.code, "message": diag.message, "path": list(diag.path),
            "severity": diag.severity.value, "hint": diag.hint, "line": diag.line,
            "column": diag.column, "file": diag.file, "excerpt": diag.excerpt,
            "at_key": diag.at_key, "details": diag.details,
            "decided_by": [list(p) for p in diag.decided_by]}


def _round_trips(diag: Diagnostic) -> bool:
    """Whether ``diag`` comes back from its JSON form field for field (a tuple among its
    details would come back a list; a value JSON cannot hold, not at all)."""
    record = _record(diag)
    try:
        back = _diagnostic(json.loads(json.dumps(record, sort_keys=True)))
    except (TypeError, ValueError):
        return False
    return back == diag and _record(back) == record


def _diagnostic(record: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        code=record["code"], message=record["message"], path=tuple(record["path"]),
        severity=Severity(record["severity"]), hint=record["hint"], line=record["line"],
        column=record["column"], file=record["file"], excerpt=record["excerpt"],
        at_key=record["at_key"], details=dict(record["details"]),
        decided_by=tuple(tuple(p) for p in record["decided_by"]))
