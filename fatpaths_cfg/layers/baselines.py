"""Baseline layer algorithms FatPaths is compared against: SPAIN, PAST and k-shortest paths.

Each returns exactly `count` link masks, like every sparse-layer builder. The `plan_*` functions
also return what the layers were made of, for tests and reports.

SPAIN and PAST layers are forests, as their Ethernet VLANs must be loop-free: per-destination
trees are merged into one layer only while the union stays acyclic. Completion then only joins
components, so a completed layer is a spanning tree in which every tree path it was built from
is still the one route between its ends.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra

from fatpaths_cfg.inventory.schema import RoutingSpec

# k-shortest: pairs sampled per switch when routing.paths_per_layer is unset. Yen's algorithm
# costs milliseconds per pair in networkx, so all Nr^2 pairs are out of reach beyond q=5.
KSHORTEST_PAIRS_PER_SWITCH = 2


def _link_index(edges: np.ndarray) -> dict[tuple[int, int], int]:
    return {(int(u), int(v)): i for i, (u, v) in enumerate(edges)}


def _link_of(index: dict[tuple[int, int], int], a: int, b: int) -> int:
    return index[(a, b) if a < b else (b, a)]


def _neighbours(nr: int, edges: np.ndarray) -> list[list[int]]:
    around: list[list[int]] = [[] for _ in range(nr)]
    for u, v in edges:
        around[int(u)].append(int(v))
        around[int(v)].append(int(u))
    return around


def shortest_path_tree(
    nr: int,
    around: list[list[int]],
    index: dict[tuple[int, int], int],
    root: int,
    rng: np.random.Generator,
    reuse: np.ndarray | None = None,
) -> np.ndarray:
    """Link ids of a BFS tree towards `root`: each switch picks one neighbour one hop closer.

    Among equally close neighbours the link least used so far (`reuse`) wins, ties at random,
    so repeated trees for the same root spread over the equal-cost alternatives.
    """
    level = np.full(nr, -1, dtype=np.int64)
    level[root] = 0
    order = [root]
    for node in order:
        for nb in around[node]:
            if level[nb] < 0:
                level[nb] = level[node] + 1
                order.append(nb)
    links = []
    for node in order[1:]:
        closer = [nb for nb in around[node] if level[nb] == level[node] - 1]
        ids = np.array([_link_of(index, node, nb) for nb in closer])
        used = reuse[ids] if reuse is not None else np.zeros(len(ids))
        best = np.flatnonzero(used == used.min())
        links.append(int(ids[best[rng.integers(len(best))]]))
    return np.array(links, dtype=np.int64)


@dataclass(frozen=True)
class DestinationTree:
    """Paths from `sources` towards `destination` that together form one tree."""

    destination: int
    links: np.ndarray  # link ids
    sources: np.ndarray  # switches whose path to the destination this tree carries


@dataclass(frozen=True)
class TreeLayers:
    masks: list[np.ndarray]  # exactly `count` forests
    trees: list[list[DestinationTree]]  # per mask, the trees merged into it
    needed: int  # forests the construction made before the cap of `count` layers


def _parents_to_tree(
    nr: int,
    index: dict[tuple[int, int], int],
    destination: int,
    parent: np.ndarray,
    sources: np.ndarray,
) -> DestinationTree:
    links: set[int] = set()
    for source in sources.tolist():
        node = source
        while node != destination:
            links.add(_link_of(index, node, int(parent[node])))
            node = int(parent[node])
    return DestinationTree(destination, np.array(sorted(links), dtype=np.int64), sources)


def _weighted_parents(
    nr: int, edges: np.ndarray, cost: np.ndarray, root: int, rng: np.random.Generator
) -> np.ndarray:
    """Each switch's next hop on a least-cost path to `root`, ties at random."""
    graph = sp.csr_matrix((cost, (edges[:, 0], edges[:, 1])), shape=(nr, nr))
    dist = dijkstra(graph, directed=False, indices=root)
    parent = np.full(nr, -1, dtype=np.int64)
    ends = np.concatenate([edges, edges[:, ::-1]])
    weights = np.concatenate([cost, cost])
    for node in rng.permutation(nr).tolist():
        if node == root:
            continue
        out = ends[:, 0] == node
        closer = ends[out, 1][dist[ends[out, 1]] + weights[out] == dist[node]]
        parent[node] = closer[rng.integers(len(closer))]
    return parent


def _path_to(parent: np.ndarray, source: int, destination: int) -> list[int]:
    path = [source]
    while path[-1] != destination:
        path.append(int(parent[path[-1]]))
    return path


