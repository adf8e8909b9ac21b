"""Cabling read from the devices (LLDP) against the compiled fabric: missing, swapped and extra
links, found before anything is pushed."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.compiled import LoadedCompiled

# local port -> (neighbour system name, neighbour port; "" when any port will do)
Neighbours = dict[str, tuple[str, str]]


@dataclass(frozen=True, order=True)
class CablingProblem:
    switch: str
    port: str
    kind: str  # missing | swapped | wrong | extra
    expected: str
    seen: str


def expected_neighbours(compiled: LoadedCompiled, name: str) -> Neighbours:
    """What LLDP on `name` should report: the far end of each compiled link, and each host
    (whose port names the fabric does not know)."""
    fabric = compiled.fabric
    names = [s.name for s in fabric.switches]
    wanted: Neighbours = {}
    for link in fabric.links:
        ends = ((link.a, link.a_port), (link.b, link.b_port))
        for (near, near_port), (far, far_port) in (ends, ends[::-1]):
            if names[near] == name:
                wanted[near_port] = (names[far], far_port)
    for host in fabric.hosts:
        if names[host.switch] == name:
            wanted[host.port] = (host.name, "")
    return wanted


def seen_neighbours(lldp: dict[str, list[dict[str, str]]]) -> Neighbours:
    """NAPALM's get_lldp_neighbors() shape, one neighbour per port: the first listed, which
    the frr and linux drivers make the youngest (a previous cable's neighbour lingers until
    its TTL runs out)."""
    return {port: (found[0]["hostname"], found[0]["port"]) for port, found in lldp.items() if found}


def _text(end: tuple[str, str] | None) -> str:
    if end is None:
        return "nothing"
    return f"{end[0]}:{end[1]}" if end[1] else end[0]


def _matches(wanted: tuple[str, str], seen: tuple[str, str]) -> bool:
    return wanted[0] == seen[0] and (not wanted[1] or wanted[1] == seen[1])


def compare_cabling(
    switch: str, ports: tuple[str, ...], wanted: Neighbours, seen: Neighbours
) -> list[CablingProblem]:
    """Problems on the switch's fabric ports (a management port's neighbour is not fabric)."""
    problems = []
    for port in sorted(set(wanted) | (set(seen) & set(ports))):
        want, got = wanted.get(port), seen.get(port)
        if want is not None and got is not None and _matches(want, got):
            continue
        if want is not None and not want[1] and got is None:
            continue  # a host that runs no LLDP agent says nothing about its cable
        if want is None:
            kind = "extra"
        elif got is None:
            kind = "missing"
        else:
            # Swapped: what this port sees belongs on another of the switch's ports.
            elsewhere = [p for p, w in wanted.items() if p != port and _matches(w, got)]
            kind = f"swapped with {elsewhere[0]}" if elsewhere else "wrong"
        problems.append(CablingProblem(switch, port, kind, _text(want), _text(got)))
    return problems
