"""The compiler's own commands: compile, schema and topo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from fatpaths_cfg.commands import EXIT_USER_ERROR, _name_list, command_group, run_or_exit
from fatpaths_cfg.console import make_console, make_progress, make_table
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS

err_console = make_console(stderr=True)
console = make_console()


def default_output(inventory: Path, fabric_name: str | None = None) -> Path:
    return Path("out") / (fabric_name or inventory.stem)


def compile_command(
    inventory: Path = typer.Argument(..., help="Inventory YAML (wiring or generator spec)."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Output directory (default: out/<fabric name>)."
    ),
    seed: int | None = typer.Option(
        None, "--seed", min=0, max=2**63 - 1, help="Override routing.seed."
    ),
    platform: str | None = typer.Option(
        None,
        "--platform",
        help=f"Render these platforms for every switch, e.g. eos,frr ({', '.join(PLATFORMS)}; "
        "default: each switch's platform from the inventory).",
    ),
    limit: str | None = typer.Option(
        None,
        "--limit",
        help="Render configs and host plans of these switches only, e.g. sw1,sw2; "
        "the other files of an earlier output are kept.",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace the output directory even if it is not an earlier fatpaths output "
        "or holds files fatpaths did not write.",
    ),
    batfish: bool = typer.Option(
        False,
        "--batfish",
        help="Also write the Batfish snapshot (OUT/batfish/) that verify --batfish reads.",
    ),
    jobs: int | None = typer.Option(
        None,
        "-j",
        "--jobs",
        min=1,
        help="Processes that render and write the output (default: one per CPU); any number "
        "gives the same files.",
    ),
    keep_layers: Path | None = typer.Option(
        None,
        "--keep-layers",
        metavar="OLD_OUT",
        help="Carry the sparse layers of an earlier output over: removed cables leave them, "
        "new cables join by their name's draw, a layer is repaired only where it no longer "
        "connects. Keeps a change small for every layer algorithm.",
    ),
    max_switches: int | None = typer.Option(
        None,
        "--max-switches",
        min=1,
        help="Refuse a larger fabric (default: what half the available memory can compile, "
        "estimated from the switches, links, hosts and layers).",
    ),
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
    from fatpaths_cfg.memory import settle_long_lived

    platforms, switches = _name_list(platform), _name_list(limit)
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


def topo_generate(
    kind: str = typer.Argument(..., help="Topology kind (see `fatpaths topo kinds`)."),
    param: list[str] = typer.Option(
        [], "-p", "--param", help="NAME=VALUE, repeatable (e.g. -p q=5)."
    ),
    out: Path = typer.Option(..., "-o", "--out", help="Inventory YAML to write."),
    name: str | None = typer.Option(None, "--name", help="Fabric name (default: KIND-PARAMS)."),
    seed: int = typer.Option(
        1, "--seed", min=0, max=2**63 - 1, help="Wiring seed for random topologies."
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite OUT even if fatpaths did not write it."
    ),
) -> None:
    """Write a wiring inventory for a generated topology."""
    import yaml

    from fatpaths_cfg.block_yaml import dump_block_yaml
    from fatpaths_cfg.inventory.expand import planes_wiring, run_plane_generators
    from fatpaths_cfg.output import write_owned_file

    params: dict[str, Any] = {}
    for item in param:
        key, sep, value = item.partition("=")
        if not sep:
            err_console.print(f"error: --param {item!r}: expected NAME=VALUE")
            raise typer.Exit(EXIT_USER_ERROR)
        try:
            params[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            # `q=!!python/none`, `q=[1`: a value must be a plain number, word or list.
            err_console.print(f"error: --param {item!r}: {value!r} is not a plain YAML value")
            raise typer.Exit(EXIT_USER_ERROR) from None
    params["seed"] = seed
    # `--param planes=N` (and heterogeneous=true) writes parallel planes.
    planes = run_or_exit(
        lambda: run_plane_generators(kind, params, "<command line>", lambda _: 0, "--param")
    )
    fabric_name = name or "-".join([kind, *(f"{k}{v}" for k, v in params.items() if k != "seed")])
    data = {
        "fabric": fabric_name,
        "defaults": {"platform": DEFAULT_PLATFORM, "link_speed": "100G"},
        **planes_wiring(planes),
    }
    header = f"{GENERATED_INVENTORY} {kind} {' '.join(param)} --seed {seed}\n"
    text = header + dump_block_yaml(data)
    run_or_exit(lambda: write_owned_file(out, text, GENERATED_INVENTORY, force))
    console.print(
        f"wrote {out}: {sum(len(t.switch_names) for t in planes)} switches, "
        f"{sum(len(t.edges) for t in planes)} links, {sum(planes[0].hosts_per_switch)} hosts"
    )


# First line of a generated inventory: what made it, and what lets a rerun overwrite it.
GENERATED_INVENTORY = "# Written by fatpaths topo generate:"


def topo_show(
    inventory: Path = typer.Argument(..., help="Inventory YAML."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Print Nr, N, k', p, diameter, mean path length and link count of an inventory."""
    from fatpaths_cfg.fabric import load_fabric
    from fatpaths_cfg.memory import collector_paused, settle_long_lived
    from fatpaths_cfg.topology_stats import topology_stats

    # Off across both stages and back only once what they made is frozen: the collector's
    # first pass after each stage would walk every object it made (15 ms each on a q=19).
    with collector_paused():
        _, fabric = run_or_exit(lambda: load_fabric(inventory))
        settle_long_lived()
    stats = topology_stats(fabric)
    if json_out:
        import json

        console.print_json(json.dumps(stats))
        return
    table = make_table(fabric.name)
    table.add_column("figure")
    table.add_column("value", justify="right")
    planes = stats.pop("planes", {})
    for key, value in stats.items():
        table.add_row(key, str(value))
    console.print(table)
    if planes:
        console.print(plane_table(fabric.name, planes))


