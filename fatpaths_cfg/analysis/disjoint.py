"""c_l(A, B): edge-disjoint paths of at most l hops between two switch sets [FatPaths §IV-B1].

Three numbers answer the question, and they are kept apart because only one is cheap:

- the greedy count (take a shortest remaining A-B path of at most l hops, delete its links,
  repeat) is a feasible packing, so a lower bound on the best one; it scales to any fabric;
- the exact packing is a 0/1 programme over every candidate path (one column per path, one
  row per link, at most one chosen path per link), solved with HiGHS;
- the length-bounded cut is the paper's literal definition (fewest links whose removal leaves
  no A-B path of at most l hops), a 0/1 covering programme over the same paths. It bounds the
  packing from above. For one pair and l <= 2 the two agree (such paths never share a link),
  but Menger's theorem does not hold for length-bounded paths: on the example dragonfly a pair
  has 3 disjoint paths of at most 4 hops and a cut of 4.

Candidate paths are enumerated, so the exact programmes run on small samples under a cap on
the number of paths; past the cap the caller gets None and reports the greedy bound alone.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from fatpaths_cfg.analysis.highs import column_lp, new_solver
from fatpaths_cfg.analysis.path_sampling import Link, greedy_disjoint, links_of
from fatpaths_cfg.compiled.paths import Path

UNREACHABLE = np.iinfo(np.int32).max // 2
# HiGHS proves these small programmes optimal in milliseconds; the limit only stops a
# pathological sample from stalling `analyze`, and such a result is reported as not exact.
ILP_TIME_LIMIT_S = 10.0


@dataclass(frozen=True)
class Graph:
    """An undirected switch graph: what c_l is defined on, independent of a compiled fabric."""

    nr: int
    edges: np.ndarray  # (E, 2) switch-index pairs

    @cached_property
    def neighbours(self) -> list[tuple[int, ...]]:
        table: list[list[int]] = [[] for _ in range(self.nr)]
        for u, v in self.edges.tolist():
            table[u].append(v)
            table[v].append(u)
        return [tuple(sorted(row)) for row in table]

    @cached_property
    def dist(self) -> np.ndarray:
        """Hop distances; UNREACHABLE where there is no path."""
        e = self.edges
        adjacency = sp.csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(self.nr, self.nr))
        hops = shortest_path(adjacency, directed=False, unweighted=True)
        hops[np.isinf(hops)] = UNREACHABLE
        return hops.astype(np.int64)

    @classmethod
    def from_edges(cls, nr: int, edges: Iterable[tuple[int, int]]) -> Graph:
        rows = sorted({(min(u, v), max(u, v)) for u, v in edges})
        return cls(nr, np.array(rows, dtype=np.int64).reshape(-1, 2))


def enumerate_paths(
    graph: Graph, sources: Collection[int], targets: Collection[int], max_hops: int, cap: int
) -> list[Path] | None:
    """Every simple A-B path of at most `max_hops` hops whose interior avoids A and B.

    Paths through a further member of A or B are left out: each contains a shorter A-B path on
    a subset of its links, so neither the packing nor the cut changes. None past `cap` paths.
    """
    ends = set(sources) | set(targets)
    target_set = set(targets)
    to_targets = graph.dist[:, sorted(target_set)].min(axis=1)
    paths: list[Path] = []
    stack: list[tuple[int, ...]] = [(s,) for s in sorted(sources, reverse=True)]
    while stack:
        path = stack.pop()
        node = path[-1]
        if node in target_set and len(path) > 1:
            paths.append(path)
            if len(paths) > cap:
                return None
            continue
        budget = max_hops - (len(path) - 1) - 1
        for nb in reversed(graph.neighbours[node]):
            # Prune a branch that cannot reach B in the hops left.
            if to_targets[nb] > budget or nb in path:
                continue
            if nb in ends and nb not in target_set:
                continue
            stack.append((*path, nb))
    return sorted(paths, key=lambda p: (len(p), p))


def greedy_disjoint_in_graph(
    graph: Graph, sources: Collection[int], targets: Collection[int], max_hops: int
) -> int:
    """Greedy lower bound on c_l: repeatedly route a shortest remaining path, delete its links."""
    removed: set[Link] = set()
    count = 0
    while (path := _bfs_path(graph, sources, set(targets), max_hops, removed)) is not None:
        removed |= links_of(path)
        count += 1
    return count


def _bfs_path(
    graph: Graph, sources: Collection[int], targets: set[int], max_hops: int, removed: set[Link]
) -> Path | None:
    parent: dict[int, int] = {s: -1 for s in sources}
    frontier = deque((s, 0) for s in sorted(sources))
    while frontier:
        node, hops = frontier.popleft()
        if hops == max_hops:
            continue
        for nb in graph.neighbours[node]:
            if nb in parent or (min(node, nb), max(node, nb)) in removed:
                continue
            parent[nb] = node
            if nb in targets:
                path = [nb]
                while parent[path[-1]] != -1:
                    path.append(parent[path[-1]])
                return tuple(reversed(path))
            frontier.append((nb, hops + 1))
    return None


def end_link_bound(paths: Sequence[Path]) -> int:
    """Distinct first links, or distinct last links, whichever is fewer.

    It bounds the packing from above (disjoint paths have distinct first and last links) and
    the cut too (removing those links meets every path). So when a greedy packing reaches it,
    packing and cut both equal it and no programme needs solving.
    """
    first = {(min(p[0], p[1]), max(p[0], p[1])) for p in paths}
    last = {(min(p[-2], p[-1]), max(p[-2], p[-1])) for p in paths}
    return min(len(first), len(last))


def max_disjoint_paths(paths: Sequence[Path]) -> int | None:
    """Exact: the most pairwise link-disjoint paths among `paths` (0/1 packing, HiGHS).

    None when HiGHS did not prove optimality within the time limit.
    """
    unique = sorted(set(paths), key=lambda p: (len(p), p))
    if not unique:
        return 0
    if greedy_disjoint(unique) == end_link_bound(unique):
        return end_link_bound(unique)
    incidence = _incidence(unique)  # links x paths
    return _solve_binary(
        incidence, np.ones(len(unique)), row_lower=None, row_upper=1.0, maximise=True
    )


def min_length_bounded_cut(paths: Sequence[Path]) -> int | None:
    """Exact: fewest links that meet every path in `paths` (0/1 covering, HiGHS).

    With `paths` = every A-B path of at most l hops this is the paper's definition of c_l.
    """
    unique = sorted(set(paths), key=lambda p: (len(p), p))
    if not unique:
        return 0
    if greedy_disjoint(unique) == end_link_bound(unique):
        return end_link_bound(unique)
    incidence = _incidence(unique).T.tocsc()  # paths x links
    return _solve_binary(
        incidence, np.ones(incidence.shape[1]), row_lower=1.0, row_upper=None, maximise=False
    )


def _incidence(paths: Sequence[Path]) -> sp.csc_matrix:
    index: dict[Link, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for column, path in enumerate(paths):
        for link in sorted(links_of(path)):
            rows.append(index.setdefault(link, len(index)))
            cols.append(column)
    return sp.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(index), len(paths)))


def _solve_binary(
    matrix: sp.csc_matrix,
    cost: np.ndarray,
    row_lower: float | None,
    row_upper: float | None,
    maximise: bool,
) -> int | None:
    n_rows, n_cols = matrix.shape
    lp = column_lp(
        matrix,
        cost,
        (np.zeros(n_cols), np.ones(n_cols)),
        (
            np.full(n_rows, -np.inf if row_lower is None else row_lower),
            np.full(n_rows, np.inf if row_upper is None else row_upper),
        ),
        maximise=maximise,
    )
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_cols
    solver = new_solver()
    solver.setOptionValue("time_limit", ILP_TIME_LIMIT_S)
    solver.passModel(lp)
    solver.run()
    if solver.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return round(float(solver.getInfo().objective_function_value))
