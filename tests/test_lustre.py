"""Lustre outputs: every `lfs setstripe` line parsed by the man page's syntax, layouts.json
agreeing with it, default layouts within the OST count, and limits rejected with a location."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from cluster_iac.compile.plan_lustre import default_layout
from cluster_iac.render import PipelineError, build
from tests.conftest import EXAMPLE_IDS, ROOT, example_build

KIB, GIB = 1 << 10, 1 << 30
UNITS = {"": 1, "k": KIB, "m": 1 << 20, "g": GIB, "t": 1 << 40}
OPTIONS = {"-c": "stripe_count", "--stripe-count": "stripe_count", "-S": "stripe_size",
           "--stripe-size": "stripe_size", "-i": "stripe_index", "--stripe-index": "stripe_index",
           "-p": "pool", "--pool": "pool", "-L": "layout", "--layout": "layout",
           "-E": "end", "--component-end": "end"}


class SetstripeError(ValueError):
    """A line that lfs setstripe(1) would refuse."""


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)([kKmMgGtT]?)", text)
    if not match:
        raise SetstripeError(f"bad size {text!r}")
    return int(match.group(1)) * UNITS[match.group(2).lower()]


def parse_setstripe(line: str) -> tuple[str, list[dict[str, object]]]:
    """lfs setstripe [OPTIONS] path, or lfs setstripe {-E end [OPTIONS]}... path (lfs-setstripe(1)):
    -> (path, components with start/end/stripe_count/stripe_size/layout)."""
    words = shlex.split(line)
    if words[:2] != ["lfs", "setstripe"] or len(words) < 4 or words[-1].startswith("-"):
        raise SetstripeError("usage: lfs setstripe [OPTIONS] {directory|filename}")
    components: list[dict[str, object]] = [{}]
    options = words[2:-1]
    composite = options[0] in ("-E", "--component-end") or options[0].startswith("--component-end=")
    while options:
        word = options.pop(0)
        name, _, inline = word.partition("=")
        if name not in OPTIONS or (not inline and not options):
            raise SetstripeError(f"unknown option or missing value: {word}")
        key, value = OPTIONS[name], inline or options.pop(0)
        if key == "end":
            if not composite:
                raise SetstripeError("-E mixed into a plain layout")
            if components[-1]:
                components.append({})
        if key in components[-1]:
            raise SetstripeError(f"{name} given twice for one component")
        components[-1][key] = value
    return words[-1], _check(components, composite)


def _check(components: list[dict[str, object]], composite: bool) -> list[dict[str, object]]:
    start, out = 0, []
    for index, comp in enumerate(components):
        last = index == len(components) - 1
        end_text = str(comp.get("end", "-1" if not composite else ""))
        end = None if end_text in ("-1", "eof", "EOF") else _size(end_text)
        if (end is None) != last:
            raise SetstripeError("only the last component ends at -1/eof")
        if end is not None and end <= start:
            raise SetstripeError("component ends must increase")
        layout = str(comp.get("layout", "raid0"))
        if layout == "mdt":
            if index or last or "stripe_count" in comp:
                raise SetstripeError("-L mdt: first component only, without -c")
            size = end
        else:
            size = _size(str(comp.get("stripe_size", "1M")))
            count = int(str(comp.get("stripe_count", "0")))
            if size % (64 * KIB) or not 0 < size <= 4 * GIB - 64 * KIB:
                raise SetstripeError("stripe size must be a multiple of 64 KiB below 4 GiB")
            if count < -1 or count > 2000:
                raise SetstripeError("stripe count must be -1, 0 or 1..2000")
            if end is not None and end % size:
                raise SetstripeError("component end must be a multiple of the stripe size")
            comp["stripe_count"] = count
        out.append({"start": start, "end": end, "layout": layout, "stripe_size": size,
                    **({"stripe_count": comp["stripe_count"]} if layout != "mdt" else {})})
        start = end or start
    return out


LUSTRE_EXAMPLES = [n for n in EXAMPLE_IDS if "lustre/setstripe.sh" in example_build(n).files]
BASE = ROOT / "tests" / "data" / "invalid" / "spec"


def _setstripe_lines(name: str) -> list[str]:
    text = example_build(name).files["lustre/setstripe.sh"]
    return [line for line in text.splitlines() if line.startswith("lfs ")]


def test_some_example_has_lustre() -> None:
    assert "dgx-h100-superpod-4su" in LUSTRE_EXAMPLES


@pytest.mark.parametrize("name", LUSTRE_EXAMPLES)
def test_every_setstripe_line_follows_the_man_page(name: str) -> None:
    data = json.loads(example_build(name).files["lustre/layouts.json"])
    lines = _setstripe_lines(name)
    assert len(lines) == len(data["directories"])
    osts = data["ost_count"]
    for line, directory in zip(lines, data["directories"], strict=True):
        path, components = parse_setstripe(line)
        assert path == directory["path"]
        expected = [{k: v for k, v in c.items()
                     if not (c["layout"] == "mdt" and k == "stripe_count")}
                    for c in directory["components"]]
        assert components == expected
        assert all(c.get("stripe_count", 0) <= osts for c in components)


@pytest.mark.parametrize("line", [
    "lfs setstripe -S 100K /l/x",                             # not a multiple of 64 KiB
    "lfs setstripe -S 4G /l/x",                               # above 4 GiB - 64 KiB
    "lfs setstripe -c -2 /l/x",                               # below -1
    "lfs setstripe -E 1G -c 1 -E 64M -c 2 -E -1 -c 4 /l/x",   # ends not increasing
    "lfs setstripe -E 64M -c 1 -E 1G -c 4 /l/x",              # last component not at eof
    "lfs setstripe -E 64K -L mdt -c 1 -E -1 /l/x",            # -c on a DoM component
    "lfs setstripe -E 3M -c 1 -S 2M -E -1 /l/x",              # end not a stripe multiple
    "lfs setstripe -c 1",                                     # no path
])
def test_parser_rejects_what_the_man_page_forbids(line: str) -> None:
    with pytest.raises(SetstripeError):
        parse_setstripe(line)


def test_parser_accepts_the_man_page_forms() -> None:
    assert parse_setstripe("lfs setstripe --stripe-count=-1 --stripe-size 4M /l/x")[1][0][
        "stripe_count"] == -1
    _, comps = parse_setstripe("lfs setstripe -E 64K -L mdt -E eof -c 1 /l/x")
    assert [c["layout"] for c in comps] == ["mdt", "raid0"]


@pytest.mark.parametrize("osts", [1, 2, 3, 32, 4000])
@pytest.mark.parametrize("pattern", ["dataset", "checkpoint", "scratch", "home", "small-files"])
def test_default_layouts_fit_any_ost_count(pattern: str, osts: int) -> None:
    components, reason = default_layout(pattern, osts)
    assert reason
    for comp in components:
        assert comp.stripe_count == -1 or comp.stripe_count <= min(osts, 2000)
        assert comp.stripe_size % (64 * KIB) == 0
    ends = [c.end for c in components]
    assert ends[-1] is None and all(a < b for a, b in zip(ends[:-2], ends[1:-1], strict=False))


@pytest.mark.parametrize("case,code,line", [
    ("lustre_stripe_limits", "LUSTRE-STRIPE-COUNT", 38),
    ("lustre_pfl_ends", "LUSTRE-PFL-END", 42),
])
def test_layout_beyond_a_limit_is_rejected_at_its_line(case: str, code: str, line: int) -> None:
    spec = BASE / f"{case}.yaml"
    with pytest.raises(PipelineError) as caught:
        build(spec)
    diagnostic = next(d for d in caught.value.diagnostics if d.code == code)
    assert diagnostic.path[:3] == ("storage", "lustre", "directories")
    location = caught.value.source.locate(diagnostic.path)
    assert (Path(location.file).name, location.line) == (spec.name, line)


def test_stripe_size_of_4_gib_is_rejected(tmp_path: Path) -> None:
    text = (BASE / "lustre_stripe_limits.yaml").read_text().replace(
        "stripe_count: 8, stripe_size: 100K", "stripe_count: 4, stripe_size: 4G")
    spec = tmp_path / "big.yaml"
    spec.write_text(text)
    with pytest.raises(PipelineError) as caught:
        build(spec)
    assert [d.code for d in caught.value.diagnostics] == ["LUSTRE-STRIPE-SIZE"]
    # 4 GiB - 64 KiB is the largest stripe Lustre takes
    spec.write_text(text.replace("stripe_size: 4G", "stripe_size: 4194240K"))
    layout = build(spec).plan.lustre.directories[-1]
    assert layout.components[0].stripe_size == 4 * GIB - 64 * KIB


def test_data_on_mdt_and_spec_layouts_follow_the_man_page(tmp_path: Path) -> None:
    text = (BASE / "lustre_stripe_limits.yaml").read_text().replace(
        "- {path: /lustre/small, pattern: scratch, stripe_count: 8, stripe_size: 100K}",
        "- {path: /lustre/small, pattern: small-files}\n"
        "      - {path: /lustre/wide, pattern: scratch, stripe_count: -1, stripe_size: 16M}")
    spec = tmp_path / "ok.yaml"
    spec.write_text(text)
    files = build(spec).files
    lines = [ln for ln in files["lustre/setstripe.sh"].splitlines() if ln.startswith("lfs ")]
    parsed = dict(parse_setstripe(line) for line in lines)
    assert [c["layout"] for c in parsed["/lustre/small"]] == ["mdt", "raid0"]
    assert parsed["/lustre/wide"] == [{"start": 0, "end": None, "layout": "raid0",
                                       "stripe_size": 16 << 20, "stripe_count": -1}]
    # 2 OSS x 2 OSTs: the dataset layout's middle component asks for 4, not more
    assert max(c.get("stripe_count", 0) for c in parsed["/lustre/data"]) == 4
