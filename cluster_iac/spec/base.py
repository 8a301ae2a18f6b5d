"""Shared base model: strict keys, attribute docstrings become schema descriptions."""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


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
    """Base of every spec model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=_describe_fields,
        populate_by_name=False,
    )


Name = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=63),
]
"""A name used as a reference elsewhere in the spec (letters, digits, '-', '_', '.')."""

HostlistExpr = Annotated[str, StringConstraints(min_length=1)]
"""A hostlist expression such as ``r[01-04]`` or ``a01,a03``."""

PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Fraction = Annotated[float, Field(gt=0, le=1)]
Source = Annotated[str, StringConstraints(min_length=3)]
"""Where a catalog number comes from (datasheet, standard, document)."""
