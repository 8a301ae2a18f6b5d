"""Readers of the acceptance tools' own output formats (see tests/data/acceptance/README.md
for where each format is published). Each raises ResultError naming the file and line of
what it cannot read; none prints."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any


class ResultError(ValueError):
    """A result file that cannot be read: the message names the file and line."""


_LABEL = re.compile(r"^\s*\d+: ")  # srun --label: 'TASK: ' before every line of a task


def _lines(path: Path) -> list[str]:
    """The file's lines; where every non-blank line carries srun --label's task prefix
    ('0: '), without it."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as error:
        raise ResultError(f"{path}: cannot read: {error.strerror}") from None
    if any(line.strip() for line in lines) and all(
            _LABEL.match(line) for line in lines if line.strip()):
        return [_LABEL.sub("", line, count=1) for line in lines]
    return lines


def _number(path: Path, line_no: int, text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ResultError(f"{path}:{line_no}: {what} {text!r} is not a number") from None


OLD_TABLE_ERROR = 1e-3
"""The largest error an old (12-column) nccl-tests row may show and pass: a float sum's
rounding is around 1e-6; a wrong reduction is of the order of the values (1 or more)."""


def nccl_busbw(path: Path, size_bytes: int) -> tuple[float, int]:
    """(out-of-place busbw GB/s, #wrong) of the all_reduce_perf table row at ``size_bytes``
    (the largest size run when that one is missing). nccl-tests prints one row per size:
    size count type redop root time algbw busbw #wrong time algbw busbw #wrong; releases
    before the root column (2.10) print 12 columns, the 9th an error magnitude ('0e+00'),
    read as wrong when above OLD_TABLE_ERROR. A count in exponent form ('1e+03') is a count."""
    rows: dict[int, tuple[float, int]] = {}
    for line_no, line in enumerate(_lines(path), 1):
        fields = line.split()
        if not fields or not fields[0].isdigit():
            continue  # comments, NCCL INFO lines, the header
        if len(fields) < 12:
            raise ResultError(f"{path}:{line_no}: an all_reduce_perf table row has 13 columns "
                              f"(size count type redop root time algbw busbw #wrong ...) or "
                              f"12 (before the root column), this one {len(fields)}")
        at = 7 if len(fields) >= 13 else 6
        busbw = _number(path, line_no, fields[at], "busbw")
        wrong = _number(path, line_no, fields[at + 1], "#wrong" if at == 7 else "error")
        if at == 6:
            wrong = 1.0 if wrong > OLD_TABLE_ERROR else 0.0
        rows[int(fields[0])] = (busbw, int(wrong))
    if not rows:
        raise ResultError(f"{path}:1: no all_reduce_perf result row (did the run fail?)")
    return rows.get(size_bytes, rows[max(rows)])


_PERFTEST_HEADS = {"ib_write_bw": "BW_average[Gb/sec]", "ib_send_lat": "t_typical[usec]"}
_HEAD_SPACE = re.compile(r"(?<=[\w%]) (?=[A-Za-z_]+\[)")  # 'BW average[' -> 'BW_average['


def _head_names(line: str) -> list[str]:
    return _HEAD_SPACE.sub("_", line).split()


def perftest_row(path: Path, tool: str) -> float:
    """ib_write_bw's BW average in Gb/s (run with --report_gbits) or ib_send_lat's t_typical
    in microseconds: the row under perftest's result header."""
    head = _PERFTEST_HEADS[tool]
    lines = _lines(path)
    for line_no, line in enumerate(lines, 1):
        names = _head_names(line)
        if head not in names:
            continue
        column = names.index(head)
        for row_no, row in enumerate(lines[line_no:], line_no + 1):
            fields = row.split()
            if fields and re.fullmatch(r"\d+", fields[0]):
                # a result row; perftest's 'Conflicting CPU frequency values detected'
                # warning (and any other line) can sit between the header and it
                if len(fields) <= column:
                    raise ResultError(f"{path}:{row_no}: a {tool} result row has "
                                      f"{len(names)} columns, this one {len(fields)}")
                return _number(path, row_no, fields[column], head)
        break
    shown = head.replace("_", " ")
    raise ResultError(f"{path}:{len(lines) or 1}: no {tool} result header '{shown}'"
                      + (" (ib_write_bw needs --report_gbits)" if tool == "ib_write_bw" else ""))


def _json(path: Path) -> Any:
    text = "\n".join(_lines(path))
    start = text.find("{")  # dcgmi prints a line before its JSON on some releases
    if start < 0:
        raise ResultError(f"{path}:1: no JSON object")
    try:  # fio's json+normal: the JSON report, then the normal text one
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except json.JSONDecodeError as error:
        line = text[:start].count("\n") + error.lineno
        raise ResultError(f"{path}:{line}:{error.colno}: not JSON: {error.msg}") from None


def dcgm_failures(path: Path) -> list[str]:
    """'GPU <id> <test>: <warning>' for every failed test result of ``dcgmi diag -j``
    (DCGM 3's "DCGM GPU Diagnostic" and 4's "DCGM Diagnostic" documents)."""
    data = _json(path)
    top = data.get("DCGM GPU Diagnostic") or data.get("DCGM Diagnostic") \
        if isinstance(data, dict) else None
    if not isinstance(top, dict) or not isinstance(top.get("test_categories"), list):
        raise ResultError(f"{path}:1: not a dcgmi diag -j document (no test_categories)")
    try:
        return _dcgm_failed(top["test_categories"])
    except (AttributeError, TypeError):
        raise ResultError(f"{path}:1: a dcgmi diag -j document whose test_categories are not "
                          "lists of tests with results") from None


def _dcgm_failed(categories: list[Any]) -> list[str]:
    out = []
    for category in categories:
        for test in category.get("tests", []):
            for result in test.get("results", []):
                status = str(result.get("status", "")).lower()
                if status not in ("fail", "warn"):
                    continue  # a warning is a failure of acceptance: nothing may warn
                gpu = result.get("gpu_ids", result.get("entity_id", "?"))
                warnings = [w.get("warning", w) if isinstance(w, dict) else w
                            for w in result.get("warnings", [])]
                text = "; ".join(str(w) for w in warnings)
                text = (text or "failed") if status == "fail" else f"warn: {text}".rstrip(": ")
                out.append(f"GPU {gpu} {test.get('name', '?')}: {text}")
    return out


_BURN = re.compile(r"^\s*GPU (\d+): (OK|FAULTY)\b")


_PROGRESS = re.compile(r"proc'd: ([\d\s()/.,Gflops-]+?)\s+errors:")
_INIT_FAILED = re.compile(r"Couldn't init|Failed to|CUDA error|No CUDA devices|"
                          r"cudaErrorNoDevice|out of memory", re.IGNORECASE)


def gpu_burn_faulty(path: Path) -> list[str]:
    """Why gpu_burn's run failed: each GPU its closing summary ('Tested N GPUs:' then 'GPU
    i: OK|FAULTY') calls FAULTY, and a run that said OK having done no work (a GPU that failed
    to initialise, no progress line, or nothing processed)."""
    lines = _lines(path)
    verdicts = [m.groups() for m in map(_BURN.match, lines) if m]
    if not any("Tested" in line for line in lines) or not verdicts:
        raise ResultError(f"{path}:{len(lines) or 1}: no gpu_burn summary ('Tested N GPUs:'):"
                          " the run did not finish")
    out = [f"GPU {gpu} FAULTY" for gpu, verdict in verdicts if verdict == "FAULTY"]
    failed = [(n, line) for n, line in enumerate(lines, 1) if _INIT_FAILED.search(line)]
    out += [f"line {n}: {line.strip()[:80]}" for n, line in failed[:3]]
    done = [re.findall(r"(\d+)\s*\(", m.group(1)) for m in map(_PROGRESS.search, lines) if m]
    if not done or not done[-1]:
        out.append("no work done (no progress line)")
    else:
        out += [f"GPU {gpu} did no work (0 iterations processed)"
                for gpu, count in enumerate(done[-1]) if int(count) == 0]
    return out


def gpu_burn_tested(path: Path) -> int:
    """How many GPUs gpu_burn's summary lists."""
    return sum(1 for m in map(_BURN.match, _lines(path)) if m)


def fio_bandwidth(path: Path, direction: str) -> float:
    """Bytes per second of ``direction`` ('read' | 'write') over the report's jobs (fio
    --output-format=json: jobs[].<direction>.bw_bytes)."""
    data = _json(path)
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, list) or not jobs:
        raise ResultError(f"{path}:1: not a fio JSON report (no jobs)")
    try:  # fio 2.x has no bw_bytes: bw is KiB/s
        return float(sum(job[direction]["bw_bytes"] if "bw_bytes" in job[direction]
                         else job[direction]["bw"] * 1024 for job in jobs))
    except (KeyError, TypeError):
        raise ResultError(f"{path}:1: a fio job has no {direction}.bw_bytes") from None