def _second_paths(
    nr: int,
    edges: np.ndarray,
    index: dict[tuple[int, int], int],
    destination: int,
    first: np.ndarray,
    rng: np.random.Generator,
) -> dict[int, list[int]]:
    """Per source, SPAIN's second path: least cost when each link of the source's own first
    path costs |E| extra, so a link-disjoint path wins over any path sharing a link."""
    noise = rng.random(len(edges)) * 1e-3 / max(nr, 1)  # below one hop over any path: ties only
    # One directed graph with both orientations; only its weights change from source to source.
    ends = np.concatenate([edges, edges[:, ::-1]])
    graph = sp.csr_matrix((np.arange(1.0, len(ends) + 1), (ends[:, 0], ends[:, 1])), shape=(nr, nr))
    link_at = (graph.data.astype(np.int64) - 1) % len(edges)
    paths: dict[int, list[int]] = {}
    for source in range(nr):
        if source == destination:
            continue
        own = _path_to(first, source, destination)
        cost = 1.0 + noise
        cost[[_link_of(index, a, b) for a, b in itertools.pairwise(own)]] += len(edges)
        graph.data = cost[link_at]
        _, towards = dijkstra(graph, directed=True, indices=destination, return_predecessors=True)
        path = _path_to(towards, source, destination)
        if path != own:
            paths[source] = path
    return paths


def _colour_paths(
    nr: int,
    index: dict[tuple[int, int], int],
    destination: int,
    paths: dict[int, list[int]],
    rng: np.random.Generator,
) -> list[DestinationTree]:
    """Greedy colouring: a path joins the first class in which every switch it crosses keeps a
    single next hop towards the destination (SPAIN's VLAN compatibility); a class is a tree."""
    classes: list[dict[int, int]] = []
    members: list[list[int]] = []
    for source in rng.permutation(sorted(paths)).tolist():
        hops = dict(itertools.pairwise(paths[source]))
        for next_of, held in zip(classes, members, strict=True):
            if all(next_of.get(node, nxt) == nxt for node, nxt in hops.items()):
                next_of.update(hops)
                held.append(source)
                break
        else:
            classes.append(hops)
            members.append([source])
    trees = []
    for next_of, held in zip(classes, members, strict=True):
        links = sorted({_link_of(index, a, b) for a, b in next_of.items()})
        trees.append(
            DestinationTree(
                destination, np.array(links, dtype=np.int64), np.array(sorted(held), dtype=np.int64)
            )
        )
    return trees


def spain_destination_trees(
    nr: int,
    edges: np.ndarray,
    index: dict[tuple[int, int], int],
    destination: int,
    rng: np.random.Generator,
) -> list[DestinationTree]:
    """SPAIN's path set towards one destination (k = 2 paths per source), as trees.

    The first paths are one shortest-path tree (ties at random); the second paths, preferring
    links disjoint from each source's first path, are coloured into as few trees as the greedy
    colouring finds. A source whose second path equals its first adds nothing.
    """
    first = _weighted_parents(nr, edges, np.ones(len(edges)), destination, rng)
    others = np.array([s for s in range(nr) if s != destination], dtype=np.int64)
    trees = [_parents_to_tree(nr, index, destination, first, others)]
    return trees + _colour_paths(
        nr, index, destination, _second_paths(nr, edges, index, destination, first, rng), rng
    )


def _components(nr: int, edges: np.ndarray, mask: np.ndarray) -> np.ndarray:
    kept = edges[mask]
    graph = sp.csr_matrix(
        (np.ones(len(kept), dtype=np.int8), (kept[:, 0], kept[:, 1])), shape=(nr, nr)
    )
    return connected_components(graph, directed=False)[1]


def _stays_forest(
    edges: np.ndarray, mask: np.ndarray, component: np.ndarray, links: np.ndarray
) -> bool:
    """Whether the forest `mask` (components `component`) plus the tree `links` is acyclic:
    the new links, seen between components, must not close a cycle."""
    new = links[~mask[links]]
    a, b = component[edges[new, 0]], component[edges[new, 1]]
    if np.any(a == b):
        return False
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        ru, rv = find(u), find(v)
        if ru == rv:
            return False
        parent[ru] = rv
    return True


