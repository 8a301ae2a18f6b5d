"""Load a spec file with ruamel.yaml, keeping every position in a SourceMap.

Loading is bounded before and while ruamel reads: the file's size, a line's length, the
characters YAML refuses, nesting depth and the values aliases expand to each have a limit
(README, "Limits"), and every string is checked for control characters.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, ReusedAnchorWarning, YAMLError

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.source import SourceMap, dotted, split_lines
from cluster_iac.base.text import control_character
from cluster_iac.load.limits import (
    MAX_LINE_CHARS,
    MAX_SPEC_BYTES,
    BoundedComposer,
    CheckedConstructor,
    LoadLimit,
    text_problem,
)


def load_spec_file(path: str | Path) -> tuple[dict[str, Any], SourceMap]:
    """Read ``path`` and return plain data plus its source map; raise CompileError."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)  # never more: /dev/zero is a file too
    except OSError as exc:
        raise CompileError(
            [Diagnostic("IO-READ", f"cannot read spec: {exc.strerror or exc}")]
        ) from exc
    if len(raw) > MAX_SPEC_BYTES:
        raise CompileError([_too_large()], SourceMap(str(path), [])) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        lines = split_lines(raw.decode("utf-8", errors="replace"))
        raise CompileError([_encoding_diagnostic(raw, exc)], SourceMap(str(path), lines)) from None
    return load_spec_text(text, str(path))


def load_spec_text(text: str, file: str = "<spec>") -> tuple[dict[str, Any], SourceMap]:
    """Parse YAML text; syntax errors and limits become located diagnostics."""
    if len(text.encode("utf-8", errors="replace")) > MAX_SPEC_BYTES:
        raise CompileError([_too_large()], SourceMap(file, []))
    lines = split_lines(text)
    problem = text_problem(text)
    if problem is not None:  # a line too long, or a character YAML refuses: before ruamel
        raise CompileError([problem], SourceMap(file, _shown_lines(lines)))
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Composer = BoundedComposer
    yaml.Constructor = CheckedConstructor
    try:
        with warnings.catch_warnings():
            # ruamel only warns about a reused anchor (and prints it raw); an alias would then
            # silently take the later definition, so it is an error like a duplicate key.
            warnings.simplefilter("error", ReusedAnchorWarning)
            root = yaml.load(text)
    except LoadLimit as exc:
        raise CompileError([exc.diagnostic], SourceMap(file, lines)) from None
    except MarkedYAMLError as exc:
        raise CompileError([_syntax_diagnostic(exc, lines)], SourceMap(file, lines)) from None
    except ReusedAnchorWarning as exc:
        raise CompileError([_anchor_diagnostic(str(exc))], SourceMap(file, lines)) from None
    except (YAMLError, RecursionError) as exc:  # a reader or emitter error with no mark
        raise CompileError([Diagnostic("YAML-SYNTAX", f"cannot read the YAML: {exc}"[:300],
                                       line=1, column=1)], SourceMap(file, lines)) from None
    if root is None:
        root = CommentedMap()
    if not isinstance(root, CommentedMap):
        # A list root has a position (after any leading comments); a bare scalar does not.
        line = (getattr(getattr(root, "lc", None), "line", None) or 0) + 1
        raise CompileError(
            [Diagnostic("YAML-ROOT", "the spec must be a mapping at the top level",
                        line=line, column=1)],
            SourceMap(file, lines),
        )
    smap = SourceMap.build(file, text, root)
    try:
        data = _plain(root)
    except LoadLimit as exc:
        raise CompileError([exc.diagnostic], smap) from None
    controls = [_control_diagnostic(path, is_key, found, smap)
                for path, is_key, found in _control_characters(data, ())]
    if controls:
        raise CompileError(controls, smap)
    return data, smap


def _too_large() -> Diagnostic:
    return Diagnostic("YAML-FILE-SIZE", f"the spec is larger than {MAX_SPEC_BYTES:,} bytes",
                      line=1, column=1,
                      hint="a spec describes racks by hostlists and nodes by counts; a "
                           "200,000-GPU cluster takes a few hundred lines")


def _shown_lines(lines: list[str]) -> list[str]:
    """Source lines as the console may quote them: a huge line is cut."""
    return [line if len(line) <= MAX_LINE_CHARS else line[:200] + " ..." for line in lines]


def _control_characters(node: Any, path: SpecPath) -> Any:
    """(path, is it the key, (index, description)) of every string holding a control character."""
    if isinstance(node, dict):
        for key, value in node.items():
            found = control_character(key)
            if found is not None:
                yield (*path, key), True, found
            yield from _control_characters(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _control_characters(item, (*path, index))
    elif isinstance(node, str):
        found = control_character(node)
        if found is not None:
            yield path, False, found


def _control_diagnostic(path: SpecPath, is_key: bool, found: tuple[int, str],
                        smap: SourceMap) -> Diagnostic:
    where = smap.locate(path, key=is_key)
    what = "key" if is_key else "value"
    return Diagnostic(
        "SPEC-CONTROL-CHAR",
        f"the {what} at {dotted(path) or 'the top level'} holds the control character {found[1]}",
        path, line=where.line, column=where.column,
        hint="every spec string is one line of printable text; YAML's escapes (\"\\n\", "
             "\"\\t\") and block scalars ('|', '>') make control characters")




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
    """CommentedMap/Seq -> dict/list with string keys, so pydantic sees plain data. Two keys
    that differ only as YAML reads them (1 and '1', null and 'None') are one key here: a
    duplicate, which ruamel's own check does not see."""
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        first: dict[str, object] = {}
        for key, value in node.items():
            name = str(key)
            if name in out:
                position = node.lc.key(key) if node.lc.data and key in node.lc.data else None
                line, column = (position[0] + 1, position[1] + 1) if position else (1, 1)
                raise LoadLimit(Diagnostic(
                    "YAML-DUPLICATE-KEY", f"the keys {_spelled(first[name])} and "
                    f"{_spelled(key)} are one key, '{name}', in the spec", line=line,
                    column=column, hint="keep one of them; quote a key that is a name"))
            first[name] = key
            out[name] = _plain(value)
        return out
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    return node


def _spelled(key: object) -> str:
    """A key as YAML read it: a string quoted, null, or the number or date it became."""
    if key is None or isinstance(key, str):
        return "null" if key is None else repr(key)
    kind = {"bool": "a boolean", "date": "a date", "datetime": "a timestamp"}.get(
        type(key).__name__, "a number")
    return f"{key} ({kind})"
