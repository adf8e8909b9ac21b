"""`fatpaths topo`: generate, show and list topologies; price them (`topo cost`, `topo match`:
cli.cost)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fatpaths_cfg.cli.common import command_group, run_or_exit
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.platforms import DEFAULT_PLATFORM
from fatpaths_cfg.support.console import make_console, make_table

err_console = make_console(stderr=True)
console = make_console()


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
    from fatpaths_cfg.inventory.expand import GENERATED_INVENTORY, generated_inventory
    from fatpaths_cfg.support.output import write_owned_file

    params = run_or_exit(lambda: generator_params(param))
    params["seed"] = seed
    made_by = f"{kind} {' '.join(param)} --seed {seed}"
    text, planes = run_or_exit(
        lambda: generated_inventory(kind, params, name, DEFAULT_PLATFORM, made_by)
    )
    run_or_exit(lambda: write_owned_file(out, text, GENERATED_INVENTORY, force))
    console.print(
        f"wrote {out}: {sum(len(t.switch_names) for t in planes)} switches, "
        f"{sum(len(t.edges) for t in planes)} links, {sum(planes[0].hosts_per_switch)} hosts"
    )


def topo_show(
    inventory: Path = typer.Argument(..., help="Inventory YAML."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Print Nr, N, k', p, diameter, mean path length and link count of an inventory."""
    from fatpaths_cfg.fabric import load_fabric
    from fatpaths_cfg.support.memory import collector_paused, settle_long_lived
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


def add_commands(app: typer.Typer) -> None:
    from fatpaths_cfg.cli.cost import topo_cost, topo_match

    topo = command_group(help="Generate and inspect topologies.", no_args_is_help=True)
    topo.command("generate", short_help="Write a wiring inventory of a topology.")(topo_generate)
    topo.command("show", short_help="Print the figures of a topology.")(topo_show)
    topo.command("kinds", short_help="List topology kinds and their parameters.")(topo_kinds)
    topo.command("cost", short_help="Price a fabric's switches and cables.")(topo_cost)
    topo.command("match", short_help="List configurations of each kind for N hosts.")(topo_match)
    app.add_typer(topo, name="topo")


def generator_params(param: list[str]) -> dict[str, Any]:
    """`-p NAME=VALUE` options as the generator's parameters; a value must be a plain YAML
    number, word or list (`q=!!python/none` and `q=[1` are refused)."""
    import yaml

    params: dict[str, Any] = {}
    for item in param:
        key, sep, value = item.partition("=")
        if not sep:
            raise UserErrors.single("", "", f"--param {item!r}: expected NAME=VALUE")
        try:
            params[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise UserErrors.single(
                "", "", f"--param {item!r}: {value!r} is not a plain YAML value"
            ) from None
    return params
