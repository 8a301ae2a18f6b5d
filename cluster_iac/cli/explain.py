"""What a finding code means: `cluster-iac explain CODE`.

The words live in codes.yaml beside this module (what the finding means, its formula and
the sources of its constants, how to fix it); the check that reports a code adds its own
docstring, so what the code says about itself is never written twice. The checks (and
with them the plan and the spec models) are imported only to find those docstrings, by
``checks_reporting``: `cluster-iac explain` without a code reads codes.yaml alone. A dependency
cut, not a hidden circle: the checks import nothing of the CLI (tests/test_house.py).
"""

from __future__ import annotations

import inspect
import textwrap
from functools import cache
from pathlib import Path

from ruamel.yaml import YAML

from cluster_iac.base.suggest import did_you_mean

CODES_FILE = Path(__file__).parent.parent / "codes.yaml"
FIELDS = (("means", "What it means"), ("formula", "Formula"), ("sources", "Sources"),
          ("fix", "How to fix it"))
WIDTH = 92


@cache
def entries() -> dict[str, dict[str, str]]:
    """Code -> its entry (means, fix, and where it has them formula and sources)."""
    data = YAML(typ="safe").load(CODES_FILE.read_text(encoding="utf-8"))
    return {str(code): {str(k): str(v) for k, v in entry.items()} for code, entry in data.items()}


def checks_reporting(code: str) -> list[tuple[str, str]]:
    """(check name, its docstring) of the validator's checks whose source reports ``code``."""
    from cluster_iac.checks import CHECKS  # here, not at the top: module docstring

    literal = f'"{code}"'
    return [(name, inspect.getdoc(fn) or "") for name, fn in sorted(CHECKS.items())
            if literal in inspect.getsource(fn)]


def explain(code: str) -> str | None:
    """The text `cluster-iac explain CODE` prints; None for a code no entry has."""
    entry = entries().get(code.upper())
    if entry is None:
        return None
    lines = [code.upper()]
    for key, title in FIELDS:
        if key in entry:
            lines += [f"{title}:", *_wrapped(entry[key])]
    for name, doc in checks_reporting(code.upper()):
        lines += [f"Checked by {name}:", *_wrapped(" ".join(doc.split()))]
    return "\n".join(lines) + "\n"


def unknown_hint(code: str) -> str:
    """The hint for a code no entry has."""
    return (did_you_mean(code.upper(), entries())
            or "run 'cluster-iac explain' for the list of codes")


def listing() -> str:
    """Every code with the first sentence of what it means."""
    width = max(map(len, entries()))
    return "".join(f"{code.ljust(width)}  {_first_sentence(entry['means'])}\n"
                   for code, entry in sorted(entries().items()))


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="  ")
