"""Shared base model: strict keys, attribute docstrings become schema descriptions."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
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
