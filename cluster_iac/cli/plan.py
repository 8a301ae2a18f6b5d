"""`cluster-iac plan` and `cluster-iac report`: the expanded plan, and the report, of a spec.

Each command imports what only it uses when it runs: the plan's YAML and JSON writers
(plan/dump.py, formats/yaml.py) for plan, the report's emitter for report; so the other
commands start without them, and plan, like validate, loads no emitter
(tests/test_startup.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cluster_iac.cli.common import SPEC, STRICT, build_or_exit, echo_or_write, json_text
from cluster_iac.render import PipelineError

if TYPE_CHECKING:
    from cluster_iac.plan import Plan


@click.command("plan")
@SPEC
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Output format.")
@click.option("-o", "--output", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (atomically) instead of standard output.")
@click.option("--counts", "counts_only", is_flag=True, help="Only the counts.")
@STRICT
def plan_command(spec: Path, fmt: str, out_file: Path | None, counts_only: bool,
                 strict: bool) -> None:
    """Print the expanded plan of SPEC: counts, fabrics, NVLink domains, nodes, switches.
    A design the checks reject is printed all the same, beside its errors (exit 1)."""
    def show(plan: Plan) -> None:
        # on demand: see the module docstring
        from cluster_iac.formats.yaml import ruamel_yaml_text
        from cluster_iac.plan import dump

        if counts_only:
            data = dump.counts(plan)
            text = json_text(data) if fmt == "json" else ruamel_yaml_text(data)
        else:
            text = dump.to_json(plan) if fmt == "json" else dump.to_yaml(plan)
        echo_or_write(text, out_file)

    def built_so_far(exc: PipelineError) -> None:
        if exc.plan is not None:
            show(exc.plan)

    show(build_or_exit(spec, strict=strict, emit=False, on_error=built_so_far).plan)


@click.command()
@SPEC
@STRICT
def report(spec: Path, strict: bool) -> None:
    """Print SPEC's report.md: counts, BOM, power, cooling, predicted busbw, findings."""
    # on demand: see the module docstring
    from cluster_iac.emit.report import markdown as render_report

    result = build_or_exit(spec, strict=strict, emit=False)
    click.echo(render_report(result.plan), nl=False)
