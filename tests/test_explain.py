"""`cluster-iac explain CODE`: every code the pipeline can emit has an entry in
cluster_iac/codes.yaml, and no entry is for a code nothing emits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.catalog.nccl_vars import NcclVariable
from cluster_iac.cli.explain import entries
from cluster_iac.cli.main import main
from tests.conftest import ROOT

SOURCE = ROOT / "cluster_iac"
LITERAL = re.compile(r'"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"')
PRINTED = re.compile(r"error\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\]")  # the CLI's own lines
# Literals of that shape that are not finding codes, each where it is used.
NOT_CODES = {"L1-L2": "plan/electrical.py", "L2-L3": "plan/electrical.py",
             "L3-L1": "plan/electrical.py", "D-HH": "plan/slurm.py",
             "TOO-NEW": "catalog/nccl_vars.py",
             # placeholder GUIDs in the ibnetdiscover format's docstring example
             "H-0201000000000002": "formats/ibnetdiscover.py",
             "S-0200000000000001": "formats/ibnetdiscover.py",
             "S-0200000000000003": "formats/ibnetdiscover.py"}


def _emitted() -> set[str]:
    """Every code literal in the package's source, the CLI's printed codes, and the NCCL
    variable codes made from NcclVariable.status's suffixes (NCCL-<suffix>-VAR)."""
    found: set[str] = set()
    for module in sorted(SOURCE.rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        found.update(LITERAL.findall(text))
        found.update(PRINTED.findall(text))
    for literal, where in NOT_CODES.items():
        assert f'"{literal}"' in (SOURCE / where).read_text(), (literal, where)
    found -= set(NOT_CODES)
    return found | {f"NCCL-{suffix}-VAR" for suffix in _nccl_suffixes()}


def _nccl_suffixes() -> set[str]:
    suffixes = set()
    first, deprecated, removed = (2, 30), (2, 1), (2, 2)
    for kwargs in ({"first": first}, {"deprecated": deprecated}, {"removed": removed}):
        variable = NcclVariable(**{"name": "X", "values": "", "default": "", "meaning": "",
                                   "first": None,
                                   "deprecated": None, "removed": None,
                                   "replacement": None, **kwargs})
        status = variable.status((2, 21))
        assert status is not None
        suffixes.add(status[0])
    return suffixes


def test_every_emitted_code_has_an_entry() -> None:
    missing = sorted(_emitted() - set(entries()))
    assert not missing, f"codes without an entry in cluster_iac/codes.yaml: {missing}"


def test_no_entry_is_for_a_code_nothing_emits() -> None:
    stale = sorted(set(entries()) - _emitted())
    assert not stale, f"entries for codes nothing emits: {stale}"


def test_every_entry_says_what_it_means_and_how_to_fix_it() -> None:
    for code, entry in entries().items():
        assert set(entry) <= {"means", "formula", "sources", "fix"}, code
        assert entry.get("means") and entry.get("fix"), code


def test_explain_prints_the_entry_and_the_check_that_reports_it() -> None:
    result = CliRunner().invoke(main, ["explain", "power-breaker"])
    assert result.exit_code == 0
    text = result.output
    assert text.startswith("POWER-BREAKER\nWhat it means:\n")
    assert "Formula:" in text and "NEC 210.20(A)" in text and "How to fix it:" in text
    assert "Checked by power.breaker_load:" in text  # the check's own docstring


def test_explain_of_a_compile_code_has_no_check_section() -> None:
    result = CliRunner().invoke(main, ["explain", "SPEC-NIC-MISSING"])
    assert result.exit_code == 0 and "nics_add" in result.output
    assert "Checked by" not in result.output


def test_explain_of_an_unknown_code_suggests_the_nearest() -> None:
    result = CliRunner().invoke(main, ["explain", "POWER-BREKER"])
    assert result.exit_code == 1
    assert "no finding code 'POWER-BREKER'; did you mean 'POWER-BREAKER'?" in result.output


def test_explain_without_a_code_lists_every_code() -> None:
    result = CliRunner().invoke(main, ["explain"])
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.output.splitlines()]
    assert listed == sorted(entries())


@pytest.mark.parametrize("case", sorted((ROOT / "tests" / "data" / "invalid").rglob("*.yaml")),
                         ids=lambda p: str(p.relative_to(ROOT / "tests" / "data" / "invalid")))
def test_every_code_the_invalid_specs_expect_is_explained(case: Path) -> None:
    head = case.read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if not head.startswith("# expect:"):
        return  # a file without an expectation line (a fixture another test reads)
    codes = re.findall(r"\b([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\b", head)
    assert codes and set(codes) <= set(entries())
