"""The stages of `fatpaths topo cost` and `fatpaths topo match`: the bills of materials (priced
when a price file is given) of inventories and generated topologies, the cost directory, and
the priced records of the configurations that match a host count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fatpaths_cfg.errors import UserErrors

# The command named in the marker of a `topo cost -o DIR` directory.
COST_KIND = "cost"


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


def write_cost_dir(out: Path, document: dict[str, Any], files: list[Path], force: bool) -> None:
    from functools import partial

    from fatpaths_cfg.cost.report import plot_cost
    from fatpaths_cfg.support.output import StagedOutput

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
