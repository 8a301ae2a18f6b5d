"""Load a spec file with ruamel.yaml, keeping every position in a SourceMap."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, ReusedAnchorWarning

from cluster_iac.errors import CompileError, Diagnostic
from cluster_iac.source import SourceMap


def load_spec_file(path: str | Path) -> tuple[dict[str, Any], SourceMap]:
    """Read ``path`` and return plain data plus its source map; raise CompileError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CompileError(
            [Diagnostic("IO-READ", f"cannot read spec: {exc.strerror or exc}")]
        ) from exc
    except UnicodeDecodeError as exc:
        raw = path.read_bytes()
        lines = raw.decode("utf-8", errors="replace").splitlines()
        raise CompileError([_encoding_diagnostic(raw, exc)], SourceMap(str(path), lines)) from None
    return load_spec_text(text, str(path))


def load_spec_text(text: str, file: str = "<spec>") -> tuple[dict[str, Any], SourceMap]:
    """Parse YAML text; syntax errors become located diagnostics."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    lines = text.splitlines()
    try:
        with warnings.catch_warnings():
            # ruamel only warns about a reused anchor (and prints it raw); an alias would then
            # silently take the later definition, so it is an error like a duplicate key.
            warnings.simplefilter("error", ReusedAnchorWarning)
            root = yaml.load(text)
    except MarkedYAMLError as exc:
        raise CompileError([_syntax_diagnostic(exc, lines)], SourceMap(file, lines)) from None
    except ReusedAnchorWarning as exc:
        raise CompileError([_anchor_diagnostic(str(exc))], SourceMap(file, lines)) from None
    if root is None:
        root = CommentedMap()
    if not isinstance(root, CommentedMap):
        # A list root has a position (after any leading comments); a bare scalar does not.
        line = (getattr(getattr(root, "lc", None), "line", None) or 0) + 1
        raise CompileError(
            [Diagnostic("YAML-ROOT", "the spec must be a mapping at the top level",
                        line=line, column=1)],
            SourceMap(file, text.splitlines()),
        )
    smap = SourceMap.build(file, text, root)
    return _plain(root), smap


def _syntax_diagnostic(exc: MarkedYAMLError, lines: list[str]) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    code = "YAML-DUPLICATE-KEY" if isinstance(exc, DuplicateKeyError) else "YAML-SYNTAX"
    problem = exc.problem or exc.context or "invalid YAML"
    if isinstance(exc, DuplicateKeyError):
        problem = str(exc.problem).split("\n")[0]
    line = mark.line + 1 if mark is not None else 1
    column = mark.column + 1 if mark is not None else 1
    if lines and line > len(lines):
        # 'unexpected end of stream': point just past the last character, on a line that exists.
        line, column = len(lines), len(lines[-1]) + 1
    hint = _syntax_context(exc, mark)
    if hint is None and "'\\t'" in str(problem):
        hint = "indent with spaces: YAML does not allow tabs in indentation"
    return Diagnostic(code, str(problem).strip(), line=line, column=column, hint=hint)


def _syntax_context(exc: MarkedYAMLError, mark: object) -> str | None:
    """Where the construct that broke began: often the real mistake (an unclosed '{' or quote)."""
    start = exc.context_mark
    if exc.context is None or start is None or start is mark:
        return None
    where = f"line {start.line + 1}, column {start.column + 1}"
    if isinstance(exc, DuplicateKeyError):
        key = re.search(r'duplicate key "([^"]*)"', str(exc.problem))
        name = f"'{key.group(1)}'" if key else "the key"
        return f"keep one {name} in the mapping that starts at {where}"
    return f"{exc.context} that starts at {where}"


def _anchor_diagnostic(message: str) -> Diagnostic:
    name = re.search(r"duplicate anchor '([^']*)'", message)
    found = re.findall(r"line (\d+), column (\d+)", message)  # ruamel's marks, 1-based
    marks = [(int(line), int(col)) for line, col in found]
    anchor = f"&{name.group(1)}" if name else "an anchor"
    (first_line, first_col), (line, column) = (marks + [(1, 1), (1, 1)])[:2]
    return Diagnostic("YAML-DUPLICATE-ANCHOR", f"anchor '{anchor}' is defined twice",
                      line=line, column=column,
                      hint=f"the first '{anchor}' is at line {first_line}, column {first_col}; "
                           "give each anchor its own name")


def _encoding_diagnostic(raw: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """Locate the first byte that is not UTF-8 (the line and column of the bad byte)."""
    before = raw[: exc.start]
    line = before.count(b"\n") + 1
    line_start = before[before.rfind(b"\n") + 1 :]
    column = len(line_start.decode("utf-8", errors="replace")) + 1
    return Diagnostic("IO-ENCODING", f"the spec is not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                      line=line, column=column)


def _plain(node: object) -> Any:
    """CommentedMap/Seq -> dict/list with string keys, so pydantic sees plain data."""
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    return node
