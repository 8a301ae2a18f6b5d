"""Shared real-consumer fixtures (the real-Slurm matrix is printed by tests/conftest.py, which
the controller of a parallel run loads too)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.real.policy_cluster import EXAMPLES, Policy, running_policy


@pytest.fixture(scope="session", params=EXAMPLES)
def policy(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Policy]:
    """An example's policy in a running MariaDB, slurmdbd and slurmctld (one per example,
    shared by test_slurm_policy_real.py and test_health_real.py)."""
    yield from running_policy(request.param, tmp_path_factory.mktemp(request.param))