def plane_table(name: str, planes: dict[str, Any]) -> Any:
    """Host-pair hop counts per plane and for the best plane, one row each."""
    table = make_table(f"{name}: host pairs by switch hops, per plane")
    table.add_column("plane")
    table.add_column("hops: host pairs")
    table.add_column("mean", justify="right")
    table.add_column("max", justify="right")
    for plane, figures in planes.items():
        histogram = figures["host pairs by switch hops"]
        table.add_row(
            plane,
            "  ".join(f"{k}: {v}" for k, v in histogram.items()),
            str(figures["mean"]),
            str(figures["max"]),
        )
    return table


def topo_kinds() -> None:
    """List topology kinds and their parameters."""
    from fatpaths_cfg.topologies import KINDS

    table = make_table("topology kinds")
    table.add_column("kind")
    table.add_column("parameters")
    for kind, specs in KINDS.items():
        table.add_row(
            kind, ", ".join(f"{s.name}{'' if s.required else f'={s.default}'}" for s in specs)
        )
    console.print(table)


def schema_command(
    out: Path | None = typer.Option(None, "-o", "--out", help="Write to FILE, not stdout."),
    force: bool = typer.Option(
        False, "--force", help="Overwrite FILE even if fatpaths did not write it."
    ),
) -> None:
    """Print the inventory JSON Schema (for editor completion and validation)."""
    from fatpaths_cfg.inventory.json_schema import SCHEMA_TITLE, inventory_json_schema_text
    from fatpaths_cfg.output import write_owned_file

    text = inventory_json_schema_text()
    if out is None:
        sys.stdout.write(text)
    else:
        signature = f'"title": "{SCHEMA_TITLE}"'
        run_or_exit(lambda: write_owned_file(out, text, signature, force))


def add_commands(app: typer.Typer) -> None:
    app.command("compile", short_help="Compile an inventory into configs and plans.")(
        compile_command
    )
    app.command("schema", short_help="Print the inventory JSON Schema.")(schema_command)
    topo = command_group(help="Generate and inspect topologies.", no_args_is_help=True)
    topo.command("generate", short_help="Write a wiring inventory of a topology.")(topo_generate)
    topo.command("show", short_help="Print the figures of a topology.")(topo_show)
    topo.command("kinds", short_help="List topology kinds and their parameters.")(topo_kinds)
    from fatpaths_cfg.cost.commands import topo_cost, topo_match

    topo.command("cost", short_help="Price a fabric's switches and cables.")(topo_cost)
    topo.command("match", short_help="List configurations of each kind for N hosts.")(topo_match)
    app.add_typer(topo, name="topo")
