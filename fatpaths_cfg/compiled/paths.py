"""Paths as a compiled layer forwards them: one walker of `next_hop[switch, destination]` tables,
shared by analysis, verify (the Batfish traceroutes' expected paths) and the lab's probes, so that
"the path of a layer" means one thing, and a table with no entry or a loop gives no path rather
than an invented one."""

from __future__ import annotations

import numpy as np

Path = tuple[int, ...]


def walk(next_hop: np.ndarray, s: int, t: int) -> Path | None:
    """The s-t path one layer's table (`next_hop[switch, destination]`) gives; None where the
    table has no entry (< 0) or loops (a walk longer than the switch count)."""
    path = [s]
    while path[-1] != t:
        nxt = int(next_hop[path[-1], t])
        if nxt < 0 or len(path) > next_hop.shape[0]:
            return None
        path.append(nxt)
    return tuple(path)


def walk_layers(next_hop: np.ndarray, s: int, t: int) -> list[Path | None]:
    """Per layer of `next_hop[layer, switch, destination]`, its s-t path (None: none)."""
    return [walk(next_hop[layer], s, t) for layer in range(next_hop.shape[0])]


def layer_paths(next_hop: np.ndarray, s: int, t: int) -> list[Path]:
    """The distinct s-t paths of the layers, in layer order; layers without one are left out."""
    unique: list[Path] = []
    for path in walk_layers(next_hop, s, t):
        if path is not None and path not in unique:
            unique.append(path)
    return unique
