"""The program: the ``main`` command group, each command added from the module that holds it,
and ``run``, the entry point (pyproject.toml's cluster-iac script, python -m cluster_iac)."""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn

import click

from cluster_iac import __version__
from cluster_iac.cli.acceptance import acceptance
from cluster_iac.cli.changes import changes
from cluster_iac.cli.common import keep_builds
from cluster_iac.cli.fabric import fabric
from cluster_iac.cli.guide import catalog, explain, init, schema
from cluster_iac.cli.labels import labels
from cluster_iac.cli.macs import macs
from cluster_iac.cli.plan import plan_command, report
from cluster_iac.cli.reconcile import reconcile_command
from cluster_iac.cli.render import render, validate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cluster-iac")
def main() -> None:
    """Compile a GPU-cluster spec into Slurm, NCCL, Lustre, Ansible, facility and cabling files."""


for command in (validate, render, changes, plan_command, report, init, explain, schema, catalog,
                fabric, acceptance, reconcile_command, macs):
    main.add_command(command)
main.add_command(labels)


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
