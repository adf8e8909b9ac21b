"""The `fatpaths` command line's shared parts: how a command runs a stage, and which module
holds each command (each is imported when run: the command list shows their one-line help)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import typer
from typer.core import TyperCommand

from fatpaths_cfg.errors import UserErrors, printed_lines

T = TypeVar("T")

EXIT_USER_ERROR = 2


def command_group(**options: Any) -> typer.Typer:
    """A typer app whose help and usage errors click prints plainly: typer's rich panels import
    rich's console and markdown renderer, which took `fatpaths --help` from 0.1 to 0.2-0.3 s,
    and plain text reads the same in a terminal and in a log."""
    return typer.Typer(rich_markup_mode=None, **options)


class PanelledCommand(TyperCommand):
    """A command whose --help lists its options in sections, one per `rich_help_panel`, in the
    order the options come: typer draws panels only with rich, and help here is plain text."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            shown = param.get_help_record(ctx)
            if shown is None:
                continue
            panel = getattr(param, "rich_help_panel", None)
            if param.param_type_name == "argument":
                name = "Arguments"
            else:
                name = f"{panel} options" if panel else "Options"
            sections.setdefault(name, []).append(shown)
        for name, rows in sections.items():
            with formatter.section(name):
                formatter.write_dl(rows)


def run_or_exit(action: Callable[[], T]) -> T:
    """Run a stage; user errors are printed (up to a cap) and exit 2, without a traceback."""
    try:
        return action()
    except UserErrors as exc:
        for line in printed_lines(exc.errors):
            print(line, file=sys.stderr)
        raise typer.Exit(EXIT_USER_ERROR) from None


def refuse(field: str, message: str, hint: str = "") -> NoReturn:
    """A bad option, printed as every user error is (`error: --flag: message`); exit 2."""
    for line in printed_lines(UserErrors.single("", field, message, hint).errors):
        print(line, file=sys.stderr)
    raise typer.Exit(EXIT_USER_ERROR)


def name_list(text: str | None) -> list[str] | None:
    """`eos,frr` -> ["eos", "frr"]; None stays None (option not given)."""
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


# The module of each command (`fatpaths_cfg.cli.<command>`, contributing it through
# `add_commands(app)`), imported when the command runs (the command line starts in a fraction
# of the time numpy, scipy, the platform registry and the simulator take to import): the
# command name, the module, and the one line the command list shows without importing it.
FEATURE_COMMANDS: dict[str, tuple[str, str]] = {
    "compile": ("fatpaths_cfg.cli.compile", "Compile an inventory into configs and plans."),
    "schema": ("fatpaths_cfg.cli.schema", "Print the inventory JSON Schema."),
    "topo": ("fatpaths_cfg.cli.topo", "Generate and inspect topologies."),
    "plan": ("fatpaths_cfg.cli.plan", "Show what changing a fabric changes."),
    "analyze": ("fatpaths_cfg.cli.analyze", "Measure path diversity and throughput."),
    "simulate": ("fatpaths_cfg.cli.simulate", "Simulate flows on a compiled fabric."),
    "verify": ("fatpaths_cfg.cli.verify", "Prove the configs forward every layer."),
    "deploy": ("fatpaths_cfg.cli.deploy", "Push compiled configs to the switches."),
    "lab": ("fatpaths_cfg.cli.lab", "Run a compiled fabric in network namespaces."),
    "discover": ("fatpaths_cfg.cli.discover", "Write the wiring LLDP reports."),
    "sweep": ("fatpaths_cfg.cli.sweep", "Run a parameter grid on Dask."),
    "tune": ("fatpaths_cfg.cli.tune", "Pick layers within hardware limits."),
}
# The order `fatpaths --help` lists commands in (typer's: plain commands, then groups).
COMMAND_ORDER = (
    "compile",
    "schema",
    "plan",
    "analyze",
    "simulate",
    "verify",
    "deploy",
    "discover",
    "sweep",
    "tune",
    "topo",
    "lab",
)


def feature_command(name: str) -> Any:
    """The click command `name`, importing its module now."""
    module_name, _ = FEATURE_COMMANDS[name]
    app = command_group()
    importlib.import_module(module_name).add_commands(app)
    return typer.main.get_group(app).commands[name]