def ior_mib(path: Path, operation: str) -> float:
    """Mean(MiB) (MiB/s, aggregate over tasks) of ``operation`` ('write' | 'read') in the table
    IOR prints after 'Summary of all tests:'."""
    lines = _lines(path)
    start = next((i for i, line in enumerate(lines) if line.startswith("Summary of all tests")),
                 None)
    if start is None:
        raise ResultError(f"{path}:{len(lines) or 1}: no IOR 'Summary of all tests:' (did the "
                          "run finish?)")
    header = next(((i, line.split()) for i, line in enumerate(lines[start + 1:], start + 1)
                   if line.startswith("Operation")), None)
    if header is None or "Mean(MiB)" not in header[1]:
        raise ResultError(f"{path}:{start + 2}: no IOR summary header with Mean(MiB)")
    column = header[1].index("Mean(MiB)")
    for line_no, line in enumerate(lines[header[0] + 1:], header[0] + 2):
        fields = line.split()
        if fields and fields[0] == operation:
            if len(fields) <= column:
                raise ResultError(f"{path}:{line_no}: an IOR summary row has "
                                  f"{len(header[1])} columns, this one {len(fields)}")
            return _number(path, line_no, fields[column], "Mean(MiB)")
    raise MissingOperation(f"{path}:{header[0] + 1}: no {operation} row in the IOR summary")


class MissingOperation(ResultError):
    """An IOR summary without the operation asked for (a run that only writes)."""


def power_readings(path: Path) -> list[tuple[int, tuple[str, str, str], float]]:
    """(line number, (pdu, circuit, line), amps) of each reading of power-readings.csv
    (header rack,pdu,circuit,line,amps)."""
    out = []
    with path.open(newline="", errors="replace") as f:
        reader = csv.DictReader(f)
        wanted = {"pdu", "circuit", "line", "amps"}
        if not wanted <= set(reader.fieldnames or ()):
            raise ResultError(f"{path}:1: the header needs columns rack,pdu,circuit,line,amps")
        for row in reader:
            line_no = reader.line_num
            amps = _number(path, line_no, row["amps"] or "", "amps")
            out.append((line_no, (row["pdu"], row["circuit"], row["line"]), amps))
    return out
