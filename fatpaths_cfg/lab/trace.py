"""Traceroute inside the lab, read as the switches a packet crossed."""

from __future__ import annotations

import re

from fatpaths_cfg.lab.netns import in_netns, run
from fatpaths_cfg.lab.plan import LabPlan

_HOP = re.compile(r"^\s*(\d+)\s+(\S+)", re.MULTILINE)


def trace_switches(
    plan: LabPlan,
    netns: str,
    destination: str,
    max_hops: int,
    family: str,
    source: str | None = None,
    wait: int = 1,
) -> tuple[list[int | None], bool]:
    """The switches a traceroute from `netns` crosses (None: a hop that is no switch's or did
    not answer within `wait` seconds), and whether it reached `destination`. Without `source`
    the kernel picks it."""
    chosen_source = ["-s", source] if source is not None else []
    out = run(
        in_netns(
            netns,
            [
                "traceroute",
                family,
                "-n",
                "-q",
                "1",
                "-w",
                str(wait),
                "-m",
                str(max_hops),
                *chosen_source,
                destination,
            ],
        ),
        check=False,
    )
    hops: list[int | None] = []
    for _, address in _HOP.findall(out):
        if address == destination:
            return hops, True
        hops.append(plan.switch_of_address.get(address))
    return hops, False
