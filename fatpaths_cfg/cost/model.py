"""A fabric's bill of materials and its price: routers, copper and fiber, total and per endpoint.

Counts first (switches by radix; ports used, installed and bought; switch and host cables),
then, with a price file, each switch bought as the cheapest model of its speed with enough
ports, and each cable as copper up to the copper reach or as fiber with two optics beyond.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from fatpaths_cfg.errors import UserErrors

from .layout import cable_lengths, place
from .network import CostNetwork
from .prices import Layout, PriceFile

# Figures per endpoint are rounded for reading; totals stay exact.
PER_ENDPOINT_DIGITS = 4


def _per(value: float, hosts: int) -> float | None:
    return round(value / hosts, PER_ENDPOINT_DIGITS) if hosts else None


def bill_of_materials(network: CostNetwork, layout: Layout) -> dict[str, Any]:
    """Counts, the layout and cable lengths (no prices)."""
    used = network.ports_used()
    placement = place(network, layout)
    lengths = cable_lengths(network, layout, placement)
    n = network.hosts
    by_radix = Counter(int(p) for p in network.ports)
    host_cables = int(network.host_cables.sum())
    links = len(network.edges)
    return {
        "network": network.name,
        "hosts": n,
        "switches": network.nr,
        "switches_by_ports": {str(k): by_radix[k] for k in sorted(by_radix)},
        "ports": {
            "used": int(used.sum()),
            "installed": int(network.ports.sum()),
            "used_per_endpoint": _per(float(used.sum()), n),
            "installed_per_endpoint": _per(float(network.ports.sum()), n),
        },
        "cables": {
            "switch_switch": links,
            "host": host_cables,
            "per_endpoint": _per(float(links + host_cables), n),
            "switch_switch_length_m": {
                "total": round(float(lengths.sum()), 1),
                "max": round(float(lengths.max()), 1) if links else 0.0,
            },
        },
        "layout": {
            "racks": placement.racks,
            "rows": placement.rows,
            "racks_per_row": placement.racks_per_row,
            "groups": len(set(network.groups)),
            **layout.model_dump(),
        },
    }


def priced(network: CostNetwork, prices: PriceFile) -> dict[str, Any]:
    """The bill of materials with its cost; a switch no model fits is a located error in the
    price file."""
    spec = prices.spec
    layout = spec.layout
    bill = bill_of_materials(network, layout)
    placement = place(network, layout)
    lengths = cable_lengths(network, layout, placement)
    used = network.ports_used()
    bought: Counter[tuple[int, float, float]] = Counter()
    missing = []
    for s in range(network.nr):
        need = max(int(network.ports[s]), int(used[s]))
        model = prices.switch_for(need, float(network.speed_gbps[s]))
        if model is None:
            missing.append((need, float(network.speed_gbps[s])))
            continue
        bought[(model.radix, model.speed_gbps, model.price)] += 1
    if missing:
        need, speed = max(missing)
        raise UserErrors([prices.missing_switch(need, speed, network.name)])
    copper, fiber = spec.cables.copper, spec.cables.fiber
    host_length = layout.host_cable_m
    hosts = int(network.host_cables.sum())
    host_copper = host_length <= copper.max_length_m
    all_lengths = np.concatenate([lengths, np.full(hosts, host_length)])
    is_copper = all_lengths <= copper.max_length_m
    copper_cost = float(np.sum(copper.fixed + copper.per_m * all_lengths[is_copper]))
    fiber_lengths = all_lengths[~is_copper]
    fiber_cost = float(
        np.sum(fiber.fixed + fiber.per_m * fiber_lengths)
        + 2 * spec.optics_per_end * len(fiber_lengths)
    )
    routers = float(sum(price * count for (_, _, price), count in bought.items()))
    total = routers + copper_cost + fiber_cost
    n = network.hosts
    bill["ports"]["bought"] = int(sum(radix * count for (radix, _, _), count in bought.items()))
    bill["ports"]["bought_per_endpoint"] = _per(float(bill["ports"]["bought"]), n)
    bill["switch_models"] = [
        {"radix": radix, "speed_gbps": speed, "price": price, "count": count}
        for (radix, speed, price), count in sorted(bought.items())
    ]
    bill["cables"].update(
        {
            "copper": int(is_copper.sum()),
            "fiber": int((~is_copper).sum()),
            "host_cable_type": "copper" if host_copper else "fiber",
        }
    )
    bill["prices"] = {
        "file": str(prices.path),
        "name": spec.prices,
        "source": spec.source,
        "date": spec.date.isoformat(),
        "currency": spec.currency,
    }
    bill["cost"] = {
        "routers": round(routers, 2),
        "copper": round(copper_cost, 2),
        "fiber": round(fiber_cost, 2),
        "total": round(total, 2),
    }
    bill["cost_per_endpoint"] = {
        key: round(value / n, 2) if n else None
        for key, value in (
            ("routers", routers),
            ("copper", copper_cost),
            ("fiber", fiber_cost),
            ("total", total),
        )
    }
    return bill