def merge_into_forests(
    nr: int, edges: np.ndarray, trees: list[DestinationTree], count: int
) -> TreeLayers:
    """SPAIN's greedy merge: each tree joins the first forest it keeps acyclic, else opens one.

    Of the forests, the `count` serving the most (source, destination) pairs become layers (a
    stated cap, since the fabric has a fixed number of layers); with fewer forests than
    layers the forests repeat in order, so that no layer is left without paths it serves.
    """
    # All forests as rows of one matrix, so that a tree's candidates are found in one step: a
    # forest on Nr switches has at most Nr - 1 links, which rules out most of them cheaply.
    rows = np.zeros((max(len(trees), 1), len(edges)), dtype=bool)
    sizes = np.zeros(len(rows), dtype=np.int64)
    components: list[np.ndarray] = []
    members: list[list[DestinationTree]] = []
    for tree in trees:
        opened = len(members)
        fits = sizes[:opened] + (~rows[:opened, tree.links]).sum(axis=1) < nr
        for j in np.flatnonzero(fits).tolist():
            if _stays_forest(edges, rows[j], components[j], tree.links):
                break
        else:
            j = opened
            members.append([])
            components.append(np.arange(nr))
        rows[j, tree.links] = True
        sizes[j] = int(rows[j].sum())
        components[j] = _components(nr, edges, rows[j])
        members[j].append(tree)
    masks = list(rows[: len(members)])
    served = [sum(len(tree.sources) for tree in held) for held in members]
    ranked = sorted(range(len(masks)), key=lambda j: -served[j])  # stable: ties keep order
    chosen = [ranked[j % len(ranked)] for j in range(count)] if ranked else []
    return TreeLayers([masks[j].copy() for j in chosen], [members[j] for j in chosen], len(masks))


def plan_spain_layers(
    nr: int, edges: np.ndarray, count: int, rng: np.random.Generator, spec: RoutingSpec
) -> TreeLayers:
    """SPAIN: per-destination trees, merged in random order into loop-free layers."""
    index = _link_index(edges)
    trees = [
        tree
        for destination in range(nr)
        for tree in spain_destination_trees(nr, edges, index, destination, rng)
    ]
    order = rng.permutation(len(trees))
    return merge_into_forests(nr, edges, [trees[t] for t in order], count)


def spain_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    link_keys: np.ndarray,
) -> list[np.ndarray]:
    return plan_spain_layers(nr, edges, count, rng, spec).masks


def plan_past_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    random_root: bool | None = None,
) -> TreeLayers:
    """PAST: one BFS spanning tree per destination switch, destinations in random order.

    With `random_root` (default `spec.past_random_root`) the tree grows from a random switch
    instead of the destination, PAST's non-minimal variant, which spreads the trees of nearby
    destinations over different links. Two spanning trees share a layer only if they are
    equal, so the trees that fit the layers are those of the first destinations drawn.
    """
    random_root = spec.past_random_root if random_root is None else random_root
    around, index = _neighbours(nr, edges), _link_index(edges)
    trees = []
    for destination in rng.permutation(nr).tolist():
        root = int(rng.integers(nr)) if random_root else destination
        links = shortest_path_tree(nr, around, index, root, rng)
        sources = np.array([s for s in range(nr) if s != destination], dtype=np.int64)
        trees.append(DestinationTree(destination, np.sort(links), sources))
    return merge_into_forests(nr, edges, trees, count)


def past_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    link_keys: np.ndarray,
) -> list[np.ndarray]:
    return plan_past_layers(nr, edges, count, rng, spec).masks


@dataclass(frozen=True)
class PathLayers:
    masks: list[np.ndarray]
    paths: dict[tuple[int, int], list[list[int]]]  # pair -> its k shortest paths, shortest first


def plan_kshortest_layers(
    nr: int, edges: np.ndarray, count: int, rng: np.random.Generator, spec: RoutingSpec
) -> PathLayers:
    """Yen's k shortest paths (k = count) for sampled pairs; path j of a pair joins layer j.

    Switches enter the graph in random order, so equal-length paths are ranked by the seed
    rather than by switch numbering. A pair with fewer than k simple paths leaves the last
    layers without a contribution from it.
    """
    graph = nx.Graph()
    graph.add_nodes_from(int(n) for n in rng.permutation(nr))
    shuffled = edges[rng.permutation(len(edges))]
    graph.add_edges_from((int(u), int(v)) for u, v in shuffled)
    all_pairs = [(s, t) for s in range(nr) for t in range(s + 1, nr)]
    wanted = spec.paths_per_layer or KSHORTEST_PAIRS_PER_SWITCH * nr
    chosen = rng.choice(len(all_pairs), size=min(wanted, len(all_pairs)), replace=False)
    index = _link_index(edges)
    masks = [np.zeros(len(edges), dtype=bool) for _ in range(count)]
    paths: dict[tuple[int, int], list[list[int]]] = {}
    for pair in sorted(int(p) for p in chosen):
        s, t = all_pairs[pair]
        if not nx.has_path(graph, s, t):
            continue
        ranked = list(itertools.islice(nx.shortest_simple_paths(graph, s, t), count))
        paths[(s, t)] = ranked
        for mask, path in zip(masks, ranked, strict=False):
            mask[[_link_of(index, a, b) for a, b in itertools.pairwise(path)]] = True
    return PathLayers(masks, paths)


def kshortest_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    link_keys: np.ndarray,
) -> list[np.ndarray]:
    return plan_kshortest_layers(nr, edges, count, rng, spec).masks
