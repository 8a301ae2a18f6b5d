"""Findings for machines (issue 24): --format json and --format sarif on validate and render.

Every spec under tests/data/invalid/ is run once with ``--format sarif --output-findings``
(the terminal then shows the text output of the same run): the SARIF validates against the
official SARIF 2.1.0 schema (tests/data/sarif/, vendored) and each result sits at the line and
column of the text output's head line. The JSON validates against schemas/findings.schema.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from ruamel.yaml import YAML

from cluster_iac.cli.findings import SARIF_SCHEMA, SCHEMA_VERSION, span_end
from cluster_iac.cli.main import main
from tests.conftest import EXAMPLES, ROOT
from tests.fuzz_specs import mutated_specs

INVALID = ROOT / "tests" / "data" / "invalid"
CASES = sorted(INVALID.rglob("*.yaml"))
SARIF_SCHEMA_FILE = ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
FINDINGS_SCHEMA_FILE = ROOT / "schemas" / "findings.schema.json"
HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): "
                  r"(?P<severity>error|warning|info)\[(?P<code>[A-Z0-9-]+)\] ")
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@cache
def _validator(path: Path) -> Any:
    schema = json.loads(path.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _valid(document: object, schema: Path) -> None:
    errors = sorted(_validator(schema).iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@cache
def _validate_json(case: Path) -> Result:
    """``validate CASE --format json``: run once per case in a process, read by the two tests
    of that document (its schema, its regions); a Result is not changed by reading it."""
    return _cli("validate", case, "--format", "json")


def _heads(text: str) -> list[tuple[str, str, int, int]]:
    """(severity, code, line, column) of each finding the text output prints."""
    return [(m["severity"], m["code"], int(m["line"]), int(m["col"]))
            for m in map(HEAD.match, text.splitlines()) if m]


def _id(case: Path) -> str:
    return str(case.relative_to(INVALID).with_suffix(""))


def test_the_vendored_sarif_schema_is_the_official_one() -> None:
    schema = json.loads(SARIF_SCHEMA_FILE.read_text())
    assert schema["id"] == SARIF_SCHEMA
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert (SARIF_SCHEMA_FILE.parent / "LICENSE.md").is_file()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_sarif_of_every_invalid_spec_is_valid_and_points_where_the_text_does(
        case: Path, tmp_path: Path) -> None:
    sarif_file = tmp_path / "findings.sarif"
    result = _cli("validate", case, "--format", "sarif", "--output-findings", sarif_file)
    assert result.exit_code == 1, result.output
    document = json.loads(sarif_file.read_text())
    _valid(document, SARIF_SCHEMA_FILE)
    [run] = document["runs"]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    text = _heads(result.output)
    assert text, result.output  # an invalid spec has findings
    sarif = []
    for item in run["results"]:
        [location] = item["locations"]
        region = location["physicalLocation"]["region"]
        sarif.append((item["level"], item["ruleId"], region["startLine"],
                      region["startColumn"]))
        assert location["physicalLocation"]["artifactLocation"] == {
            "uri": case.relative_to(ROOT).as_posix(), "uriBaseId": "%SRCROOT%"}
        rule = run["tool"]["driver"]["rules"][item["ruleIndex"]]
        assert rule["id"] == item["ruleId"] and rule["shortDescription"]["text"]
    assert sarif == [(LEVEL[s], code, line, col) for s, code, line, col in text]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_json_of_every_invalid_spec_follows_its_schema(case: Path) -> None:
    result = _validate_json(case)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    _valid(document, FINDINGS_SCHEMA_FILE)
    assert document["version"] == SCHEMA_VERSION and document["exit_code"] == 1
    assert document["counts"]["error"] == sum(f["severity"] == "error"
                                              for f in document["findings"]) > 0
    # nothing of the text output on standard output: it is the document alone
    assert not _heads(result.stdout) and f"{case}: " in result.stderr


def test_sarif_carries_code_level_message_region_and_hint() -> None:
    """The errors page's example (docs/errors.md): the misspelt key, its region the key's five
    characters."""
    case = INVALID / "spec" / "misspelt_nested_key.yaml"
    result = _cli("validate", case, "--format", "sarif")
    assert result.exit_code == 1
    [run] = json.loads(result.stdout)["runs"]
    [item] = run["results"]
    assert item["ruleId"] == "SPEC-UNKNOWN-KEY" and item["level"] == "error"
    assert item["message"]["text"] == ("unknown key 'cuont' in node_groups[0]\n"
                                       "hint: did you mean 'count'?")
    region = item["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 10, "startColumn": 33, "endLine": 10, "endColumn": 38}
    line = case.read_text().splitlines()[9]
    assert line[32:37] == "cuont"
    assert run["tool"]["driver"]["rules"][0]["help"] == {"text": "did you mean 'count'?"}
    assert item["properties"]["hint"] == "did you mean 'count'?"


def test_a_warning_is_a_finding_and_the_exit_code_stays(tmp_path: Path) -> None:
    spec = tmp_path / "minimal.yaml"
    spec.write_text((ROOT / "examples" / "minimal.yaml").read_text()
                    + "\npolicy:\n  levels: {FABRIC-NONE: warning, POWER-FEED-ASSUMED: ignore}\n")
    ok = _cli("validate", spec, "--format", "json")
    assert ok.exit_code == 0
    document = json.loads(ok.stdout)
    _valid(document, FINDINGS_SCHEMA_FILE)
    assert document["counts"] == {"error": 0, "warning": 1, "info": 0}
    assert document["exit_code"] == 0
    [finding] = document["findings"]
    assert (finding["code"], finding["severity"]) == ("FABRIC-NONE", "warning")
    assert f"{spec}: ok (" in ok.stderr  # the people's line moves off standard output
    strict = _cli("validate", spec, "--format", "sarif", "--strict")
    assert strict.exit_code == 1
    [item] = json.loads(strict.stdout)["runs"][0]["results"]
    assert item["level"] == "error" and item["ruleId"] == "FABRIC-NONE"


def test_render_writes_the_findings_and_the_tree(tmp_path: Path) -> None:
    out, findings = tmp_path / "out", tmp_path / "findings.json"
    spec = ROOT / "examples" / "minimal.yaml"
    result = _cli("render", spec, "-o", out, "--format", "json", "--output-findings", findings)
    assert result.exit_code == 0 and (out / "slurm" / "slurm.conf").is_file()
    # with --output-findings the terminal shows what --format text shows
    assert result.stdout.startswith(f"{out}: ") and "info[FABRIC-NONE]" in result.stderr
    document = json.loads(findings.read_text())
    _valid(document, FINDINGS_SCHEMA_FILE)
    assert document["command"] == "render" and document["counts"]["info"] == 1
    (out / "slurm" / "slurm.conf").write_text("stale\n")
    check = _cli("render", spec, "-o", out, "--check", "--format", "sarif")
    assert check.exit_code == 1
    _valid(json.loads(check.stdout), SARIF_SCHEMA_FILE)  # the diff went to standard error
    assert "+++ b/slurm/slurm.conf" in check.stderr


def test_text_stays_the_default_and_output_findings_needs_a_machine_format(
        tmp_path: Path) -> None:
    case = INVALID / "spec" / "misspelt_nested_key.yaml"
    assert _cli("validate", case).output == _cli("validate", case, "--format", "text").output
    refused = _cli("validate", case, "--output-findings", tmp_path / "f.json")
    assert refused.exit_code == 2 and "--output-findings needs --format json or sarif" in (
        refused.output)


def test_a_hostile_file_name_stays_one_field(tmp_path: Path) -> None:
    """A spec name with a newline, a quote and an escape character: JSON escapes it, and
    the SARIF URI percent-encodes it; no field or line is added."""
    folder = tmp_path / 'a"b\n\x1b[31m'
    folder.mkdir()
    spec = folder / "c d.yaml"
    spec.write_text("cluster: {name: x}\nbogus: 1\n")
    result = _cli("validate", spec, "--format", "sarif")
    assert result.exit_code == 1 and "\n" not in result.stdout.strip().splitlines()[0]
    document = json.loads(result.stdout)
    _valid(document, SARIF_SCHEMA_FILE)
    uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri.startswith("file:///") and "%0A%1B%5B31m/c%20d.yaml" in uri
    assert not re.search(r"[\x00-\x1f]", result.stdout.replace("\n", ""))


@pytest.mark.parametrize(("lines", "line", "column", "key", "end"), [
    (['  - {name: gpu, cuont: 2, hostname: "gpu##", racks: r01}'], 1, 17, "cuont", 22),
    (['  - {name: gpu, cuont: 2, hostname: "gpu##", racks: r01}'], 1, 24, None, 25),
    (['  - {name: gpu, cuont: 2, hostname: "gpu##", racks: r01}'], 1, 37, None, 44),
    (['  - {name: gpu, cuont: 2, hostname: "gpu##", racks: r01}'], 1, 53, None, 56),
    (["count: 4  # four", "next: 1"], 1, 8, None, 9),
    (["  - name: gpu", "    count: 2"], 1, 11, None, 14),
    (["x: 'it''s'"], 1, 4, None, 11),
    (['x: "a\\"b"'], 1, 4, None, 10),
    (["x: -5"], 1, 4, None, 6),
    # where the line alone cannot say, no end
    (["note: a plain scalar", "  that goes on"], 1, 7, None, None),
    (["- foo", "  bar"], 1, 3, None, None),
    (["racks: r[01-04]"], 1, 8, None, None),  # block, or the tail of a flow mapping?
    (["  b: r01,", "}"], 1, 6, None, None),
    (["x: 'open", "  quote'"], 1, 4, None, None),
    (["x: &anchor 1"], 1, 4, None, None),
    (["x: {a: 1}"], 1, 4, None, None),
    (["x: 1"], 1, 1, "y", None),  # the key is not where the finding says
    (["- name: a", "  pdu: p"], 1, 3, None, None),  # a mapping starts here, not a scalar
    (["x: [a: 1]"], 1, 5, None, None),
    (["x:", "  'a': 1"], 2, 3, None, None),
])
def test_the_end_of_a_region_is_given_only_where_it_is_certain(
        lines: list[str], line: int, column: int, key: str | None, end: int | None) -> None:
    assert span_end(lines, line, column, key) == end


# The docs' "Findings for CI" (docs/ci.md): its snippets, run as written (install lines aside).

def _docs_yaml(marker: str) -> Any:
    from ruamel.yaml import YAML

    readme = (ROOT / "docs" / "ci.md").read_text()
    start = readme.index(marker)
    block = re.compile(r"^```yaml\n(.*?)^```$", re.M | re.S).search(readme, start)
    assert block, marker
    return YAML(typ="safe").load(block.group(1))


def _shell(lines: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The snippet's commands in bash, each stopping the job on failure as CI does; the
    install commands left out (this checkout's cluster-iac is on PATH)."""
    script = "\n".join(["set -e"] + [ln for ln in lines
                                     if not ln.startswith(("pip install", "apt-get"))])
    env = {**os.environ,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _repository(tmp_path: Path, *, error: bool) -> Path:
    """A repository's root: cluster.yaml (minimal, or with a misspelt key) and its tree,
    rendered from the minimal example and then made stale."""
    shutil.copy(ROOT / "examples" / "minimal.yaml", tmp_path / "cluster.yaml")
    assert _cli("render", tmp_path / "cluster.yaml", "-o", tmp_path / "rendered").exit_code == 0
    spec = tmp_path / "cluster.yaml"
    spec.write_text(spec.read_text().replace("name: tiny", "name: small")
                    + ("bogus_key: 1\n" if error else ""))
    return tmp_path


def test_readme_pre_commit_config_names_the_shipped_hooks() -> None:
    from ruamel.yaml import YAML

    config = _docs_yaml("**pre-commit.**")
    shipped = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    [repo] = config["repos"]
    assert [h["id"] for h in repo["hooks"]] == [h["id"] for h in shipped]


@pytest.mark.parametrize("error", [False, True], ids=["stale", "design-error"])
def test_readme_github_workflow_fails_the_job_and_uploads_the_sarif(
        tmp_path: Path, error: bool) -> None:
    workflow = _docs_yaml("**GitHub Actions.**")
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["cluster-iac"]["steps"]
    [check] = [s for s in steps if "run" in s and "--check" in s["run"]]
    [upload] = [s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@")]
    assert upload["if"] == "always()"
    root = _repository(tmp_path, error=error)
    run = _shell([check["run"]], root)
    assert run.returncode == 1, run.stdout + run.stderr
    sarif = root / upload["with"]["sarif_file"]
    document = json.loads(sarif.read_text())
    _valid(document, SARIF_SCHEMA_FILE)
    results = document["runs"][0]["results"]
    if error:
        assert [r["ruleId"] for r in results] == ["SPEC-UNKNOWN-KEY"]
        location = results[0]["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "cluster.yaml"
        assert location["region"]["startLine"] == len(
            (root / "cluster.yaml").read_text().splitlines())
    else:
        assert "rendered: stale" in run.stderr
        # the minimal spec's findings: no compute fabric (a note) and its feeds assumed
        assert [(r["ruleId"], r["level"]) for r in results] == [
            ("FABRIC-NONE", "note"), ("POWER-FEED-ASSUMED", "warning")]
        # rendered again, the same step passes
        assert _cli("render", root / "cluster.yaml", "-o", root / "rendered").exit_code == 0
        assert _shell([check["run"]], root).returncode == 0


def test_readme_gitlab_job_writes_a_code_quality_report(tmp_path: Path) -> None:
    if shutil.which("jq") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("jq is missing: .ci/install-deps installs it")
        pytest.skip("jq is not installed (apt-get install jq)")
    job = _docs_yaml("**GitLab CI.**")["cluster-iac"]
    assert job["artifacts"]["when"] == "always"
    root = _repository(tmp_path, error=True)
    script = _shell(job["before_script"] + job["script"], root)
    assert script.returncode == 1 and "error[SPEC-UNKNOWN-KEY]" in script.stderr
    after = _shell(job["after_script"], root)
    assert after.returncode == 0, after.stderr
    report = json.loads((root / job["artifacts"]["reports"]["codequality"]).read_text())
    findings = json.loads((root / "cluster-iac.json").read_text())["findings"]
    assert report == [{
        "description": f"{f['code']}: {f['message']}", "check_name": f["code"],
        "fingerprint": f"{f['code']}:cluster.yaml:{f['line']}:{f['column']}",
        "severity": {"error": "major", "warning": "minor", "info": "info"}[f["severity"]],
        "location": {"path": "cluster.yaml", "lines": {"begin": f["line"]}},
    } for f in findings]
    assert [r["severity"] for r in report] == ["major"]


def test_an_output_the_os_refuses_is_a_finding_too(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = _cli("render", ROOT / "examples" / "minimal.yaml", "-o", blocker / "out",
                  "--format", "sarif")
    assert result.exit_code == 1 and "error[IO-WRITE] cannot write output" in result.stderr
    document = json.loads(result.stdout)
    _valid(document, SARIF_SCHEMA_FILE)
    [run] = document["runs"]
    assert run["invocations"] == [{"executionSuccessful": False, "exitCode": 1}]
    item = run["results"][-1]
    assert (item["ruleId"], item["level"]) == ("IO-WRITE", "error")
    uri = item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/a-file")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_json_of_every_example_follows_its_schema(example: Path) -> None:
    result = _cli("validate", example, "--format", "json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    _valid(document, FINDINGS_SCHEMA_FILE)
    assert document["counts"]["error"] == 0 and document["exit_code"] == 0
    assert f"{len(document['findings'])} finding(s))" in result.stderr


def _spans_what_it_cites(finding: dict[str, Any], lines: list[str], data: Any) -> None:
    """The text from a finding's start to its end is a key on its spec path (the finding's
    own, or the parent it is cited at when the file leaves the path out) or, read as YAML,
    the value there."""
    assert finding["end_line"] == finding["line"]
    line = lines[finding["line"] - 1]
    region = line[finding["column"] - 1:finding["end_column"] - 1]
    assert finding["end_column"] <= len(line) + 1 and region == region.strip() != ""
    path = finding["spec_path"]
    if region in map(str, path):
        return
    shown = YAML(typ="safe", pure=True).load(region)
    values = []
    for depth in range(len(path), 0, -1):
        try:
            values.append(_resolve(data, path[:depth]))
        except (KeyError, IndexError, TypeError):
            continue
    assert any(shown == v or (shown != shown and v != v) for v in values), (finding, region)


def _resolve(data: Any, path: list[str | int]) -> Any:
    for part in path:
        data = data[part]
    return data


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_every_region_end_spans_the_cited_key_or_value(case: Path) -> None:
    """Where a finding of an invalid spec has an end, it spans what the finding cites."""
    result = _validate_json(case)
    findings = [f for f in json.loads(result.stdout)["findings"] if "end_line" in f]
    if findings:
        text = case.read_bytes().decode("utf-8")
        for finding in findings:
            _spans_what_it_cites(finding, text.split("\n"), YAML().load(text))


FUZZ = Path(tempfile.mkdtemp(prefix="cluster-iac-findings-fuzz-"))


@settings(max_examples=int(os.environ.get("FINDINGS_FUZZ_EXAMPLES", "25")), deadline=None,
          derandomize=os.environ.get("CI") == "true", database=None,
          suppress_health_check=list(HealthCheck))
@given(mutated_specs())
def test_mutated_examples_give_valid_documents_and_true_regions(case: tuple[str, Any]) -> None:
    """The fuzz test's mutated examples (tests/fuzz_specs.py: hostile strings, huge numbers,
    renamed keys), written by the project's YAML writer: both documents follow their
    schemas, and every region end spans what its finding cites."""
    from cluster_iac.cli.findings import FindingsLog
    from cluster_iac.formats.yaml import yaml_text
    from cluster_iac.render import PipelineError, build

    text = yaml_text(case[1])
    spec = FUZZ / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    log = FindingsLog("validate", str(spec))
    try:
        built = build(spec, emit=False)
        log.add(built.findings, built.source)
    except PipelineError as exc:
        log.add(exc.diagnostics, exc.source)
    _valid(json.loads(json.dumps(log.document("sarif", 1))), SARIF_SCHEMA_FILE)
    document = json.loads(json.dumps(log.document("json", 1)))
    _valid(document, FINDINGS_SCHEMA_FILE)
    data = YAML().load(text)
    for finding in document["findings"]:
        if "end_line" in finding:
            _spans_what_it_cites(finding, text.split("\n"), data)


def test_a_non_finite_figure_is_text_so_the_document_stays_json() -> None:
    from cluster_iac.base.errors import Diagnostic
    from cluster_iac.cli.findings import FindingsLog

    log = FindingsLog("validate", "spec.yaml")
    log.add([Diagnostic("POWER-BREAKER", "over", details={"measured": float("inf"),
                                                          "limit": 25.6, "unit": "A"})], None)
    document = log.document("json", 1)
    json.dumps(document, allow_nan=False)  # raises on NaN or Infinity
    _valid(document, FINDINGS_SCHEMA_FILE)
    assert document["findings"][0]["details"] == {"limit": 25.6, "measured": "inf", "unit": "A"}
