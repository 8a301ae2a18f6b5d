"""The real-Slurm matrix: examples x releases, one column per thing the daemons confirmed."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

COLUMNS = ("starts", "nodes", "partitions", "gpus", "topology", "log clean")


@dataclass
class Matrix:
    """Cell 'example@target/release' -> column -> passed. A test records False when it starts
    and True when its last assertion passed, so a failure or an error leaves False."""

    cells: dict[str, dict[str, bool]] = field(default_factory=dict)

    def record(self, cell: str, column: str, passed: bool) -> None:
        self.cells.setdefault(cell, {})[column] = passed

    def table(self) -> str:
        """A Markdown table, one row per cell (columns no test reached stay empty)."""
        lines = ["| example | rendered for | run on | " + " | ".join(COLUMNS) + " |",
                 "|---|---|---|" + "---|" * len(COLUMNS)]
        for cell in sorted(self.cells, key=_order):
            name, _, rest = cell.partition("@")
            target, _, release = rest.partition("/")
            marks = self.cells[cell]
            shown = [_mark(marks.get(c)) for c in COLUMNS]
            lines.append(f"| {name} | {target} | {release} | " + " | ".join(shown) + " |")
        return "\n".join(lines) + "\n"

    def write(self) -> Path | None:
        """Into $CLUSTER_IAC_SLURM_MATRIX when set."""
        target = os.environ.get("CLUSTER_IAC_SLURM_MATRIX")
        if not target or not self.cells:
            return None
        path = Path(target)
        path.write_text(self.table())
        return path


def _mark(passed: bool | None) -> str:
    """A column's cell: yes, NO in bold, or empty where no test reached it."""
    if passed is None:
        return ""
    return "yes" if passed else "**NO**"


def _order(cell: str) -> tuple[str, str, str]:
    name, _, rest = cell.partition("@")
    target, _, release = rest.partition("/")
    return name, target, release


MATRIX = Matrix()
