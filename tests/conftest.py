"""Shared fixtures: the examples and their in-memory builds."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import settings

from cluster_iac.render import Build, build

# Property tests assert correctness, never time: hypothesis' default 200 ms deadline per example
# failed a CSV property test on the loaded 2-core machine. Speed is the benchmark's to measure.
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
EXAMPLE_IDS = [p.stem for p in EXAMPLES]


@cache
def example_build(name: str) -> Build:
    """The full pipeline run on examples/<name>.yaml (cached across tests)."""
    return build(ROOT / "examples" / f"{name}.yaml")


@pytest.fixture(params=EXAMPLE_IDS)
def example(request: pytest.FixtureRequest) -> str:
    return str(request.param)
