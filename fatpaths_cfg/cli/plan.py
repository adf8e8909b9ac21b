"""The `fatpaths plan` command: option parsing only; the stage is `plan.run.make_plan`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fatpaths_cfg.cli.common import run_or_exit

if TYPE_CHECKING:
    from fatpaths_cfg.compiled import CompiledFabric
    from fatpaths_cfg.plan.keep import EarlierCompile

EXIT_NEW_FAILS = 1
FORMATS = ("table", "markdown", "json", "junit")


def plan_command(
    old: Path = typer.Argument(..., help="The running fabric's compiled output directory."),
    new: Path = typer.Argument(
        ..., help="The compiled output to go to, or an inventory (compiled in memory)."
    ),
    output_format: str = typer.Option(
        "table",
        "--format",
        help="table (terminal; one line per result when piped), markdown (a pull-request "
        "comment), json (schema fatpaths.plan/1) or junit.",
    ),
    keep_layers: bool = typer.Option(
        False,
        "--keep-layers",
        help="NEW an inventory: compile it as `compile --keep-layers OLD` would.",
    ),
    check: bool = typer.Option(
        True, "--check/--no-check", help="Run the forwarding checker on NEW (exit 1 if it fails)."
    ),
) -> None:
    """Show what changing a fabric changes.

    Routes, interfaces, cables and layers, per switch and per layer, and whether NEW forwards
    every layer. Exit 0; 1 when NEW fails the forwarding check; 2 on bad input."""
    from fatpaths_cfg.plan.report import plan_json, plan_junit, plan_markdown, plan_text
    from fatpaths_cfg.plan.run import make_plan
    from fatpaths_cfg.support.output import dumps_json

    run_or_exit(lambda: _check_inputs(old, new, output_format, keep_layers))
    from fatpaths_cfg import api

    def compile_new(inventory: Path, earlier: EarlierCompile | None) -> CompiledFabric:
        return api.compile_fabric(inventory, keep_layers=earlier)

    def write_new(compiled: CompiledFabric, inventory: Path, target: Path) -> object:
        return api.write_output(compiled, inventory, target)

    plan = run_or_exit(
        lambda: make_plan(
            old, new, keep_layers, check, compile_new=compile_new, write_new=write_new
        )
    )
    if output_format == "json":
        text = dumps_json(plan_json(plan))
    elif output_format == "markdown":
        text = plan_markdown(plan)
    elif output_format == "junit":
        text = plan_junit(plan)
    else:
        text = plan_text(plan)
    sys.stdout.write(text)
    if not plan.ok:
        raise typer.Exit(EXIT_NEW_FAILS)


def _check_inputs(old: Path, new: Path, output_format: str, keep_layers: bool) -> None:
    from fatpaths_cfg.errors import UserErrors

    if output_format not in FORMATS:
        raise UserErrors.single(
            "--format", "", f"unknown format {output_format!r}", f"one of {', '.join(FORMATS)}"
        )
    if not old.is_dir():
        raise UserErrors.single(
            str(old), "OLD", "not a directory", "OLD is a compiled output directory"
        )
    if not new.exists():
        raise UserErrors.single(str(new), "NEW", "no such file or directory")
    if keep_layers and new.is_dir():
        raise UserErrors.single(
            "--keep-layers",
            "",
            "NEW is already compiled",
            "give NEW as an inventory, or compile it with --keep-layers OLD",
        )


def add_commands(app: typer.Typer) -> None:
    app.command("plan")(plan_command)
