"""The spec's base: the strict model every spec model derives from (its JSON Schema's
descriptions read from the attribute docstrings), and how a spec type fails: a pydantic error
of type ``spec_<kind>`` whose context carries the hint (``fail``), which spec/parse.py turns
into a located diagnostic with the stable code of ``CODES``. The string types are
spec/strings.py's; the limits and bounded numbers spec/limits.py's.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from cluster_iac.base.text import control_character


def _describe_fields(schema: dict[str, Any], model: type) -> None:
    """Each property's description from its attribute docstring, read from the source when a
    JSON Schema is made. (pydantic's use_attribute_docstrings reads every model's source when
    the class is made: a fifth of `cluster-iac validate`'s start-up, for text only the schema
    shows.)"""
    properties = schema.get("properties", {})
    fields = getattr(model, "model_fields", {})
    for cls in reversed(model.__mro__):  # a subclass's docstring wins over its base's
        for name, doc in _attribute_docstrings(cls).items():
            if name not in properties or name not in fields:
                continue
            kind = fields[name].annotation
            # as pydantic does: a field that says what its model's docstring says says nothing
            if not (isinstance(kind, type) and inspect.getdoc(kind) == doc):
                properties[name]["description"] = doc


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal written right below its annotated assignment."""
    module = sys.modules.get(cls.__module__)
    if module is None or not cls.__module__.startswith("cluster_iac."):
        return {}
    tree = ast.parse(inspect.getsource(module))
    body = next((node.body for node in tree.body
                 if isinstance(node, ast.ClassDef) and node.name == cls.__name__), [])
    docs = {}
    for field, doc in zip(body, body[1:], strict=False):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)):
            docs[field.target.id] = inspect.cleandoc(doc.value.value)
    return docs


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, values are immutable, nothing is
    coerced (``count: true`` is not 1, ``"8"`` is not 8) and no number is infinite or NaN."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=_describe_fields,
        populate_by_name=False,
        strict=True,
        allow_inf_nan=False,
    )


CODES = {
    "control": "SPEC-CONTROL-CHAR",
    "name": "SPEC-NAME",
    "rack_name": "SPEC-NAME",
    "hostname": "SPEC-HOSTNAME",
    "domain": "SPEC-HOSTNAME",
    "path": "SPEC-PATH",
    "interface": "SPEC-INTERFACE",
    "text": "SPEC-TEXT",
    "hostlist": "SPEC-HOSTLIST",
    "ratio": "SPEC-RATIO",
    "limit": "SPEC-LIMIT",
    "env_name": "SPEC-ENV-NAME",
    "code": "SPEC-CODE",
}
"""pydantic error type ``spec_<kind>`` -> stable diagnostic code."""


def fail(kind: str, message: str, hint: str | None = None) -> NoReturn:
    """Raise the pydantic error of a string type; parse.py locates it."""
    raise PydanticCustomError(f"spec_{kind}", "{message}", {"message": message, "hint": hint or ""})


def shown(value: str) -> str:
    """A value quoted for a message, shortened when long."""
    return repr(value if len(value) <= 60 else value[:57] + "...")


def no_control(value: str) -> None:
    found = control_character(value)
    if found is not None:
        index, what = found
        fail("control", f"holds the control character {what} at position {index + 1}",
             "every spec string is one line of printable text; YAML's escapes (\"\\n\") and "
             "block scalars ('|', '>') make line breaks")


@dataclass(frozen=True)
class After:
    """What pydantic's AfterValidator does for a function of the value alone, without its
    inspecting the function's signature at every field that uses the type (some 130 fields:
    a tenth of `cluster-iac validate`'s start-up)."""

    func: Callable[[Any], Any]

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.func, handler(source))
