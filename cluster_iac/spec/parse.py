"""Plain YAML data -> ClusterSpec, with pydantic's errors turned into located diagnostics."""

from __future__ import annotations

import types
import typing
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.source import dotted as _dotted
from cluster_iac.base.suggest import closest, did_you_mean
from cluster_iac.spec.base import CODES
from cluster_iac.spec.cluster import ClusterSpec

# pydantic error type -> our stable code
_CODES = {
    "extra_forbidden": "SPEC-UNKNOWN-KEY",
    "missing": "SPEC-MISSING",
    "literal_error": "SPEC-CHOICE",
    "enum": "SPEC-CHOICE",
    "string_pattern_mismatch": "SPEC-FORMAT",
}
_TYPE_ERRORS = ("_type", "_parsing", "model_attributes_type", "dict_type", "list_type")


def parse_spec(data: dict[str, Any]) -> ClusterSpec:
    """Validate plain data against the spec models; raise CompileError with every problem."""
    try:
        return ClusterSpec.model_validate(data)
    except ValidationError as exc:
        diagnostics = [_diagnostic(err) for err in exc.errors(include_url=False)]
        raise CompileError(_fold_misspellings(_dedupe(diagnostics))) from None


def _diagnostic(err: ErrorDetails) -> Diagnostic:
    diagnostic = _described(err)
    if "[key]" in err["loc"]:  # the mapping key itself is wrong: cite the key
        return replace(diagnostic, at_key=True)
    return diagnostic


def _described(err: ErrorDetails) -> Diagnostic:
    path: SpecPath = tuple(p for p in err["loc"] if not (isinstance(p, str) and p == "[key]"))
    kind = err["type"]
    code = _CODES.get(kind) or (
        "SPEC-TYPE" if kind.endswith(_TYPE_ERRORS) else "SPEC-VALUE"
    )
    where = _dotted(path[:-1]) if path[:-1] else "the top level"
    if kind.startswith("spec_"):  # spec/strings.py or limits.py: its message and hint
        ctx = err.get("ctx") or {}
        return Diagnostic(CODES[kind[5:]], f"{_dotted(path)}: {ctx.get('message', err['msg'])}",
                          path, hint=ctx.get("hint") or None)
    if kind == "extra_forbidden":
        key = str(path[-1])
        allowed = _field_names(ClusterSpec, path[:-1])
        return Diagnostic(code, f"unknown key '{key}' in {where}", path,
                          hint=did_you_mean(key, allowed),
                          details={"suggestion": closest(key, allowed)})
    if kind == "missing":
        return Diagnostic(code, f"missing required key '{path[-1]}' in {where}", path[:-1],
                          details={"key": str(path[-1])})
    if kind in ("literal_error", "enum"):
        expected = str((err.get("ctx") or {}).get("expected", ""))
        choices = [c.strip().strip("'\"") for c in expected.replace(" or ", ",").split(",")]
        got = err.get("input")
        hint = did_you_mean(str(got), [c for c in choices if c])
        what = repr(got)
        if _is_number(got) and "'" in expected:  # the choices are strings: quote the value
            hint, what = _quote_hint(got, path, closest(str(got), choices)), f"the number {got}"
        return Diagnostic(code, f"{_dotted(path)}: {what} is not one of {expected}", path,
                          hint=hint)
    message = err["msg"]
    hint = _type_hint(kind, path) if code == "SPEC-TYPE" else None
    if kind == "string_pattern_mismatch":
        hint = f"it must match {(err.get('ctx') or {}).get('pattern')}"
    if kind == "string_type" and _is_number(err.get("input")):
        hint = _quote_hint(err.get("input"), path, None)
    return Diagnostic(code, f"{_dotted(path)}: {message} (got {_short(err.get('input'))})", path,
                      hint=hint)


# pydantic type-error prefix -> (what the field takes, an example value)
_EXPECTED = {
    "int": ("a whole number", "8"),
    "float": ("a number", "2.5"),
    "bool": ("true or false", "true"),
    "string": ("text", '"abc"'),
    "list": ("a list", "[a, b]"),
    "tuple": ("a list", "[a, b]"),
    "dict": ("a mapping of keys to values", "{key: value}"),
    "model": ("a mapping of keys to values", "{key: value}"),
}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _quote_hint(got: object, path: SpecPath, choice: str | None) -> str:
    """YAML reads an unquoted 22.05 as a number (and 2.20 as 2.2): the value needs quotes."""
    text = f"YAML reads the unquoted value as the number {got}; put it in quotes"
    if choice and isinstance(path[-1], str):
        text += f', e.g. {path[-1]}: "{choice}"'
    return text


def _type_hint(kind: str, path: SpecPath) -> str | None:
    """How to write the value: 'count takes a whole number, e.g. count: 8'."""
    expected = _EXPECTED.get(kind.split("_")[0])
    if expected is None or not path:
        return None
    what, example = expected
    if isinstance(path[-1], int):
        return f"{_dotted(path)} should be {what}, e.g. {example}"
    return f"{path[-1]} takes {what}, e.g. {path[-1]}: {example}"


def _fold_misspellings(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A misspelt required key is one mistake: keep 'unknown key' and drop its 'missing'."""
    suggested = {(d.path[:-1], d.details.get("suggestion")) for d in diagnostics
                 if d.code == "SPEC-UNKNOWN-KEY"}
    return [d for d in diagnostics if not (
        d.code == "SPEC-MISSING" and (d.path, d.details.get("key")) in suggested)]


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, SpecPath]] = set()
    unique = []
    for diag in diagnostics:
        if (diag.code, diag.path) not in seen:
            seen.add((diag.code, diag.path))
            unique.append(diag)
    return unique


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _field_names(model: type[BaseModel], path: SpecPath) -> list[str]:
    """Field names of the model found at ``path`` (for 'did you mean')."""
    target: Any = model
    for part in path:
        target = _step(target, part)
        if target is None:
            return []
    target = _unwrap(target)
    if isinstance(target, type) and issubclass(target, BaseModel):
        return list(target.model_fields)
    return []


def _step(annotation: Any, part: str | int) -> Any:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(str(part))
        return field.annotation if field else None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated wrappers down to the model or container type."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = members[0] if len(members) == 1 else annotation
            if len(members) != 1:
                return annotation
        else:
            return annotation
