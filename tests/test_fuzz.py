"""Fuzz: mutated examples through the whole pipeline give located diagnostics or a clean render.

FUZZ_EXAMPLES sets the number of examples (2,000 by default, what CI runs; 50,000 was run once
locally, see the README). Under CI the examples are derandomized, so a run is reproducible.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from cluster_iac.console import format_diagnostic
from cluster_iac.emit.formats import yaml_text
from cluster_iac.render import Build, PipelineError, build
from cluster_iac.text import CONTROL
from tests.fuzz_specs import mutated_specs

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "2000"))
HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (error|warning|info)"
                  r"\[[A-Z][A-Z0-9]*(-[A-Z0-9]+)+\] \S")
WORK = Path(tempfile.mkdtemp(prefix="cluster-iac-fuzz-"))


def run_spec(text: str, name: str = "spec.yaml") -> Build | PipelineError:
    """The pipeline on ``text``, emitters included: its build, or the error it raised."""
    spec = WORK / name
    spec.write_text(text, encoding="utf-8")
    try:
        return build(spec, emit=True)
    except PipelineError as exc:
        return exc


def assert_located(result: Build | PipelineError, text: str) -> None:
    """Every diagnostic prints as file:line:col: severity[CODE] message, at a line of the
    file (or 1:1 for the whole document), with no control character."""
    diagnostics = result.diagnostics if isinstance(result, PipelineError) else result.findings
    if isinstance(result, PipelineError):
        assert any(d.is_error for d in diagnostics)
    lines = max(1, len(text.splitlines()) + 1)
    for diag in diagnostics:
        shown = format_diagnostic(diag, result.source, "spec.yaml")
        head = HEAD.match(shown)
        assert head, shown
        assert 1 <= int(head["line"]) <= lines, shown
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", shown), shown


def assert_clean_outputs(result: Build) -> None:
    """A render's files hold no control character but line feeds and tabs (fstab separates its
    fields with tabs, a script may match one): no spec string holds either, so they are the
    templates' own."""
    for path, text in result.files.items():
        found = CONTROL.search(text.replace("\n", "").replace("\t", ""))
        assert found is None, (path, text[max(0, found.start() - 40):found.end() + 40])


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck), database=None)
@given(mutated_specs())
def test_mutated_examples_give_located_errors_or_a_clean_render(case: tuple[str, Any]) -> None:
    _name, data = case
    text = yaml_text(data)
    result = run_spec(text)
    assert_located(result, text)
    if isinstance(result, Build):
        assert_clean_outputs(result)
