"""Shared real-consumer fixtures; the real-Slurm matrix printed at the end of a run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.real.matrix import MATRIX
from tests.real.policy_cluster import EXAMPLES, Policy, running_policy


@pytest.fixture(scope="session", params=EXAMPLES)
def policy(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Policy]:
    """An example's policy in a running MariaDB, slurmdbd and slurmctld (one per example,
    shared by test_slurm_policy_real.py and test_health_real.py)."""
    yield from running_policy(request.param, tmp_path_factory.mktemp(request.param))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not MATRIX.cells:
        return
    terminalreporter.section("real Slurm matrix")
    terminalreporter.write(MATRIX.table())
    path = MATRIX.write()
    if path is not None:
        terminalreporter.write_line(f"written to {path}")
