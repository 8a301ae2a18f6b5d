"""Diagnostics as data: every problem the pipeline finds is a Diagnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from cluster_iac.base.source import SourceMap, SpecPath

__all__ = ["CompileError", "Diagnostic", "Severity", "SpecPath", "spec_error"]


class Severity(str, Enum):
    """How bad a finding is; errors stop validate and render."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Diagnostic:
    """One located problem: a stable code, a message and the spec path it is about."""

    code: str
    message: str
    path: SpecPath = ()
    severity: Severity = Severity.ERROR
    hint: str | None = None
    # Set by the loader for problems that have no spec path (YAML syntax).
    line: int | None = None
    column: int | None = None
    # A problem of another file than the spec (the lock): its name and the line's text.
    file: str | None = None
    excerpt: str | None = None
    # The problem is the mapping key at ``path`` (a bad name as a key), not its value.
    at_key: bool = False
    # Measured value, limit and unit for capacity findings (report.md uses them).
    details: dict[str, object] = field(default_factory=dict, compare=False)
    # Where to point instead when the file leaves ``path``'s section out (a default decided
    # it, e.g. policy.max_phase_imbalance): the first of these keys the file has.
    decided_by: tuple[SpecPath, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def located_path(self, source: SourceMap | None) -> SpecPath:
        """The path to cite in ``source``: ``path`` when the file has its section, else the
        first ``decided_by`` path whose section it has, else ``path``."""
        if source is None or not self.path or source.has(self.path[:1]):
            return self.path
        return next((p for p in self.decided_by if p and source.has(p[:1])), self.path)


class CompileError(Exception):
    """Raised by a stage that found errors; carries every diagnostic of that stage."""

    def __init__(self, diagnostics: list[Diagnostic], source: SourceMap | None = None,
                 plan: object = None, complete: bool = False):
        self.diagnostics = diagnostics
        self.source = source  # a SourceMap when the stage knows the text (YAML syntax errors)
        self.plan = plan  # the plan so far, where a pass can show it (`plan` prints it)
        # every pass ran (past deferred errors): the checks can still judge ``plan``
        self.complete = complete
        super().__init__(f"{len(diagnostics)} error(s)")

    def __reduce__(self) -> tuple[type[CompileError], tuple[list[Diagnostic], SourceMap | None]]:
        # made again from its own arguments when it crosses a pipe (an emitter's error in the
        # worker, emit/parallel.py), not from its message
        return (type(self), (self.diagnostics, self.source))


def spec_error(code: str, message: str, path: SpecPath, hint: str | None = None) -> Diagnostic:
    """Shorthand for an error about a spec path."""
    return Diagnostic(code=code, message=message, path=path, hint=hint)


class EmitWorkerError(RuntimeError):
    """The emitter worker (emit/parallel.py) died or failed in a way that cannot be re-raised
    as it was. Here, not beside the worker, so that the CLI catches it without loading the
    emitters, which a render that finds its folder current never runs."""
