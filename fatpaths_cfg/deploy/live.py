"""The fabric as it runs: every switch's forwarding table read back, turned into next hops
between switches, and walked as a whole (`fatpaths verify --live`, and deploy between rounds).

A switch alone can hold exactly its compiled routes and still loop with its neighbours; only the
walk over every switch's read-back table shows that the fabric forwards.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fatpaths_cfg.deploy.state import RouteTable
from fatpaths_cfg.plan.rounds import StateProof, walk_state
from fatpaths_cfg.plan.view import RouteView


def _address(text: str) -> str:
    return str(ipaddress.ip_interface(text).ip)


def _prefix(text: str) -> str:
    return str(ipaddress.ip_network(text, strict=False))


@dataclass
class Addressing:
    """What a prefix and a next-hop address mean in one or more compiled fabrics, over the union
    of their switch names: prefix -> (layer index, destination), address -> switch."""

    names: list[str]
    prefixes: dict[str, tuple[int, int]] = field(default_factory=dict)
    owners: dict[str, int] = field(default_factory=dict)
    layers: int = 0

    @classmethod
    def of(cls, names: list[str], *views: RouteView) -> Addressing:
        where = {name: i for i, name in enumerate(names)}
        book = cls(names, layers=max(v.layer_count for v in views))
        for view in views:
            for family in view.families:
                for layer, row in enumerate(view.subnets[family]):
                    for s, subnet in enumerate(row):
                        book.prefixes.setdefault(_prefix(subnet), (layer, where[view.switches[s]]))
                for i, (a_side, b_side) in enumerate(view.link_addresses[family]):
                    a, b = (view.switches[int(x)] for x in view.ends[i])
                    book.owners.setdefault(_address(a_side), where[a])
                    book.owners.setdefault(_address(b_side), where[b])
        return book


@dataclass
class LiveFabric:
    """Read-back tables as next hops ([layer, switch, destination], -1 none) and what could not
    be placed: routes to prefixes no compile has, or via addresses of no known switch."""

    hops: np.ndarray
    strays: dict[str, list[str]]  # switch -> "prefix via address" lines that mean nothing
    unread: list[str]  # switches not read (their rows are -1)


def live_fabric(book: Addressing, tables: dict[str, RouteTable | None]) -> LiveFabric:
    size = len(book.names)
    hops = np.full((book.layers, size, size), -1, dtype=np.int64)
    strays: dict[str, list[str]] = {}
    unread = []
    where = {name: i for i, name in enumerate(book.names)}
    for name, table in tables.items():
        if table is None:
            unread.append(name)
            continue
        s = where[name]
        for prefix, hops_of in sorted(table.items()):
            place = book.prefixes.get(_prefix(prefix))
            owners = sorted({book.owners.get(_address(h), -1) for h in hops_of})
            if place is None or owners == [-1] or len(owners) != 1:
                strays.setdefault(name, []).append(f"{prefix} via {','.join(sorted(hops_of))}")
                continue
            layer, d = place
            hops[layer, s, d] = owners[0]
    return LiveFabric(hops, strays, unread)


def walk_live(
    live: LiveFabric, cables: np.ndarray, expected: np.ndarray, names: list[str]
) -> StateProof:
    return walk_state(live.hops, cables, expected, names)


def route_lines(
    views: tuple[RouteView, ...], names: list[str], hops: np.ndarray, switch: str
) -> dict[tuple[int, str], tuple[str, str, str]]:
    """The route lines `switch` holds in state `hops` (over `names`): (layer, destination) ->
    (family, prefix, next-hop address) per family, written as the first of `views` that has the
    destination and the cable to the next hop writes them."""
    s = names.index(switch)
    lines: dict[tuple[int, str], tuple[str, str, str]] = {}
    for layer in range(hops.shape[0]):
        for d in np.flatnonzero(hops[layer, s] >= 0):
            dest, hop = names[int(d)], names[int(hops[layer, s, d])]
            for view in views:
                here = view.index
                if not {switch, dest, hop} <= here.keys() or layer >= view.layer_count:
                    continue
                link = int(view.link_of[here[switch], here[hop]])
                if link < 0:
                    continue
                side = 0 if int(view.ends[link, 0]) == here[hop] else 1
                for family in view.families:
                    lines[(layer, f"{dest}/{family}")] = (
                        family,
                        _prefix(view.subnets[family][layer][here[dest]]),
                        _address(view.link_addresses[family][link][side]),
                    )
                break
    return lines


def table_of(lines: dict[tuple[int, str], tuple[str, str, str]]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for _, prefix, hop in lines.values():
        table.setdefault(prefix, set()).add(hop)
    return {prefix: frozenset(hops_of) for prefix, hops_of in table.items()}


def describe(tables: dict[str, Any]) -> str:
    return ", ".join(sorted(tables))
