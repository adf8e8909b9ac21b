"""The `fatpaths` command: a thin shell over the stages (`fatpaths_cfg.api` and each
package's plain functions).

One module per command (`fatpaths_cfg.cli.<command>`), each contributing it through an
`add_commands(app)` function, so that the command line stays one flat, discoverable tree; this
module holds the root group, which imports a command's module only when the command runs.
"""

from __future__ import annotations

import gc
import os
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from fatpaths_cfg import __version__
from fatpaths_cfg.cli.common import COMMAND_ORDER, FEATURE_COMMANDS, command_group, feature_command
from fatpaths_cfg.cli.values import convert_plainly
from fatpaths_cfg.support.memory import settle_long_lived

# The click objects are typed Any here: typer has shipped click both vendored and as a
# dependency, and this code only needs their parameters and subcommands.


def _usage_pieces(shown: str) -> Any:
    def pieces(ctx: Any) -> list[str]:
        return [shown]

    return pieces


def _untype_switches(params: list[Any]) -> list[Any]:
    """Show switches (`--dry-run`, `--help`) by name alone: typer labels every boolean option
    `<bool>`, which reads as if the switch took a value. Arguments read as the tools people
    know write them, `OUT`, not `{out}`."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_bool_flag and param.metavar is None:
            param.metavar = ""
        elif isinstance(param, TyperArgument) and param.metavar is None and param.name:
            param.metavar = param.name.upper()
            # typer's usage line writes a required argument as {name}: plain OUT, and an
            # optional one as [OUT], as click and the tools people know write them.
            shown = param.metavar if param.required else f"[{param.metavar}]"
            shown += "..." if param.nargs != 1 else ""
            param.get_usage_pieces = _usage_pieces(shown)  # type: ignore[method-assign]
    return params


def _prepare_tree(command: Any, ctx: Any) -> None:
    """Untype the switches of `command` and the commands below it, and convert their plain
    option values without pydantic (see cli/values.py)."""
    params = command.get_params(ctx)
    _untype_switches(params)
    convert_plainly(params)
    for sub in getattr(command, "commands", {}).values():
        _prepare_tree(sub, ctx)


class FatpathsGroup(TyperGroup):
    """The root command; it and every command below it show their switches untyped and
    convert plain option values without pydantic.

    Commands are imported only when run (or asked for their own help): the command list shows
    their one-line help from `commands.FEATURE_COMMANDS`.
    """

    listing = False

    def get_params(self, ctx: Any) -> Any:
        params = super().get_params(ctx)
        convert_plainly(params)
        return _untype_switches(params)

    def list_commands(self, ctx: Any) -> list[str]:
        names = [*super().list_commands(ctx), *FEATURE_COMMANDS]
        rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
        return sorted(dict.fromkeys(names), key=lambda name: rank.get(name, len(rank)))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in FEATURE_COMMANDS:
            if self.listing:
                return TyperCommand(cmd_name, short_help=FEATURE_COMMANDS[cmd_name][1])
            command = self.commands[cmd_name] = feature_command(cmd_name)
            if not gc.isenabled():
                # main() turned the cyclic collector off for start-up: what the imports made
                # lives as long as the process, so frozen, the collector's passes skip it.
                settle_long_lived()
                gc.enable()
        if command is not None:
            _prepare_tree(command, ctx)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fatpaths {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = command_group(
        name="fatpaths",
        cls=FatpathsGroup,
        help="Compile FatPaths layered routing for low-diameter Ethernet fabrics.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """FatPaths layered routing compiler."""

    return app


# numpy's OpenBLAS starts a thread per core on import; fatpaths' matrix products are sparse or
# small, so the pool never pays for its start (half the CPU of a small simulation). A user's
# own setting wins.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def main() -> None:
    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)
    # Start-up makes a few hundred thousand objects (modules, classes, functions) and the
    # collector's passes over them find nothing: it is off until the command is imported.
    gc.disable()
    try:
        build_app()()
    finally:
        gc.enable()
