"""Findings for machines: the diagnostics of one run as JSON (schemas/findings.schema.json)
or as SARIF 2.1.0, for CI systems that put an error on the spec line of a pull request.

Each finding is located exactly where the text output (cli/console.py) puts its caret; the
CLI collects the findings of a run in a ``FindingsLog`` and prints its document once, at
the end. Both documents come from ``json.dumps``: no spec string can add a field.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from cluster_iac import __version__
from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.source import SourceMap, dotted
from cluster_iac.cli.console import at_key, cites_whole, position

__all__ = ["FORMATS", "SARIF_SCHEMA", "SCHEMA_VERSION", "FindingsLog", "span_end"]

FORMATS = ("text", "json", "sarif")

SCHEMA_VERSION = 1
"""The ``version`` of the JSON document (schemas/findings.schema.json). A field added keeps
it; a field removed, renamed or given another meaning makes it 2."""

SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
"""The ``$id`` of the official SARIF 2.1.0 schema (OASIS, errata 01), vendored in
tests/data/sarif/ where the tests validate every SARIF document against it."""

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

# What each family of codes is about: the SARIF rule's short description.
_FAMILIES = {
    "IO": "the spec file or an output file could not be read or written",
    "YAML": "the spec is not well-formed YAML, or uses YAML the loader refuses",
    "TOO": "the spec is larger than the loader accepts",
    "SPEC": "the spec does not match its schema (keys, types, names, references, limits)",
    "CABLE": "the cable plan cannot be made",
    "CONSISTENCY": "parts of the design contradict each other",
    "COOLING": "the cooling cannot carry the heat of the design",
    "FABRIC": "the network fabric is under-provisioned or miswired",
    "FACILITY": "the facility (rows, racks, space) cannot hold the design",
    "LUSTRE": "the Lustre file system design is invalid or too slow",
    "NCCL": "the NCCL settings do not fit the fabric",
    "POWER": "the power chain (PSUs, PDUs, breakers, feeds) is under-provisioned",
    "SLURM": "the Slurm configuration is invalid for the targeted release",
    "STORAGE": "the storage is too small or too slow for the workload",
}


@dataclass(frozen=True)
class Finding:
    """One diagnostic, located as the text output locates it."""

    diagnostic: Diagnostic
    file: str
    line: int
    column: int
    end: tuple[int, int] | None  # (line, column just past the last character), if known

    def record(self) -> dict[str, object]:
        """The finding as schemas/findings.schema.json's ``finding``."""
        diag = self.diagnostic
        record: dict[str, object] = {
            "code": diag.code, "severity": diag.severity.value, "message": diag.message,
            "file": self.file, "line": self.line, "column": self.column,
            "spec_path": list(diag.path), "spec_path_text": dotted(diag.path),
            "hint": diag.hint,
        }
        if self.end is not None:
            record["end_line"], record["end_column"] = self.end
        if diag.details:
            record["details"] = {str(k): _plain(v) for k, v in sorted(diag.details.items())}
        return record


