"""Baseline layer algorithms FatPaths is compared against: SPAIN, PAST and k-shortest paths.

Each returns exactly `count` link masks, like every sparse-layer builder. The `plan_*` functions
also return the trees or paths the layers were made of, for tests and reports.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from fatpaths_cfg.inventory.schema import RoutingSpec

# SPAIN: trees per destination. The second tree prefers links the first did not use, so each
# destination gets two partly disjoint path sets, the point of SPAIN's multipath VLANs.
SPAIN_TREES_PER_DESTINATION = 2
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


def shortest_path_tree(nr: int, around: list[list[int]], index: dict[tuple[int, int], int],
                       root: int, rng: np.random.Generator,
                       reuse: np.ndarray | None = None) -> np.ndarray:
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
class TreeLayers:
    masks: list[np.ndarray]
    trees: list[list[np.ndarray]]   # per layer, the link ids of each tree packed into it


def _masks_from_trees(count: int, n_links: int, trees: list[list[np.ndarray]]
                      ) -> list[np.ndarray]:
    masks = [np.zeros(n_links, dtype=bool) for _ in range(count)]
    for mask, packed in zip(masks, trees, strict=True):
        for tree in packed:
            mask[tree] = True
    return masks


def plan_spain_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                      spec: RoutingSpec) -> TreeLayers:
    """SPAIN: per-destination path sets (trees), packed greedily into `count` VLANs.

    A tree goes to the layer it adds the fewest new links to, as SPAIN packs path sets into as
    few VLANs as it can; with a fixed number of layers each layer takes an equal share of
    trees, otherwise the first layer would absorb them all.
    """
    around, index = _neighbours(nr, edges), _link_index(edges)
    trees = []
    for destination in range(nr):
        reuse = np.zeros(len(edges), dtype=np.int64)
        for _ in range(SPAIN_TREES_PER_DESTINATION):
            tree = shortest_path_tree(nr, around, index, destination, rng, reuse)
            reuse[tree] += 1
            trees.append(tree)
    capacity = -(-len(trees) // max(count, 1))
    masks = [np.zeros(len(edges), dtype=bool) for _ in range(count)]
    packed: list[list[np.ndarray]] = [[] for _ in range(count)]
    for t in rng.permutation(len(trees)):
        tree = trees[t]
        open_layers = [j for j in range(count) if len(packed[j]) < capacity]
        added = [int((~masks[j][tree]).sum()) for j in open_layers]
        best = open_layers[int(np.argmin(added))]
        masks[best][tree] = True
        packed[best].append(tree)
    return TreeLayers(masks, packed)


def spain_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                 spec: RoutingSpec) -> list[np.ndarray]:
    return plan_spain_layers(nr, edges, count, rng, spec).masks


def plan_past_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                     spec: RoutingSpec, random_root: bool = False) -> TreeLayers:
    """PAST: one BFS spanning tree per destination switch, dealt round-robin to the layers.

    With `random_root` the tree grows from a random switch instead (PAST's randomised
    variant), which spreads trees of nearby destinations over different links.
    """
    around, index = _neighbours(nr, edges), _link_index(edges)
    packed: list[list[np.ndarray]] = [[] for _ in range(count)]
    for slot, destination in enumerate(rng.permutation(nr)):
        root = int(rng.integers(nr)) if random_root else int(destination)
        packed[slot % count].append(shortest_path_tree(nr, around, index, root, rng))
    return TreeLayers(_masks_from_trees(count, len(edges), packed), packed)


def past_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                spec: RoutingSpec) -> list[np.ndarray]:
    return plan_past_layers(nr, edges, count, rng, spec).masks


@dataclass(frozen=True)
class PathLayers:
    masks: list[np.ndarray]
    paths: dict[tuple[int, int], list[list[int]]]   # pair -> its k shortest paths, shortest first


def plan_kshortest_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                          spec: RoutingSpec) -> PathLayers:
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


def kshortest_layers(nr: int, edges: np.ndarray, count: int, rng: np.random.Generator,
                     spec: RoutingSpec) -> list[np.ndarray]:
    return plan_kshortest_layers(nr, edges, count, rng, spec).masks
