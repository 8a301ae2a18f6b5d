"""Print the real-Slurm matrix at the end of a run that built one."""

from __future__ import annotations

import pytest

from tests.real.matrix import MATRIX


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not MATRIX.cells:
        return
    terminalreporter.section("real Slurm matrix")
    terminalreporter.write(MATRIX.table())
    path = MATRIX.write()
    if path is not None:
        terminalreporter.write_line(f"written to {path}")