@dataclass
class FindingsLog:
    """The findings of one command run, in the order the text output prints them."""

    command: str
    spec: str
    findings: list[Finding] = field(default_factory=list)
    outside: bool = False  # an error about a file other than the spec was added

    def add(self, diagnostics: list[Diagnostic], source: SourceMap | None) -> None:
        for diag in diagnostics:
            file, line, column = position(diag, source, self.spec)
            end = None
            if source is not None and diag.line is None and not cites_whole(diag, source):
                end = span_end(source.lines, line, column, _key_of(diag))
            self.findings.append(Finding(diag, file, line, column,
                                         None if end is None else (line, end)))

    def add_outside(self, code: str, file: str, message: str) -> None:
        """An error about a file that is not the spec (an output the OS refused), cited at
        its first line."""
        self.findings.append(Finding(Diagnostic(code, message), file, 1, 1, None))
        self.outside = True

    def document(self, fmt: str, exit_code: int) -> dict[str, object]:
        """The JSON (``fmt`` 'json') or SARIF ('sarif') document of the run."""
        return self.json(exit_code) if fmt == "json" else self.sarif(exit_code)

    def json(self, exit_code: int) -> dict[str, object]:
        counts = {s.value: 0 for s in Severity}
        for finding in self.findings:
            counts[finding.diagnostic.severity.value] += 1
        return {
            "version": SCHEMA_VERSION,
            "tool": {"name": "cluster-iac", "version": __version__},
            "command": self.command, "spec": self.spec, "exit_code": exit_code,
            "counts": counts, "findings": [f.record() for f in self.findings],
        }

    def sarif(self, exit_code: int) -> dict[str, object]:
        codes = list(dict.fromkeys(f.diagnostic.code for f in self.findings))
        index = {code: i for i, code in enumerate(codes)}
        return {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {"name": "cluster-iac", "version": __version__,
                                    "semanticVersion": __version__,
                                    "rules": [self._rule(code) for code in codes]}},
                "columnKind": "unicodeCodePoints",
                # findings are results of a run that went to its end; an output the OS
                # refused (add_outside) is a run that did not
                "invocations": [{"executionSuccessful": not self.outside, "exitCode": exit_code}],
                "results": [_result(f, index[f.diagnostic.code]) for f in self.findings],
            }],
        }

    def _rule(self, code: str) -> dict[str, object]:
        family = _FAMILIES.get(code.split("-", 1)[0], "a cluster-iac finding")
        rule: dict[str, object] = {
            "id": code, "name": _rule_name(code),
            "shortDescription": {"text": f"{code}: {family}"},
        }
        hints = {f.diagnostic.hint for f in self.findings if f.diagnostic.code == code}
        hints.discard(None)
        if len(hints) == 1:
            rule["help"] = {"text": hints.pop()}
        elif hints:
            rule["help"] = {"text": "The fix depends on the finding: each result's message "
                                    "ends with its own hint."}
        return rule


def _result(finding: Finding, rule_index: int) -> dict[str, object]:
    diag = finding.diagnostic
    region: dict[str, int] = {"startLine": finding.line, "startColumn": finding.column}
    if finding.end is not None:
        region["endLine"], region["endColumn"] = finding.end
    location: dict[str, object] = {
        "physicalLocation": {"artifactLocation": artifact(finding.file), "region": region},
    }
    if diag.path:
        location["logicalLocations"] = [{"fullyQualifiedName": dotted(diag.path),
                                         "kind": "member"}]
    text = diag.message if diag.hint is None else f"{diag.message}\nhint: {diag.hint}"
    properties: dict[str, object] = {"specPath": list(diag.path)}
    if diag.hint is not None:
        properties["hint"] = diag.hint
    if diag.details:
        properties["details"] = {str(k): _plain(v) for k, v in sorted(diag.details.items())}
    return {"ruleId": diag.code, "ruleIndex": rule_index, "level": _SARIF_LEVEL[diag.severity],
            "message": {"text": text}, "locations": [location], "properties": properties}


