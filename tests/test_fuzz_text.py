"""Fuzz of the YAML text: `cluster-iac validate` of a mutated example ends with its findings
(exit 0) or located errors (exit 1), never with a traceback (issue 29: a mapping used as a key
was one).

Seeded and bounded: FUZZ_TEXT_CASES edits (120 by default, a few seconds) from the seed
FUZZ_TEXT_SEED (0), so a failure is reproduced by its seed and case number; 11,000 cases were
run once locally (README, "What a spec string may hold, and the limits").
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from tests.fuzz_text import BASES, base_text, mutate

CASES = int(os.environ.get("FUZZ_TEXT_CASES", "120"))
SEED = int(os.environ.get("FUZZ_TEXT_SEED", "0"))
HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<level>error|warning|info)"
                  r"\[[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\] \S")


def cases(count: int, seed: int) -> list[tuple[int, str, str]]:
    """(case number, example, mutated text), the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for number in range(count):
        name = BASES[number % len(BASES)]
        out.append((number, name, mutate(base_text(name), rng)))
    return out


def check_validate(text: str, spec: Path) -> None:
    """validate ends cleanly: exit 0 or 1, no exception but click's exit, no traceback, and on
    exit 1 at least one located error within the file."""
    spec.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        located = [HEAD.match(line) for line in result.output.splitlines()]
        errors = [m for m in located if m and m["level"] == "error"]
        assert errors, result.output
        last = max(1, len(text.split("\n")))
        for match in errors:
            assert 1 <= int(match["line"]) <= last, result.output


def test_the_cases_are_reproducible() -> None:
    assert cases(5, 7) == cases(5, 7)
    assert cases(5, 7) != cases(5, 8)


@pytest.mark.parametrize("chunk", range(4))
def test_mutated_text_validates_without_a_traceback(chunk: int, tmp_path: Path) -> None:
    """A quarter of the cases each (four tests, so that a failure shows which part)."""
    for number, name, text in cases(CASES, SEED)[chunk::4]:
        try:
            check_validate(text, tmp_path / "spec.yaml")
        except AssertionError as exc:
            raise AssertionError(f"seed {SEED} case {number} (from {name}.yaml):\n{text}\n"
                                 f"{exc}") from None
