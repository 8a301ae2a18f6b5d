"""Invalid-spec corpus: each case through the CLI in a process of its own, measured.

    python tests/benchmarks/corpus_measure.py            # every case under tests/data/invalid
    python tests/benchmarks/corpus_measure.py --json     # one JSON object per case as well

Each case runs `cluster-iac render CASE -o DIR` in a forked child (the parent has imported the
package, so a child's time is the run without start-up, and its peak RSS what a real run's is):
exit status, whether a traceback came out, whether the output is one located diagnostic per
error (file:line:col: error[CODE]), whether anything was written, the wall and CPU time and the
child's peak RSS (wait4); on a loaded machine the CPU time is the figure to read. The summary
prints the counts and the maxima. Not a test: figures are reported, never asserted;
tests/test_spec_invalid.py asserts each case's codes and lines.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LOCATED = re.compile(r"^\S.*?:\d+:\d+: error\[[A-Z][A-Z0-9]*(-[A-Z0-9]+)+\] ", re.M)


def run_case(case: Path, out: Path) -> dict[str, object]:
    """The CLI on ``case`` in a forked child; its result as the child reported it, with the
    child's wall time and peak RSS."""
    read, write = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: run the CLI as `python -m cluster_iac` would, report, exit at once
        os.close(read)
        from cluster_iac.cli.main import main

        text = io.StringIO()
        code = 0
        try:
            with redirect_stdout(text), redirect_stderr(text):
                main.main(["render", str(case), "-o", str(out)], standalone_mode=False)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - what escaped is the finding
            text.write(f"Traceback (most recent call last):\n{type(exc).__name__}: {exc}\n")
            code = 99
        os.write(write, json.dumps({"code": code, "output": text.getvalue()}).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    _, _, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    result = json.loads(b"".join(chunks) or b'{"code": -1, "output": ""}')
    output = str(result["output"])
    return {
        "case": str(case.relative_to(ROOT)),
        "exit": result["code"],
        "traceback": "Traceback" in output,
        "located": bool(LOCATED.search(output)),
        "written": out.exists(),
        "seconds": round(seconds, 3),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print each case as JSON")
    args = parser.parse_args()
    # imported once, before the children fork: a child's time is the run, not the imports
    import cluster_iac.cli.main  # noqa: F401
    import cluster_iac.render  # noqa: F401

    cases = sorted((ROOT / "tests" / "data" / "invalid").rglob("*.yaml"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, case in enumerate(cases):
            row = run_case(case, Path(tmp) / f"out{index}")
            rows.append(row)
            if args.json:
                print(json.dumps(row))
    bad = [r for r in rows if r["traceback"] or not r["located"] or r["written"]
           or r["exit"] != 1]
    slowest = max(rows, key=lambda r: float(r["seconds"]))  # type: ignore[arg-type]
    busiest = max(rows, key=lambda r: float(r["cpu_seconds"]))  # type: ignore[arg-type]
    largest = max(rows, key=lambda r: float(r["rss_mb"]))  # type: ignore[arg-type]
    print(f"cases: {len(rows)}")
    print(f"tracebacks: {sum(bool(r['traceback']) for r in rows)}")
    print(f"not a located error with exit 1, or something written: {len(bad)}")
    for row in bad:
        print(f"  {row}")
    print(f"over 2 s: {sum(float(r['seconds']) > 2 for r in rows)} wall, "  # type: ignore[arg-type]
          f"{sum(float(r['cpu_seconds']) > 2 for r in rows)} CPU; "  # type: ignore[arg-type]
          f"over 200 MB: {sum(float(r['rss_mb']) > 200 for r in rows)}")  # type: ignore[arg-type]
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"max time: {slowest['seconds']} s ({slowest['case']})")
    print(f"max CPU time: {busiest['cpu_seconds']} s ({busiest['case']})")
    print(f"max RSS: {largest['rss_mb']} MB ({largest['case']})")


if __name__ == "__main__":
    main()
