"""`fatpaths topo cost` and `fatpaths topo match` (registered in the `topo` group; the stages:
cost.run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.cost.run import COST_KIND, cost_bills, match_records, write_cost_dir
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.console import make_console

console = make_console()

EXAMPLE_PRICES = "examples/prices-100g-example.yaml"


def topo_cost(
    inventory: list[Path] = typer.Argument(
        None, help="Inventory YAML files (wiring or generator spec), one column each."
    ),
    generate: list[str] = typer.Option(
        [],
        "--generate",
        "-g",
        help="A generated topology instead of a file, KIND:NAME=VALUE,... (e.g. slimfly:q=19 or "
        "fattree:k=28,oversubscription=2); repeatable.",
    ),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help=f"Price file (YAML; example: {EXAMPLE_PRICES}). Without it: counts and lengths only.",
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Wiring seed of random --generate kinds."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    out: Path | None = typer.Option(
        None,
        "-o",
        "--out",
        help="Also write cost.json and, with --prices, the bar chart cost.png into this "
        "directory (new, empty, or an earlier `topo cost` output).",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace OUT even if it holds files fatpaths did not write."
    ),
) -> None:
    """Count a fabric's switches, ports and cables, lay it out in racks and price it."""
    from fatpaths_cfg.support.output import check_output_target

    files = list(inventory or [])
    if not files and not generate:
        run_or_exit(_nothing_to_cost)
    if out is not None:
        run_or_exit(lambda: check_output_target(out, COST_KIND, files, force))
    bills = run_or_exit(lambda: cost_bills(files, generate, prices, seed))
    document = {"networks": bills}
    if out is not None:
        run_or_exit(lambda: write_cost_dir(out, document, files, force))
    if json_out:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return
    from fatpaths_cfg.cost.report import cost_table

    console.print(cost_table(bills))
    if prices is None:
        console.print(f"no prices: pass --prices FILE (an example: {EXAMPLE_PRICES})")
    if out is not None:
        console.print(f"wrote {out}", markup=False)


def _nothing_to_cost() -> None:
    raise UserErrors.single(
        "topo cost",
        "INVENTORY",
        "nothing to cost",
        "give an inventory or --generate KIND:NAME=VALUE",
    )


def topo_match(
    hosts: int = typer.Option(..., "--hosts", help="The number of hosts N to match."),
    tolerance: str = typer.Option(
        "10%", "--tolerance", help="How far N may be off: a share, e.g. 10% or 0.1."
    ),
    kinds: str | None = typer.Option(
        None,
        "--kinds",
        help="Comma-separated kinds (default: all): slimfly, hyperx, dragonfly, xpander, "
        "jellyfish, fattree, fattree-uniform, mlfm, oft, clos, clique.",
    ),
    max_radix: int = typer.Option(
        128, "--max-radix", help="Leave out configurations with switches of more ports."
    ),
    prices: Path | None = typer.Option(
        None, "--prices", help="Price file: adds the cost per endpoint of every row."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List every configuration of every kind within the tolerance of N hosts."""
    from fatpaths_cfg.cli.common import name_list
    from fatpaths_cfg.cost.match import match, parse_tolerance

    share = run_or_exit(lambda: parse_tolerance(tolerance))
    rows = run_or_exit(lambda: match(hosts, share, name_list(kinds), max_radix))
    records = run_or_exit(lambda: match_records(rows, prices))
    document = {
        "hosts": hosts,
        "tolerance": share,
        "max_radix": max_radix,
        "configurations": records,
    }
    if json_out:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return
    from fatpaths_cfg.cost.report import match_table

    console.print(match_table(document))
    if not records:
        console.print("no configuration within the tolerance: widen --tolerance")
