"""Diagnostics for people: 'file:line:col: error[CODE] message', the line, a caret, a hint."""

from __future__ import annotations

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.source import SourceMap
from cluster_iac.base.text import CONTROL

# Codes whose caret belongs under the key rather than the value.
_KEY_CODES = {"SPEC-UNKNOWN-KEY", "SPEC-UNKNOWN-CODE"}


def format_diagnostic(diag: Diagnostic, source: SourceMap | None, fallback_file: str) -> str:
    file, line, column = position(diag, source, fallback_file)
    head = f"{printable(file)}:{line}:{column}: {diag.severity.value}[{diag.code}] "
    lines = [head + printable(diag.message)]
    text = source.source_line(line) if source and not cites_whole(diag, source) else None
    if diag.file is not None:  # another file's line (the lock), carried by the finding
        text = diag.excerpt
    if text is not None:
        gutter = str(line).rjust(5)
        caret = len(printable(text[:column - 1], keep_tabs=True))
        lines.append(f"{gutter} | {printable(text, keep_tabs=True)}")
        lines.append(f"{' ' * 5} | {' ' * caret}^")
    lines += _cause(diag, source)
    if diag.hint:
        lines.append(f"      = hint: {printable(diag.hint)}")
    return "\n".join(lines)


def _cause(diag: Diagnostic, source: SourceMap | None) -> list[str]:
    """A lock line's error also cites the spec key whose change caused it (its path), with
    that line and a caret."""
    if diag.file is None or not diag.path or source is None or not source.has(diag.path[:1]):
        return []
    loc = source.locate(diag.path)
    text = source.source_line(loc.line) or ""
    caret = len(printable(text[:loc.column - 1], keep_tabs=True))
    return [f"      = caused by: {printable(loc.file)}:{loc.line}:{loc.column}",
            f"{str(loc.line).rjust(5)} | {printable(text, keep_tabs=True)}",
            f"{' ' * 5} | {' ' * caret}^"]


def printable(text: str, *, keep_tabs: bool = False) -> str:
    """``text`` with every control character shown as an escape (\\x1b, \\u202e): a spec's
    bytes never reach the terminal as commands, and the caret stays under its column."""
    return CONTROL.sub(lambda m: _escape(m.group(), keep_tabs), text)


def _escape(char: str, keep_tabs: bool) -> str:
    if char == "\t" and keep_tabs:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def position(diag: Diagnostic, source: SourceMap | None, fallback: str) -> tuple[str, int, int]:
    """The file, line and column a finding is cited at (the text's head, and the JSON and
    SARIF findings of cli/findings.py); a finding of another file (the lock) carries its
    own."""
    if diag.file is not None:
        return diag.file, diag.line or 1, diag.column or 1
    if diag.line is not None:
        return (source.file if source else fallback), diag.line, diag.column or 1
    if source is None:
        return fallback, 1, 1
    loc = source.locate(diag.located_path(source), key=at_key(diag))
    return loc.file, loc.line, loc.column


def at_key(diag: Diagnostic) -> bool:
    """Whether the finding is about the mapping key at its path rather than its value."""
    return diag.at_key or diag.code in _KEY_CODES


def cites_whole(diag: Diagnostic, source: SourceMap | None) -> bool:
    """A finding about the whole document, or about a section the file leaves out (a
    default), is cited at 1:1; the first line of the file is not worth quoting there."""
    path = diag.located_path(source)
    return diag.line is None and not (source and path and source.has(path[:1]))
