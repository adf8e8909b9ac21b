"""`fatpaths compile INVENTORY`: layers, forwarding tables, configs and host plans (the stages:
api.compile_fabric and api.write_output)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fatpaths_cfg.cli.common import name_list, run_or_exit
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.support.console import make_console, make_progress

err_console = make_console(stderr=True)
console = make_console()


def default_output(inventory: Path, fabric_name: str | None = None) -> Path:
    return Path("out") / (fabric_name or inventory.stem)


OPT_INVENTORY = typer.Argument(..., help="Inventory YAML (wiring or generator spec).")
OPT_OUT = typer.Option(None, "-o", "--out", help="Output directory (default: out/<fabric name>).")
OPT_SEED = typer.Option(None, "--seed", min=0, max=2**63 - 1, help="Override routing.seed.")
OPT_MAX_SWITCHES = typer.Option(
    None,
    "--max-switches",
    min=1,
    help="Refuse a larger fabric (default: what half the available memory can compile, "
    "estimated from the switches, links, hosts and layers).",
)
OPT_PLATFORM = typer.Option(
    None,
    "--platform",
    help=f"Render these platforms for every switch, e.g. eos,frr ({', '.join(PLATFORMS)}; "
    "default: each switch's platform from the inventory).",
)
OPT_LIMIT = typer.Option(
    None,
    "--limit",
    help="Render configs and host plans of these switches only, e.g. sw1,sw2; "
    "the other files of an earlier output are kept.",
)
OPT_FORCE = typer.Option(
    False,
    "--force",
    help="Replace the output directory even if it is not an earlier fatpaths output "
    "or holds files fatpaths did not write.",
)
OPT_BATFISH = typer.Option(
    False,
    "--batfish",
    help="Also write the Batfish snapshot (OUT/batfish/) that verify --batfish reads.",
)
OPT_JOBS = typer.Option(
    None,
    "-j",
    "--jobs",
    min=1,
    help="Processes that render and write the output (default: one per CPU); any number "
    "gives the same files.",
)
OPT_KEEP_LAYERS = typer.Option(
    None,
    "--keep-layers",
    metavar="OLD_OUT",
    help="Carry the sparse layers of an earlier output over: removed cables leave them, "
    "new cables join by their name's draw, a layer is repaired only where it no longer "
    "connects. Keeps a change small for every layer algorithm.",
)


def compile_command(
    inventory: Path = OPT_INVENTORY,
    out: Path | None = OPT_OUT,
    seed: int | None = OPT_SEED,
    platform: str | None = OPT_PLATFORM,
    limit: str | None = OPT_LIMIT,
    force: bool = OPT_FORCE,
    batfish: bool = OPT_BATFISH,
    jobs: int | None = OPT_JOBS,
    keep_layers: Path | None = OPT_KEEP_LAYERS,
    max_switches: int | None = OPT_MAX_SWITCHES,
) -> None:
    """Compile an inventory into layers, forwarding tables, configs and host plans."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from fatpaths_cfg import api
    from fatpaths_cfg.support.memory import settle_long_lived

    platforms, switches = name_list(platform), name_list(limit)
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with make_progress(*columns, console=console) as bar:
        task = bar.add_task("compiling", total=None)

        def progress(stage: str) -> None:
            bar.update(task, description=f"compiling: {stage}")

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        earlier = None
        if keep_layers is not None:
            from fatpaths_cfg.plan.keep import read_earlier

            earlier = run_or_exit(lambda: read_earlier(keep_layers))
        compiled = run_or_exit(
            lambda: api.compile_fabric(inventory, seed, progress, earlier, max_switches)
        )
        settle_long_lived()
        for warning in compiled.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        target = out or default_output(inventory, compiled.name)
        summary = run_or_exit(
            lambda: api.write_output(
                compiled,
                inventory,
                target,
                force,
                progress,
                platforms,
                switches,
                tick,
                batfish,
                jobs,
            )
        )
    # No markup: the target path may hold brackets that rich would take for style tags.
    console.print(
        f"compiled {compiled.name}: {compiled.fabric.nr} switches, "
        f"{len(compiled.fabric.hosts)} hosts, {len(compiled.layers)} layers -> "
        f"{target} ({summary.files_written} files written, {summary.files_unchanged} unchanged)",
        markup=False,
    )


def add_commands(app: typer.Typer) -> None:
    app.command("compile", short_help="Compile an inventory into configs and plans.")(
        compile_command
    )
