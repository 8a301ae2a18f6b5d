"""PromQL and rule-file pieces: quoted label matchers, name lists as regexes, alert rules."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from cluster_iac.base.sorting import natural_sorted

_RE2_SPECIAL = re.compile(r"([^A-Za-z0-9_-])")


def string(value: str) -> str:
    """A PromQL string literal: double-quoted with Go's escapes (JSON's are a subset of them)."""
    return json.dumps(value)


def selector(metric: str, **labels: str | tuple[str, str]) -> str:
    """``metric{a="x",b=~"y|z"}``: a value given as ('=~', regex) matches by regex."""
    parts = []
    for name, value in labels.items():
        op, text = value if isinstance(value, tuple) else ("=", value)
        parts.append(f"{name}{op}{string(text)}")
    return f"{metric}{{{','.join(parts)}}}"


def one_of(names: Iterable[str]) -> tuple[str, str]:
    """A regex matcher for exactly these names (RE2 is anchored; each name escaped)."""
    ordered = natural_sorted(set(names), str)
    return ("=~", "|".join(_RE2_SPECIAL.sub(r"\\\1", n) for n in ordered))


def number(value: float) -> str:
    """A threshold as PromQL reads it: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


@dataclass(frozen=True)
class AlertRule:
    """One alerting rule; ``threshold`` says what the figure is and ``source`` where it is from.
    Rules of one name tell their scope apart by ``labels`` (promtool refuses two rules of the
    same name and labels)."""

    alert: str
    expr: str
    severity: str
    summary: str
    threshold: str
    source: str
    for_: str = "0s"
    labels: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        rule: dict[str, object] = {"alert": self.alert, "expr": self.expr}
        if self.for_ != "0s":
            rule["for"] = self.for_
        rule["labels"] = {"severity": self.severity, **self.labels}
        rule["annotations"] = {"summary": self.summary, "threshold": self.threshold,
                               "source": self.source}
        return rule


def group(name: str, rules: list[AlertRule]) -> dict[str, object]:
    return {"name": name, "rules": [r.as_dict() for r in rules]}
