"""Names that differ only by punctuation: the outputs that fold punctuation cannot tell them
apart (Ansible group names keep only letters, digits and '_')."""

from __future__ import annotations

import re

from cluster_iac.base.errors import Diagnostic, SpecPath
from cluster_iac.spec import ClusterSpec


def folded(name: str) -> str:
    """The form an Ansible group name keeps: every character but letters, digits and '_'
    becomes '_' (emit/ansible.py's group_name does the same)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def name_problems(spec: ClusterSpec) -> list[Diagnostic]:
    """SPEC-NAME-CLASH for each name whose folded form an earlier name of its kind has."""
    kinds: list[tuple[str, str, list[tuple[str, SpecPath]]]] = [
        ("node type", "type", [(name, ("node_types", name)) for name in spec.node_types]),
        ("row", "row", [(row.name, ("rows", i, "name")) for i, row in enumerate(spec.rows)]),
        ("partition", "partition", [(p.name, ("slurm", "partitions", i, "name"))
                                    for i, p in enumerate(spec.slurm.partitions)]),
    ]
    out = []
    for kind, prefix, names in kinds:
        first: dict[str, str] = {}
        for name, path in names:
            other = first.setdefault(folded(name), name)
            if other != name:
                out.append(Diagnostic(
                    "SPEC-NAME-CLASH", f"{kind} '{name}' differs from {kind} '{other}' only by "
                    f"punctuation: both are Ansible group '{prefix}_{folded(name)}'", path,
                    hint="rename one of them", at_key=kind == "node type"))
    return out
