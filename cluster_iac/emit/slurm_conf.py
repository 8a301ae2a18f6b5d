"""The writer of Slurm's line-oriented files (slurm.conf, gres.conf, cgroup.conf, topology.conf).

Slurm reads these files a line at a time: ``#`` starts a comment unless a backslash escapes
it, a backslash escapes the next character, and a value is either a run of non-blanks or a
double-quoted string (which then cannot hold a double quote). So a value is escaped, quoted
when it holds blanks, and refused when it would end the line or cannot be quoted: no value
can add a key, a NodeName or a PartitionName line. plan/slurm.py ``value_problem`` states the
rule the spec checks apply before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cluster_iac.plan.slurm import value_problem

Pair = tuple[str, object]

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_BLANK = re.compile(r"\s")


def conf_value(value: object) -> str:
    """One value as Slurm's parser must read it back."""
    text = "YES" if value is True else "NO" if value is False else str(value)
    problem = value_problem(text)
    if problem:
        raise ValueError(f"slurm value {text[:40]!r} {problem}")
    text = text.replace("\\", "\\\\").replace("#", "\\#")
    return f'"{text}"' if _BLANK.search(text) or not text else text


def conf_pair(key: str, value: object) -> str:
    """``Key=Value``; the key must be a plain Slurm parameter name."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"{key!r} is not a Slurm parameter name")
    return f"{key}={conf_value(value)}"


def conf_line(pairs: Iterable[Pair]) -> str:
    """A record on one line: ``NodeName=a CPUs=8 ...``."""
    return " ".join(conf_pair(key, value) for key, value in pairs)


def comment(text: str) -> str:
    """A comment line; a comment is one line too."""
    if re.search(r"[\x00-\x1f\x7f]", text):
        raise ValueError(f"comment {text[:40]!r} holds a control character")
    return f"# {text}"
