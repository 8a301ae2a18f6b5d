"""The cluster spec: pydantic models of the YAML document.

The modules that define models do without ``from __future__ import annotations`` (the house
style elsewhere): with it every field's annotation is a string, which pydantic turns into a
ForwardRef, compiles and evaluates when the class is made (about 340 fields, on every start-up,
validate and render alike). Written as plain annotations, Python evaluates them as the class
body runs; a model that names itself (``Account``) quotes that one name.
"""

from cluster_iac.spec.cluster import ClusterSpec

__all__ = ["ClusterSpec"]
