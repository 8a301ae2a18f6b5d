"""Fuzz: mutated examples through the whole pipeline give located diagnostics or a clean render.

FUZZ_EXAMPLES sets the number of examples (2,000 by default, what CI runs; 16,000 were run once
locally, see the README). Under CI the examples are derandomized, so a run is reproducible.
"""

from __future__ import annotations

import os
import re
import resource
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from cluster_iac.base.text import CONTROL
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.render import Build, PipelineError, build
from tests.fuzz_specs import mutated_specs

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "2000"))
MEMORY_CAP = 2 << 30  # far above any example's need (the corpus peaks under 100 MB)
HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (error|warning|info)"
                  r"\[[A-Z][A-Z0-9]*(-[A-Z0-9]+)+\] \S")
WORK = Path(tempfile.mkdtemp(prefix="cluster-iac-fuzz-"))


@contextmanager
def memory_cap(extra: int) -> Iterator[None]:
    """The process may grow by at most ``extra`` bytes of address space meanwhile: a spec that
    expands without bound is then a MemoryError that hypothesis reports and shrinks, not the
    machine's out-of-memory killer ending the run (as a 24 GB example once did)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm", encoding="ascii") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


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
    with memory_cap(MEMORY_CAP):
        result = run_spec(text)
    assert_located(result, text)
    if isinstance(result, Build):
        assert_clean_outputs(result)
