"""`lab test` on parallel planes: does low-latency traffic really take the fewest-hop plane?

Each host plan comes with `<host>.low-latency.csv`: per destination, the plane with the fewest
switch hops and the destination's address there. An application that connects to that address
without choosing a source must leave on that plane from the listed source address and cross
exactly the listed number of hops; the lab checks both on a sample of host pairs, with the
kernel's own route lookup (`ip route get`) and a traceroute.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np

from fatpaths_cfg.lab.netns import in_netns, parallel_retried, run
from fatpaths_cfg.lab.plan import HostNode, LabPlan
from fatpaths_cfg.lab.trace import trace_switches

_SOURCE = re.compile(r"\bsrc (\S+)")


@dataclass(frozen=True)
class LowLatencyChoice:
    """One row of a host's low-latency table."""

    source: HostNode
    destination: str
    plane: int
    hops: int
    address: str
    source_address: str


@dataclass(frozen=True)
class LowLatencyResult:
    choice: LowLatencyChoice
    source_used: str  # what `ip route get` picks when the application does not bind
    switches: list[int | None]  # traceroute hops as switches (None: not a switch address)
    ok: bool


def read_choices(plan: LabPlan) -> list[LowLatencyChoice]:
    """Every IPv4 row (or IPv6 row on an IPv6 fabric) of every host's low-latency table."""
    choices = []
    for host in plan.hosts:
        path = plan.out / "hosts" / f"{host.name}.low-latency.csv"
        if not path.is_file():
            continue
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
        v4 = [r for r in rows if ":" not in r["address"]]
        for row in v4 or rows:
            choices.append(
                LowLatencyChoice(
                    host,
                    row["destination"],
                    int(row["plane"]),
                    int(row["hops"]),
                    row["address"],
                    row["source"],
                )
            )
    return choices


def _check(plan: LabPlan, choice: LowLatencyChoice, max_hops: int, wait: int) -> LowLatencyResult:
    family = "-6" if ":" in choice.address else "-4"
    netns = choice.source.netns
    route = run(in_netns(netns, ["ip", family, "route", "get", choice.address]))
    found = _SOURCE.search(route)
    source_used = found.group(1) if found else ""
    switches, reached = trace_switches(
        plan, netns, choice.address, max_hops, family=family, wait=wait
    )
    fabric = plan.compiled.fabric
    in_plane = all(s is not None and fabric.switches[s].plane == choice.plane for s in switches)
    ok = (
        reached
        and in_plane
        and source_used == choice.source_address
        and len(switches) == choice.hops + 1
    )
    return LowLatencyResult(choice, source_used, switches, ok)


def check_low_latency(
    plan: LabPlan, samples: int, seed: int, failed_links: set[int]
) -> list[LowLatencyResult]:
    """`samples` host pairs of the low-latency tables, traced from source to destination;
    only on planes without failed links (the table is compiled, it does not follow failures)."""
    fabric = plan.compiled.fabric
    broken = {fabric.switches[fabric.links[i].a].plane for i in failed_links}
    choices = [c for c in read_choices(plan) if c.plane not in broken]
    if not choices:
        return []
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(len(choices), min(samples, len(choices)), replace=False))
    max_hops = int(plan.compiled.dist[plan.compiled.dist < 255].max(initial=0)) + 2
    return parallel_retried(
        lambda i, wait: _check(plan, choices[int(i)], max_hops, wait),
        picked,
        lambda _, result: result.ok,
    )
