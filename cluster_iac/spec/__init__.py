"""The cluster spec: pydantic models of the YAML document.

The modules that define models do without ``from __future__ import annotations`` (the house
style elsewhere): with it every field's annotation is a string, which pydantic turns into a
ForwardRef, compiles and evaluates when the class is made (about 340 fields, on every start-up,
validate and render alike). Written as plain annotations, Python evaluates them as the class
body runs; a model that names itself (``Account``) quotes that one name.

``ClusterSpec`` (spec/cluster.py, and with it every spec module) is loaded when it is first
asked of this package (``__getattr__``), not when the package is: importing one spec module,
as the catalog imports spec/hardware.py, runs this file first, and a command that reads only
the catalog's hardware models (`changes` over a folder already current loads the Slurm
catalog) then pays for those, not for the whole spec (tests/test_startup.py). A dependency
cut, not a hidden circle: spec/cluster.py imports this package only as its parent.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cluster_iac.spec.cluster import ClusterSpec

__all__ = ["ClusterSpec"]


def __getattr__(name: str) -> object:
    """``ClusterSpec``, loaded on first use (module docstring)."""
    if name != "ClusterSpec":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from cluster_iac.spec.cluster import ClusterSpec  # on first use: module docstring

    return ClusterSpec
