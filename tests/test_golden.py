"""Golden files: every emitted file of every example, one plain-text snapshot each.

A reviewer reads a change to slurm.conf as a plain diff of tests/__snapshots__/test_golden/
test_output_matches_golden[<example>--<dir>--<file>].txt. Update with
`pytest tests/test_golden.py --snapshot-update` and review the diff.
"""

from __future__ import annotations

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tests.conftest import EXAMPLE_IDS, example_build


class TextFile(SingleFileSnapshotExtension):
    """One snapshot file per output file, stored as the text itself."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


def _cases() -> list[tuple[str, str]]:
    return [(name, path) for name in EXAMPLE_IDS for path in example_build(name).files]


def _case_id(case: tuple[str, str]) -> str:
    return f"{case[0]}--{case[1].replace('/', '--')}"


@pytest.mark.parametrize(("example_name", "path"), _cases(), ids=[_case_id(c) for c in _cases()])
def test_output_matches_golden(example_name: str, path: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    text = example_build(example_name).files[path]
    assert text == snapshot(extension_class=TextFile)
