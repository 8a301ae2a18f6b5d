"""cli/main.py's COMMANDS: each name leads to its command, and the sentence the group's --help
lists without importing it is the command's own, so `cluster-iac --help` reads as click would
list the loaded commands, at any width."""

from __future__ import annotations

import importlib

import click
import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import COMMANDS, LazyGroup, main


def _loaded(name: str) -> click.Command:
    module, _, attribute = COMMANDS[name][0].partition(":")
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command)
    return command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_name_leads_to_its_command_and_its_own_sentence(name: str) -> None:
    command = _loaded(name)
    assert command.name == name
    assert command.get_short_help_str(10**6) == COMMANDS[name][1]
    stand_in = click.Command(name, help=COMMANDS[name][1])
    for width in range(3, 120):
        assert stand_in.get_short_help_str(width) == command.get_short_help_str(width)


def _help(group: click.Group, width: int) -> str:
    ctx = click.Context(group, info_name="cluster-iac", terminal_width=width,
                        max_content_width=width)
    return group.get_help(ctx)


@pytest.mark.parametrize("width", [50, 80, 120, 300])
def test_the_lazy_listing_is_clicks_listing_of_the_loaded_commands(width: int) -> None:
    lazy = LazyGroup("cluster-iac", lazy=COMMANDS, help=main.help, params=main.params)
    loaded = click.Group("cluster-iac", commands=[_loaded(name) for name in COMMANDS],
                         help=main.help, params=main.params)
    assert not lazy.commands
    assert _help(lazy, width) == _help(loaded, width)
    assert not lazy.commands, "listing imported no command"
    assert lazy.list_commands(click.Context(lazy)) == sorted(COMMANDS)


@pytest.mark.parametrize("args", [["rendr"], ["valdate", "x.yaml"], ["nothing"]])
def test_a_mistyped_name_is_told_as_click_tells_it(args: list[str]) -> None:
    """The error and its suggestions (click's, from the loaded commands) as if every command
    were loaded."""
    lazy = LazyGroup("cluster-iac", lazy=COMMANDS, help=main.help, params=main.params)
    loaded = click.Group("cluster-iac", commands=[_loaded(name) for name in COMMANDS],
                         help=main.help, params=main.params)
    told = [CliRunner().invoke(group, args) for group in (lazy, loaded)]
    assert told[0].exit_code == told[1].exit_code == 2
    assert told[0].output == told[1].output
