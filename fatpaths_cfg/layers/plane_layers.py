"""Layers of a fabric with parallel planes: each plane's layers are built on that plane alone,
then fabric layer l is the union over planes of plane p's layer l.

The layer algorithms need a connected graph and a plane is an island of the cabling, so
building on the whole fabric would fail or, worse, complete a layer with links that do not
exist between planes. One plane gives exactly the single-plane layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.layers import Layer, LayerError, build_layers, layers_or_user_error
from fatpaths_cfg.support.stable_hash import plane_seed

if TYPE_CHECKING:
    from fatpaths_cfg.inventory.schema import RoutingSpec


def plane_subgraph(
    edges: np.ndarray, plane_of: np.ndarray, plane: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(switches, links, local edges) of one plane: its switch indices, the indices of its
    links, and those links as pairs of plane-local switch numbers."""
    members = np.flatnonzero(plane_of == plane)
    local = np.full(len(plane_of), -1, dtype=np.int64)
    local[members] = np.arange(len(members))
    links = np.flatnonzero(plane_of[edges[:, 0]] == plane) if len(edges) else np.zeros(0, int)
    return members, links, local[edges[links]].astype(edges.dtype).reshape(-1, 2)


def fabric_layers(
    nr: int,
    edges: np.ndarray,
    plane_of: np.ndarray,
    spec: RoutingSpec,
    seed: int,
    file: str,
    line: int,
    link_keys: np.ndarray | None = None,
    switch_keys: np.ndarray | None = None,
    keep: list[np.ndarray] | None = None,
) -> list[Layer]:
    """Per-plane layers joined into fabric layers; UserErrors when a plane's layer fails.

    `link_keys`/`switch_keys` hash the names of the cables and switches; `keep` holds sparse
    layers (masks over every link of the fabric) to carry over from an earlier compile."""
    planes = 1 + int(plane_of.max(initial=0))
    if planes == 1:
        return layers_or_user_error(nr, edges, spec, seed, file, line, link_keys, switch_keys, keep)
    per_plane = []
    for plane in range(planes):
        members, links, local_edges = plane_subgraph(edges, plane_of, plane)
        try:
            layers = build_layers(
                len(members),
                local_edges,
                spec,
                plane_seed(seed, plane),
                None if link_keys is None else link_keys[links],
                None if switch_keys is None else switch_keys[members],
                None if keep is None else [mask[links] for mask in keep],
            )
        except LayerError as exc:
            raise UserErrors.single(
                file, "routing", f"plane {plane}: {exc.message}", exc.hint, line=line
            ) from None
        per_plane.append((members, links, layers))
    return [_joined(i, len(edges), nr, per_plane) for i in range(spec.layers)]


def _joined(
    i: int, link_count: int, nr: int, per_plane: list[tuple[np.ndarray, np.ndarray, list[Layer]]]
) -> Layer:
    mask = np.zeros(link_count, dtype=bool)
    first = per_plane[0][2][i]
    rank = None if first.rank is None else np.zeros(nr, dtype=np.int32)
    offset = 0
    for members, links, layers in per_plane:
        layer = layers[i]
        mask[links[layer.links]] = True
        if rank is not None and layer.rank is not None:
            # Ranks only order neighbours, which share a plane; the offset keeps them unique.
            rank[members] = layer.rank + offset
            offset += len(members)
    return Layer(
        first.number,
        mask,
        first.algorithm,
        rank,
        max(layers[i].attempts for _, _, layers in per_plane),
        sum(layers[i].completed_links for _, _, layers in per_plane),
    )
