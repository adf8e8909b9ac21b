"""Route tables as flat string lists: the shape templates and filters consume."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RouteTable:
    """One entry per (prefix, next hop), sorted by destination; with equal-cost next hops
    inside a layer, consecutive entries share a prefix. Two flat lists rather than objects:
    a Slim Fly q=19 switch holds 6,489 of them and the fabric 4.7M."""

    prefixes: list[str]
    next_hops: list[str]

    def __len__(self) -> int:
        return len(self.prefixes)

    def grouped(self) -> list[tuple[str, list[str]]]:
        """(prefix, next hops) per destination."""
        groups: list[tuple[str, list[str]]] = []
        for prefix, hop in zip(self.prefixes, self.next_hops, strict=True):
            if groups and groups[-1][0] == prefix:
                groups[-1][1].append(hop)
            else:
                groups.append((prefix, [hop]))
        return groups


EMPTY_ROUTES = RouteTable([], [])
