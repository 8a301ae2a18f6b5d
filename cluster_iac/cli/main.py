"""The program: the ``main`` command group, and ``run``, the entry point (pyproject.toml's
cluster-iac script, python -m cluster_iac).

Each command is imported from its module only when it runs (``COMMANDS``, ``LazyGroup``):
every command pays for this module's import, and the command modules bring the spec models,
the compile passes and the checks (cluster_iac.render, a third of a second of CPU) that
`cluster-iac --help`, a command's --help and a render over a folder already current
(write/recall.py) do not need. This cuts a dependency, it hides no circle: no module below
the CLI imports this one (tests/test_house.py), and tests/test_startup.py asserts what the
import and those commands load. To add a command, add its line to ``COMMANDS``.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Mapping
from typing import NoReturn

import click

from cluster_iac import __version__
from cluster_iac.cli.common import keep_builds

COMMANDS: Mapping[str, tuple[str, str]] = {
    # name: ("module:attribute" of the command, the first sentence of its help, which
    # `cluster-iac --help` lists without importing the module; tests/test_cli.py holds the
    # two texts equal)
    "acceptance": ("cluster_iac.cli.acceptance:acceptance",
                   "The acceptance and burn-in jobs (RENDERED/acceptance): check their "
                   "results."),
    "catalog": ("cluster_iac.cli.guide:catalog",
                "List the built-in catalog: KIND (platforms, gpus, nics, switches...), entries "
                "whose key, name or figures contain FILTER, each with its key figures and "
                "source."),
    "changes": ("cluster_iac.cli.changes:changes",
                "What the change from the rendered state to SPEC does to the running cluster: "
                "objects added, changed and removed, the cables to lay and pull, and what to "
                "run, per Slurm release."),
    "explain": ("cluster_iac.cli.guide:explain",
                "What a finding CODE means, its formula and sources, and how to fix it; "
                "without CODE, every code."),
    "fabric": ("cluster_iac.cli.fabric:fabric",
               "The fabrics on site: check a discovery (ibnetdiscover, LLDP) against the "
               "plan."),
    "init": ("cluster_iac.cli.guide:init",
             "Write a starting spec that validates, from a GPU platform, a node count, the "
             "fabric and the racks' power; nodes per rack are the most the checks accept."),
    "labels": ("cluster_iac.cli.labels:labels",
               "Print the labels of TREE's cables (a folder `cluster-iac render` wrote) as CSV: "
               "cable_id,end,label, two lines a cable (its A end's label, then its B end's), in "
               "the order of cabling/cables.csv, e.g."),
    "macs": ("cluster_iac.cli.macs:macs",
             "MAC addresses, facts from the vendor's manifests: checked, then kept in the "
             "lock."),
    "plan": ("cluster_iac.cli.plan:plan_command",
             "Print the expanded plan of SPEC: counts, fabrics, NVLink domains, nodes, "
             "switches."),
    "reconcile": ("cluster_iac.cli.reconcile:reconcile_command",
                  "Compare DISCOVERY files (any mix of `ibnetdiscover`, `slurmd -C`, "
                  "`nvidia-smi -q -x`, `nvidia-smi topo -m`, `lspci -tv`, Redfish "
                  "Systems/Power/EthernetInterface JSON, `lldpcli show neighbors -f json` (or "
                  "EOS's `show lldp neighbors detail | json`) and PDU outlet readings, each "
                  "told by its content; a per-host or per-device file named HOST.<anything>; "
                  "a folder stands for the files in it) with SPEC's plan: print every "
                  "difference by object and place with what to do, and every file that cannot "
                  "be read with its line; exit 1 on any, 0 when the delivered cluster is as "
                  "planned."),
    "render": ("cluster_iac.cli.render:render",
               "Render every output file of SPEC into the folder given by -o/--output, and "
               "write SPEC's lock beside SPEC (the identities allocated: README, 'The lock "
               "file')."),
    "report": ("cluster_iac.cli.plan:report",
               "Print SPEC's report.md: counts, BOM, power, cooling, predicted busbw, "
               "findings."),
    "schema": ("cluster_iac.cli.guide:schema", "Print the JSON Schema of the spec."),
    "validate": ("cluster_iac.cli.render:validate",
                 "Check SPEC, its lock and its design; exit 1 on any error."),
}


class LazyGroup(click.Group):
    """A command group whose commands (``lazy``: name -> ("module:attribute", first sentence
    of its help)) are imported the first time one is asked for by name; the group's --help
    lists them from their sentences, as click lists loaded commands, importing none."""

    def __init__(self, *args: object, lazy: Mapping[str, tuple[str, str]],
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attribute = self.lazy[cmd_name][0].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with every command loaded first where the name is none of them: click's
        error then suggests the nearest names, which it takes from the loaded commands."""
        if args and args[0] not in self.commands and args[0] not in self.lazy:
            for name in self.lazy:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing, of a group of stand-ins: a command not loaded yet stands as
        one whose help is its sentence (all click's listing reads of a help)."""
        listed = click.Group(commands=[
            self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
            for name in self.list_commands(ctx)])
        listed.format_commands(ctx, formatter)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cluster-iac")
def main() -> None:
    """Compile a GPU-cluster spec into Slurm, NCCL, Lustre, Ansible, facility and cabling files."""


def run() -> NoReturn:
    """The program: ``main`` without the interpreter's slow parts a one-shot run does not need.

    The cyclic garbage collector is off (the pipeline builds large, long-lived tables and
    makes little cyclic garbage; collecting would walk millions of objects again and again),
    and once the output is written and flushed the process ends at once instead of freeing
    every object one by one. pydantic does not look for plugins (unless the environment says
    otherwise): it would read the entry points of every installed distribution when the first
    spec model is made, for plugins that instrument models, which ours are not meant to be.
    Tests call ``main`` in-process and keep the usual behaviour.
    """
    gc.disable()
    keep_builds()
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        main()
        code: int = 0
    except SystemExit as exc:  # click ends every command so, even on success
        if isinstance(exc.code, str):
            click.echo(exc.code, err=True)
        code = 1 if isinstance(exc.code, str) else int(exc.code or 0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a closed pipe (cluster-iac report | head): nothing more to say
            code = code or 1
    os._exit(code)
