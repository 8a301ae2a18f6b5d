"""Diagnostics for people: 'file:line:col: error[CODE] message', the line, a caret, a hint."""

from __future__ import annotations

from cluster_iac.errors import Diagnostic
from cluster_iac.source import SourceMap

# Codes whose caret belongs under the key rather than the value.
_KEY_CODES = {"SPEC-UNKNOWN-KEY"}


def format_diagnostic(diag: Diagnostic, source: SourceMap | None, fallback_file: str) -> str:
    file, line, column = _position(diag, source, fallback_file)
    head = f"{file}:{line}:{column}: {diag.severity.value}[{diag.code}] {diag.message}"
    lines = [head]
    # A finding about the whole document, or about a section the file leaves out (a default),
    # is cited at 1:1; the first line of the file is not worth quoting there.
    whole = diag.line is None and not (source and diag.path and source.has(diag.path[:1]))
    text = source.source_line(line) if source and not whole else None
    if text is not None:
        gutter = str(line).rjust(5)
        lines.append(f"{gutter} | {text}")
        lines.append(f"{' ' * 5} | {' ' * (column - 1)}^")
    if diag.hint:
        lines.append(f"      = hint: {diag.hint}")
    return "\n".join(lines)


def _position(diag: Diagnostic, source: SourceMap | None, fallback: str) -> tuple[str, int, int]:
    if diag.line is not None:
        return (source.file if source else fallback), diag.line, diag.column or 1
    if source is None:
        return fallback, 1, 1
    loc = source.locate(diag.path, key=diag.code in _KEY_CODES)
    return loc.file, loc.line, loc.column