def artifact(file: str) -> dict[str, str]:
    """The SARIF artifactLocation of ``file``: a URI relative to the current folder (the
    repository root in CI, '%SRCROOT%'), or a file: URI where the file lies outside it."""
    path = Path(file)
    cwd = Path.cwd()
    absolute = path if path.is_absolute() else cwd / path
    try:
        relative = Path(os.path.normpath(absolute)).relative_to(cwd)
    except ValueError:
        return {"uri": Path(os.path.normpath(absolute)).as_uri()}
    return {"uri": quote(PurePosixPath(relative).as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


# A plain (unquoted) scalar in a flow collection ends at one of these (YAML 1.2, 7.3.3);
# in block context, at ': ', ' #' or the end of the line.
_FLOW_STOP = re.compile(r"[,\[\]{}]|:(?=\s|$)|\s+#|\s*$")
_BLOCK_STOP = re.compile(r":(?=\s|$)|\s+#|\s*$")
_FLOW_CHARS = re.compile(r"[,\[\]{}]")


def span_end(lines: list[str], line: int, column: int, key: str | None = None) -> int | None:
    """The column just past the scalar (or the mapping ``key``) that starts at ``column`` of
    ``line``, when the text says for certain where it ends; None otherwise: a block or flow
    collection, an anchor, a tag or a block scalar starts there, a quote the line does not
    close, or a plain scalar that may go on (flow syntax on a line that may continue a flow
    collection begun earlier, or a more indented next line)."""
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]):
        return None
    text = lines[line - 1]
    rest = text[column - 1:]
    if key is not None:
        return column + len(key) if _plain_key_at(rest, key) else None
    if rest[0] in "'\"":
        length = _quoted_length(rest)
        if length is None or re.match(r"[ \t]*:", rest[length:]):
            return None  # not closed on the line, or a key (the mapping it opens starts here)
        return column + length
    if rest[0] in "[]{}|>&*!%@`#,?-:" and not re.match(r"[-?:]\S", rest):
        return None
    depth = _flow_depth(text[:column - 1])
    if depth is None:
        return None
    stop = (_FLOW_STOP if depth > 0 else _BLOCK_STOP).search(rest)
    assert stop is not None  # the patterns match at the end of the line at least
    if not stop.start() or stop.group().startswith(":"):
        return None  # a key: the node that starts here is the mapping it opens
    if depth > 0:
        return column + stop.start()
    if _FLOW_CHARS.search(rest.split(" #")[0]) or _continues(lines, line, column):
        return None
    return column + stop.start()


def _continues(lines: list[str], line: int, column: int) -> bool:
    """Whether a plain scalar in block context at ``column`` may go on at the next line with
    content: it does where that line is indented more than the node that holds the scalar
    (the mapping of its key; for a scalar that is a sequence item, the line's own indent)."""
    text = lines[line - 1]
    holder = len(text) - len(text.lstrip(" "))
    items = re.match(r" *(?:-[ ]+)*", text)
    assert items is not None
    if items.end() < column - 1:  # 'key: value' (after any '- '): the key's mapping
        holder = items.end()
    for following in lines[line:]:
        content = following.strip()
        if content and not content.startswith("#"):
            return len(following) - len(following.lstrip(" ")) > holder
    return False


def _plain_key_at(rest: str, key: str) -> bool:
    return rest.startswith(key) and bool(re.match(r"\s*:", rest[len(key):]))


def _quoted_length(rest: str) -> int | None:
    """Length of the quoted scalar at the start of ``rest`` with its quotes, if it closes."""
    quote_char, index = rest[0], 1
    while index < len(rest):
        char = rest[index]
        if quote_char == '"' and char == "\\":
            index += 2
            continue
        if char == quote_char:
            if quote_char == "'" and rest[index + 1:index + 2] == "'":
                index += 2
                continue
            return index + 1
        index += 1
    return None


def _flow_depth(prefix: str) -> int | None:
    """How many flow collections are open at the end of ``prefix`` (the line before the
    scalar), quoted text skipped; None if a collection closes that the line did not open
    (the line continues one begun earlier) or a quote is left open."""
    depth, index = 0, 0
    while index < len(prefix):
        char = prefix[index]
        if char in "'\"":
            length = _quoted_length(prefix[index:])
            if length is None:
                return None
            index += length
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth < 0:
                return None
        index += 1
    return depth


def _key_of(diag: Diagnostic) -> str | None:
    """The mapping key a finding is cited at, when its caret is under a key."""
    if at_key(diag) and diag.path and isinstance(diag.path[-1], str):
        return diag.path[-1]
    return None


def _rule_name(code: str) -> str:
    """'POWER-PDU-OVERLOAD' -> 'PowerPduOverload' (SARIF's rule name, an identifier)."""
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", code) if part)


def _plain(value: object) -> object:
    """A finding's detail as JSON has it: numbers, text, booleans and null as they are; an
    infinite or NaN figure as text (JSON has no such number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
