"""Load a spec file with ruamel.yaml, keeping every position in a SourceMap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError

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
    return load_spec_text(text, str(path))


def load_spec_text(text: str, file: str = "<spec>") -> tuple[dict[str, Any], SourceMap]:
    """Parse YAML text; syntax errors become located diagnostics."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        root = yaml.load(text)
    except MarkedYAMLError as exc:
        raise CompileError([_syntax_diagnostic(exc)], SourceMap(file, text.splitlines())) from None
    if root is None:
        root = CommentedMap()
    if not isinstance(root, CommentedMap):
        raise CompileError(
            [Diagnostic("YAML-ROOT", "the spec must be a mapping at the top level", line=1, column=1)],
            SourceMap(file, text.splitlines()),
        )
    smap = SourceMap.build(file, text, root)
    return _plain(root), smap


def _syntax_diagnostic(exc: MarkedYAMLError) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    code = "YAML-DUPLICATE-KEY" if isinstance(exc, DuplicateKeyError) else "YAML-SYNTAX"
    problem = exc.problem or exc.context or "invalid YAML"
    if isinstance(exc, DuplicateKeyError):
        problem = str(exc.problem).split("\n")[0]
    line = mark.line + 1 if mark is not None else 1
    column = mark.column + 1 if mark is not None else 1
    return Diagnostic(code, str(problem).strip(), line=line, column=column)


def _plain(node: object) -> Any:
    """CommentedMap/Seq -> dict/list with string keys, so pydantic sees plain data."""
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    return node
