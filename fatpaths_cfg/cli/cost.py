"""`fatpaths topo cost` and `fatpaths topo match` (registered in the `topo` group)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.console import make_console
from fatpaths_cfg.errors import UserErrors

console = make_console()

# The command named in the marker of a `topo cost -o DIR` directory.
COST_KIND = "cost"
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
    from fatpaths_cfg.output import check_output_target

    files = list(inventory or [])
    if not files and not generate:
        run_or_exit(_nothing_to_cost)
    if out is not None:
        run_or_exit(lambda: check_output_target(out, COST_KIND, files, force))
    bills = run_or_exit(lambda: cost_bills(files, generate, prices, seed))
    document = {"networks": bills}
    if out is not None:
        run_or_exit(lambda: _write_cost_dir(out, document, files, force))
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


def cost_bills(
    files: list[Path], generate: list[str], prices: Path | None, seed: int
) -> list[dict[str, Any]]:
    from fatpaths_cfg.cost.model import bill_of_materials, priced
    from fatpaths_cfg.cost.network import CostNetwork, from_fabric, from_topology
    from fatpaths_cfg.cost.prices import Layout, load_prices
    from fatpaths_cfg.cost.specs import build_spec, parse_spec

    price_file = load_prices(prices) if prices is not None else None
    networks: list[CostNetwork] = []
    for path in files:
        from fatpaths_cfg.fabric import load_fabric

        _, fabric = load_fabric(path)
        networks.append(from_fabric(fabric))
    for text in generate:
        spec = parse_spec(text, "--generate")
        networks.append(from_topology(spec.name, build_spec(spec, seed, "--generate")))
    if price_file is None:
        return [bill_of_materials(network, Layout()) for network in networks]
    bills, errors = [], []
    for network in networks:
        try:
            bills.append(priced(network, price_file))
        except UserErrors as exc:
            errors.extend(exc.errors)
    if errors:
        raise UserErrors(errors)
    return bills


def _write_cost_dir(out: Path, document: dict[str, Any], files: list[Path], force: bool) -> None:
    from functools import partial

    from fatpaths_cfg.cost.report import plot_cost
    from fatpaths_cfg.output import StagedOutput

    bills = document["networks"]
    with StagedOutput(out, COST_KIND, files, force) as staged:
        staged.add_text("cost.json", json.dumps(document, indent=2) + "\n")
        if all("cost" in bill for bill in bills):
            # Said from the inputs, not the command line: the same networks and prices draw
            # the same chart whatever order the flags came in.
            first = bills[0]["prices"]
            caption = (
                "fatpaths topo cost: "
                + ", ".join(f"{b['network']} (N={b['hosts']:,})" for b in bills)
                + f"; prices {first['name']} of {first['date']} from {first['file']}"
            )
            staged.add_written("cost.png", partial(plot_cost, bills, caption))
        staged.commit()


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
    console.print(match_table(document))
    if not records:
        console.print("no configuration within the tolerance: widen --tolerance")


def match_records(rows: list[Any], prices: Path | None) -> list[dict[str, Any]]:
    from fatpaths_cfg.cost.model import priced
    from fatpaths_cfg.cost.network import from_topology
    from fatpaths_cfg.cost.prices import load_prices

    price_file = load_prices(prices) if prices is not None else None
    records = []
    for row in rows:
        record: dict[str, Any] = {
            "kind": row.kind,
            "configuration": row.label,
            "generate": row.spec.text if row.spec is not None else None,
            "hosts": row.hosts,
            "switches": row.switches,
            "radix": row.radix,
            "network_radix": row.network_radix,
            "hosts_per_switch": row.hosts_per_switch,
            "ports_per_endpoint": round(row.ports_per_endpoint, 3),
            "cables_per_endpoint": round(row.cables_per_endpoint, 3),
            "diameter": row.diameter,
            "note": row.note,
        }
        if price_file is not None:
            name = row.spec.name if row.spec is not None else f"{row.kind}-k{row.radix}"
            bill = priced(from_topology(name, row.topology()), price_file)
            record["cost_per_endpoint"] = bill["cost_per_endpoint"]["total"]
            record["currency"] = bill["prices"]["currency"]
        records.append(record)
    return records


def match_table(document: dict[str, Any]) -> Any:
    from fatpaths_cfg.console import make_table

    records = document["configurations"]
    priced = any("cost_per_endpoint" in r for r in records)
    table = make_table(
        f"configurations for {document['hosts']:,} hosts within {document['tolerance']:.0%}"
    )
    columns = [
        "kind", "configuration", "N", "switches", "radix", "k'", "p", "ports/N", "cables/N",
        "diameter",
    ]  # fmt: skip
    if priced:
        columns.append(f"cost/N ({records[0]['currency']})")
    columns.append("note")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("kind", "configuration", "note") else "right"
        )
    for r in records:
        cells = [
            r["kind"], r["configuration"], f"{r['hosts']:,}", f"{r['switches']:,}", str(r["radix"]),
            str(r["network_radix"]), str(r["hosts_per_switch"]), f"{r['ports_per_endpoint']:.2f}",
            f"{r['cables_per_endpoint']:.2f}", "-" if r["diameter"] is None else str(r["diameter"]),
        ]  # fmt: skip
        if priced:
            cells.append(f"{r['cost_per_endpoint']:,.0f}")
        cells.append(r["note"])
        table.add_row(*cells)
    return table
