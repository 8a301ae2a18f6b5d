"""Bounded loading: what cannot live in a data file (a 2 MB comment, a /dev/zero spec), and the
limits at their edges: one value under a limit loads, one over is a located error."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.base.source import split_lines
from cluster_iac.load.limits import MAX_DEPTH, MAX_LINE_CHARS, MAX_SPEC_BYTES, MAX_VALUES
from cluster_iac.load.loader import load_spec_file, load_spec_text

MINIMAL = (Path(__file__).parent.parent / "examples" / "minimal.yaml").read_text()


def _error(text: str) -> tuple[str, int, int]:
    with pytest.raises(CompileError) as info:
        load_spec_text(text, "s.yaml")
    [diag] = info.value.diagnostics
    assert diag.line is not None and diag.column is not None
    return diag.code, diag.line, diag.column


def test_a_2_mb_comment_is_refused_by_size_before_yaml_reads_it(tmp_path: Path) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text("#" + "x" * 2_000_000 + "\n" + MINIMAL)
    with pytest.raises(CompileError) as info:
        load_spec_file(spec)
    assert [(d.code, d.line) for d in info.value.diagnostics] == [("YAML-FILE-SIZE", 1)]


def test_a_spec_that_never_ends_is_read_only_up_to_the_limit() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CompileError) as info:
        load_spec_file("/dev/zero")
    assert info.value.diagnostics[0].code == "YAML-FILE-SIZE"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024  # read MAX_SPEC_BYTES + 1, not the endless stream


def test_the_size_limit_is_exact() -> None:
    pad = "#" * 100 + "\n"
    under = MINIMAL + pad * ((MAX_SPEC_BYTES - len(MINIMAL)) // len(pad))
    assert len(under.encode()) <= MAX_SPEC_BYTES
    load_spec_text(under)
    assert _error(under + "#" * (MAX_SPEC_BYTES - len(under.encode()) + 1))[0] == "YAML-FILE-SIZE"


def test_a_long_line_is_cited_where_it_passes_the_limit() -> None:
    ok = MINIMAL + "# " + "x" * (MAX_LINE_CHARS - 2) + "\n"
    load_spec_text(ok)
    long = MINIMAL + "# " + "x" * (MAX_LINE_CHARS - 1) + "\n"
    assert _error(long) == ("YAML-LINE-LENGTH", len(split_lines(MINIMAL)) + 1,
                            MAX_LINE_CHARS + 1)


def test_nesting_up_to_the_limit_loads_and_one_more_is_a_located_error() -> None:
    # the root mapping and the key are levels 1 and 2: the value's lists start at level 2
    fits = "workload: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    load_spec_text(fits)
    deeper = "workload: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n"
    assert _error(deeper) == ("YAML-DEPTH", 1, len("workload: ") + MAX_DEPTH)


def test_nesting_far_deeper_than_python_recursion_is_a_located_error() -> None:
    assert _error("a: " + "[" * 5000 + "]" * 5000 + "\n")[0] == "YAML-DEPTH"


def test_an_alias_bomb_stops_at_the_alias_that_crosses_the_limit_in_well_under_a_second() -> None:
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    levels += [f"{k}: &{k} [" + ", ".join([f"*{p}"] * 9) + "]"
               for p, k in zip("abcdefgh", "bcdefghi", strict=True)]
    text = "\n".join(levels) + "\n"
    start = time.process_time()
    code, line, column = _error(text)
    assert time.process_time() - start < 0.5
    assert code == "YAML-ALIAS-EXPANSION"
    # list a holds 10 values (itself and nine scalars), b 1 + 9 x 10 = 91, then 820, 7381 and
    # 66430 for e; with the keys, lines 1-5 make 74,737 values, and on line 6 each *e adds
    # 66,430: the third reaches 274,027, over 250,000. "f: &f [*e, *e, *e": column 16.
    assert MAX_VALUES == 250_000
    assert (line, column) == (6, 16)


def test_aliases_within_the_limit_expand() -> None:
    text = "a: &a [1, 2, 3]\nb: [*a, *a]\n"
    data, _ = load_spec_text(text)
    assert data == {"a": [1, 2, 3], "b": [[1, 2, 3], [1, 2, 3]]}
