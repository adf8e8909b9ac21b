"""The fabric as it runs: every switch's forwarding table read back, turned into next hops
between switches, and walked as a whole (`fatpaths verify --live`, and deploy between rounds).

A switch alone can hold exactly its compiled routes and still loop with its neighbours; only the
walk over every switch's read-back table shows that the fabric forwards.
"""

from __future__ import annotations

import contextlib
import ipaddress
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fatpaths_cfg.deploy.state import RouteTable
from fatpaths_cfg.deploy.state import prefix as canonical_prefix
from fatpaths_cfg.plan.rounds import StateProof, walk_state
from fatpaths_cfg.plan.view import RouteView


def _address(text: str) -> str:
    return str(ipaddress.ip_interface(text).ip)


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
                        book.prefixes.setdefault(
                            canonical_prefix(subnet), (layer, where[view.switches[s]])
                        )
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
            place = book.prefixes.get(canonical_prefix(prefix))
            owners = sorted({book.owners.get(_address(h), -1) for h in hops_of})
            if place is None or owners == [-1] or len(owners) != 1:
                strays.setdefault(name, []).append(f"{prefix} via {','.join(sorted(hops_of))}")
                continue
            layer, d = place
            hops[layer, s, d] = owners[0]
    return LiveFabric(hops, strays, unread)


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
                written = [
                    view.route_line(family, layer, here[switch], here[dest], here[hop])
                    for family in view.families
                ]
                if None in written:
                    continue  # no cable to the hop in this view
                for line in written:
                    assert line is not None
                    lines[(layer, f"{dest}/{line[0]}")] = line
                break
    return lines


def table_of(lines: dict[tuple[int, str], tuple[str, str, str]]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for _, prefix, hop in lines.values():
        table.setdefault(prefix, set()).add(hop)
    return {prefix: frozenset(hops_of) for prefix, hops_of in table.items()}


@dataclass
class SwitchReading:
    name: str
    status: str  # "matches", "drift" or "failed" (not read)
    matches: list[str]  # the compiled outputs whose routes it holds exactly
    missing: int = 0  # routes of OUT it does not hold
    extra: int = 0  # routes it holds that OUT does not
    detail: str = ""


@dataclass
class LiveReport:
    out: str
    switches: list[SwitchReading]
    proof: StateProof
    problems: list[str]  # every looping or blackholed (layer, switch, destination)
    strays: dict[str, list[str]]

    @property
    def ok(self) -> bool:
        return self.proof.ok and all(s.status == "matches" for s in self.switches)


def verify_live(
    out: Any,
    book: Any,
    options: Any,
    parallel: int = 4,
    others: list[Any] | None = None,
) -> LiveReport:
    """Read every switch's FIB (read-only) and walk the fabric as it runs; compare each switch
    with OUT and with the `others` compiled outputs. A switch that cannot be read is a failure,
    never an empty table."""
    from concurrent.futures import ThreadPoolExecutor

    from fatpaths_cfg.deploy.push import driver_for, plan_targets
    from fatpaths_cfg.plan.run import read_view

    view = read_view(out, "OUT")
    compared = [(str(out), view)] + [(str(o), read_view(o, "--compare")) for o in others or []]
    names = view.switches
    targets, skipped = plan_targets(out, None, book)
    tables: dict[str, RouteTable | None] = dict.fromkeys(skipped)
    reasons: dict[str, str] = dict.fromkeys(skipped, "no management address")

    def read(target: Any) -> None:
        driver = driver_for(target, options)
        try:
            driver.open()
            tables[target.name] = driver.get_route_tables()[1]
        except Exception as exc:  # unreachable, or a tool on it failed: the switch failed
            tables[target.name] = None
            reasons[target.name] = f"{type(exc).__name__}: {exc}"
        finally:
            with contextlib.suppress(Exception):
                driver.close()

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        list(pool.map(read, targets))
    readings = []
    own = view.next_hop.astype(np.int64)
    for name in names:
        table = tables.get(name)
        if table is None:
            readings.append(SwitchReading(name, "failed", [], detail=reasons.get(name, "")))
            continue
        got = set(table.items())
        matches = []
        for label, other in compared:
            if name not in other.index:
                continue
            want = table_of(
                route_lines((other,), other.switches, other.next_hop.astype(np.int64), name)
            )
            if dict(table) == want:
                matches.append(label)
        want = table_of(route_lines((view,), names, own, name))
        missing = len(set(want.items()) - got)
        extra = len(got - set(want.items()))
        status = "matches" if not missing and not extra else "drift"
        readings.append(SwitchReading(name, status, matches, missing, extra))
    book_of = Addressing.of(names, *(v for _, v in compared))
    live = live_fabric(book_of, {n: tables.get(n) for n in names})
    cables = np.zeros((len(names), len(names)), dtype=bool)
    cables[view.ends[:, 0], view.ends[:, 1]] = True
    cables[view.ends[:, 1], view.ends[:, 0]] = True
    expected = own >= 0
    unread = [names.index(n) for n in live.unread]
    expected[:, unread, :] = False
    problems: list[str] = []
    proof = walk_state(live.hops, cables, expected, names, problems)
    return LiveReport(str(out), readings, proof, problems, live.strays)
