"""FatPaths' own path-diversity measures [FatPaths §IV-A, §IV-B], per layer set.

- c_l(A, B) for l = D, D+1, D+2 on sampled switch pairs (disjoint.py says what is exact);
- path interference I^l_{ac,bd} = c_l({a,c},{b}) + c_l({a,c},{d}) - c_l({a,c},{b,d}) on
  sampled quadruples of distinct switches;
- total network load TNL = (directed channels) / d, d the mean path length the routing uses;
- the collision histogram: over random permutations of hosts, how many flows share each
  ordered switch pair.

A layer set is the set of paths a routing may use: `topology` is every path of the graph
(the supply), `minimal` every shortest path (minimal routing with ECMP), `layers` the one path
per layer the compiled forwarding tables give. Sampling is seeded; the same input and seed
give the same figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.disjoint import (
    Graph,
    enumerate_paths,
    greedy_disjoint_in_graph,
    max_disjoint_paths,
    min_length_bounded_cut,
)
from fatpaths_cfg.analysis.path_sampling import greedy_disjoint, sample_pairs
from fatpaths_cfg.compiled.paths import Path, walk
from fatpaths_cfg.support.stable_hash import stream
from fatpaths_cfg.traffic_patterns import derangement

LAYER_SETS = ("topology", "minimal", "layers")
# The named random streams of the metrics (see `fatpaths_cfg.support.stable_hash.stream`).
METRICS_PAIRS = "analyze.metrics.pairs"
METRICS_QUADRUPLES = "analyze.metrics.quadruples"
METRICS_COLLISIONS = "analyze.metrics.collision-permutations"


@dataclass(frozen=True)
class MetricsSettings:
    pairs: int = 200
    quadruples: int = 100
    # The exact topology programmes enumerate every path of at most D+2 hops, so they run on
    # the first few samples only and give up on a sample with more candidate paths than the cap.
    exact_samples: int = 20
    path_cap: int = 20_000
    permutations: int = 20
    seed: int = 1


@dataclass(frozen=True)
class DisjointCount:
    greedy: int
    exact: int | None  # None: outside the exact sample, over the path cap or out of time
    cut: int | None  # the length-bounded cut; computed for the topology only


@dataclass(frozen=True)
class RoutedNetwork:
    """What the metrics are computed on: the switch graph, where hosts sit, the layers."""

    graph: Graph
    host_switch: np.ndarray  # switch index of every host
    next_hop: np.ndarray  # (layers, Nr, Nr): next switch towards a destination, < 0 if none

    @property
    def host_switches(self) -> np.ndarray:
        return np.unique(self.host_switch)

    @property
    def diameter(self) -> int:
        s = self.host_switches
        return int(self.graph.dist[np.ix_(s, s)].max())


def routed_paths(
    net: RoutedNetwork,
    layer_set: str,
    sources: Sequence[int],
    targets: Sequence[int],
    max_hops: int,
    cap: int,
) -> list[Path] | None:
    """The candidate A-B paths of at most `max_hops` hops a layer set offers; None past `cap`."""
    if layer_set not in LAYER_SETS:
        raise ValueError(f"unknown layer set {layer_set!r} (one of {', '.join(LAYER_SETS)})")
    if layer_set == "topology":
        return enumerate_paths(net.graph, sources, targets, max_hops, cap)
    paths: set[Path] = set()
    for a in sources:
        for b in targets:
            found = (
                _shortest_paths(net, a, b, max_hops, cap)
                if layer_set == "minimal"
                else _layer_paths(net, a, b, max_hops)
            )
            if found is None:
                return None
            paths.update(found)
    return sorted(paths, key=lambda p: (len(p), p)) if len(paths) <= cap else None


def _shortest_paths(
    net: RoutedNetwork, a: int, b: int, max_hops: int, cap: int
) -> list[Path] | None:
    hops = int(net.graph.dist[a, b])
    return enumerate_paths(net.graph, [a], [b], hops, cap) if hops <= max_hops else []


def _layer_paths(net: RoutedNetwork, a: int, b: int, max_hops: int) -> list[Path]:
    found = (walk(net.next_hop[layer], a, b) for layer in range(net.next_hop.shape[0]))
    return [p for p in found if p is not None and len(p) - 1 <= max_hops]


def count_disjoint(
    net: RoutedNetwork,
    layer_set: str,
    sources: Sequence[int],
    targets: Sequence[int],
    max_hops: int,
    exact: bool,
    cap: int,
) -> DisjointCount | None:
    """c_l(sources, targets) in a layer set: greedy always, exact (and cut) when asked.

    None for a routed set with more candidate paths than `cap` (many equal-cost shortest
    paths): the sample is dropped rather than counted as zero.
    """
    if layer_set == "topology":
        greedy = greedy_disjoint_in_graph(net.graph, sources, targets, max_hops)
        if not exact:
            return DisjointCount(greedy, None, None)
        paths = routed_paths(net, layer_set, sources, targets, max_hops, cap)
        if paths is None:
            return DisjointCount(greedy, None, None)
        return DisjointCount(greedy, max_disjoint_paths(paths), min_length_bounded_cut(paths))
    paths = routed_paths(net, layer_set, sources, targets, max_hops, cap)
    if paths is None:
        return None
    # A routed set has at most a few paths per pair, so its exact value is always affordable.
    return DisjointCount(greedy_disjoint(paths), max_disjoint_paths(paths), None)


def interference(
    counts: Sequence[DisjointCount], value: Callable[[DisjointCount], int | None]
) -> int | None:
    """I = c({a,c},{b}) + c({a,c},{d}) - c({a,c},{b,d}) from the three counts, in that order."""
    to_b, to_d, to_both = (value(c) for c in counts)
    if to_b is None or to_d is None or to_both is None:
        return None
    return to_b + to_d - to_both


def sample_quadruples(
    switches: np.ndarray, count: int, rng: np.random.Generator
) -> list[tuple[int, int, int, int]]:
    """(a, b, c, d): four distinct switches, a talks to b and c to d."""
    if len(switches) < 4:
        return []
    quads = []
    for _ in range(count):
        a, b, c, d = (int(x) for x in rng.choice(switches, size=4, replace=False))
        quads.append((a, b, c, d))
    return quads


def distribution(values: Sequence[int | float]) -> dict[str, float] | None:
    """Mean and both tails; percentiles are observed values (inverted CDF), not interpolated."""
    if not values:
        return None
    arr = np.asarray(values, dtype=float)

    def pct(q: float) -> float:
        return float(np.percentile(arr, q, method="inverted_cdf"))

    return {
        "mean": round(float(arr.mean()), 4),
        "min": float(arr.min()),
        "p1": pct(1),
        "p50": pct(50),
        "p99": pct(99),
        "p99.9": pct(99.9),
        "max": float(arr.max()),
    }


def _gap_summary(counts: Sequence[DisjointCount]) -> dict[str, Any]:
    exact = [c for c in counts if c.exact is not None]
    gaps = [c.exact - c.greedy for c in exact if c.exact is not None]
    cuts = [c.cut - c.exact for c in exact if c.cut is not None and c.exact is not None]
    return {
        "samples": len(exact),
        "mean_exact_minus_greedy": round(float(np.mean(gaps)), 4) if gaps else None,
        "max_exact_minus_greedy": max(gaps) if gaps else None,
        "samples_greedy_below_exact": sum(g > 0 for g in gaps),
        "max_cut_minus_exact": max(cuts) if cuts else None,
    }


def cdp_metrics(
    net: RoutedNetwork,
    layer_set: str,
    pairs: Sequence[tuple[int, int]],
    lengths: Sequence[int],
    settings: MetricsSettings,
) -> dict[str, Any]:
    """c_l over the sampled pairs, per l: greedy at scale, exact on a sample, and the gap."""
    result: dict[str, Any] = {}
    for hops in lengths:
        found = [
            count_disjoint(
                net,
                layer_set,
                [a],
                [b],
                hops,
                exact=layer_set != "topology" or i < settings.exact_samples,
                cap=settings.path_cap,
            )
            for i, (a, b) in enumerate(pairs)
        ]
        counts = [c for c in found if c is not None]
        result[str(hops)] = {
            "samples": len(counts),
            "greedy": distribution([c.greedy for c in counts]),
            "exact": distribution([c.exact for c in counts if c.exact is not None]),
            "gap": _gap_summary(counts),
        }
    return result


def interference_metrics(
    net: RoutedNetwork,
    layer_set: str,
    quads: Sequence[tuple[int, int, int, int]],
    lengths: Sequence[int],
    settings: MetricsSettings,
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for hops in lengths:
        greedy: list[int] = []
        exact: list[int] = []
        for i, (a, b, c, d) in enumerate(quads):
            want_exact = layer_set != "topology" or i < settings.exact_samples
            found = [
                count_disjoint(net, layer_set, [a, c], targets, hops, want_exact, settings.path_cap)
                for targets in ([b], [d], [b, d])
            ]
            counts = [x for x in found if x is not None]
            if len(counts) < len(found):
                continue
            greedy_value = interference(counts, lambda x: x.greedy)
            exact_value = interference(counts, lambda x: x.exact)
            if greedy_value is not None:
                greedy.append(greedy_value)
            if exact_value is not None:
                exact.append(exact_value)
        result[str(hops)] = {
            "samples": len(greedy),
            "greedy": distribution(greedy),
            "exact": distribution(exact),
            "exact_samples": len(exact),
        }
    return result


def total_network_load(net: RoutedNetwork, layer_set: str) -> dict[str, Any]:
    """TNL = directed channels / d, over every ordered pair of host-bearing switches.

    k'Nr in the paper is the count of directed channels of a k'-regular graph; 2|E| is the same
    count for any graph. `layers` averages over the layers as if flowlets used them evenly.
    """
    s = net.host_switches
    if layer_set == "layers":
        lengths: list[int] = []
        unreachable = 0
        for layer in range(net.next_hop.shape[0]):
            for a in s.tolist():
                for b in s.tolist():
                    if a == b:
                        continue
                    path = walk(net.next_hop[layer], a, b)
                    if path is None:
                        unreachable += 1
                    else:
                        lengths.append(len(path) - 1)
        mean_length = float(np.mean(lengths))
    else:
        block = net.graph.dist[np.ix_(s, s)]
        mean_length = float(block[~np.eye(len(s), dtype=bool)].mean())
        unreachable = 0
    channels = 2 * len(net.graph.edges)
    tnl = channels / mean_length
    return {
        "directed_channels": channels,
        "mean_path_length": round(mean_length, 4),
        "tnl_flows": round(tnl, 4),
        "tnl_per_host": round(tnl / len(net.host_switch), 4),
        "unreachable_pairs": unreachable,
    }


def collision_histogram(
    host_switch: np.ndarray, destinations: Sequence[np.ndarray]
) -> dict[str, Any]:
    """How many flows share an ordered switch pair, over the given host permutations.

    Flows between hosts of one switch never enter the network and are left out.
    """
    per_pair: Counter[int] = Counter()
    for perm in destinations:
        src = host_switch
        dst = host_switch[perm]
        crossing = src != dst
        pairs = Counter(zip(src[crossing].tolist(), dst[crossing].tolist(), strict=True))
        per_pair.update(pairs.values())
    pairs_total = sum(per_pair.values())
    flows = [m for m, n in per_pair.items() for _ in range(n)]
    return {
        "permutations": len(destinations),
        "pairs_by_flow_count": {str(m): per_pair[m] for m in sorted(per_pair)},
        "share_pairs_colliding": round(
            sum(n for m, n in per_pair.items() if m >= 2) / pairs_total, 4
        )
        if pairs_total
        else 0.0,
        "share_pairs_over_3": round(sum(n for m, n in per_pair.items() if m > 3) / pairs_total, 4)
        if pairs_total
        else 0.0,
        "flows_per_pair": distribution(flows),
    }


def path_metrics(net: RoutedNetwork, settings: MetricsSettings) -> dict[str, Any]:
    """Every measure for every layer set, l = D..D+2; the JSON `analyze` writes."""
    # One stream per choice, so --pairs changes the pairs and nothing else.
    seed = settings.seed
    switches = net.host_switches
    sampled = sample_pairs(switches, settings.pairs, stream(seed, METRICS_PAIRS))
    pairs = [(a, b) for a, b in sampled.tolist()]
    quads = sample_quadruples(switches, settings.quadruples, stream(seed, METRICS_QUADRUPLES))
    collisions = stream(seed, METRICS_COLLISIONS)
    perms = [derangement(len(net.host_switch), collisions) for _ in range(settings.permutations)]
    diameter = net.diameter
    lengths = [diameter, diameter + 1, diameter + 2]
    radix = 2 * len(net.graph.edges) / net.graph.nr
    cdp = {ls: cdp_metrics(net, ls, pairs, lengths, settings) for ls in LAYER_SETS}
    pi = {ls: interference_metrics(net, ls, quads, lengths, settings) for ls in LAYER_SETS}
    return {
        "seed": settings.seed,
        "diameter": diameter,
        "lengths": lengths,
        "pairs_sampled": len(pairs),
        "quadruples_sampled": len(quads),
        "exact_samples": settings.exact_samples,
        "path_cap": settings.path_cap,
        "radix": round(radix, 4),
        "cdp": cdp,
        "interference": pi,
        "tnl": {ls: total_network_load(net, ls) for ls in ("minimal", "layers")},
        "collisions": collision_histogram(net.host_switch, perms),
        "radix_invariant": radix_invariant(cdp["topology"], pi["topology"], radix),
    }


def radix_invariant(
    cdp: dict[str, Any], interference: dict[str, Any], radix: float
) -> dict[str, Any] | None:
    """The paper's Table IV columns: at the smallest l (d') whose 1% tail of c_l is >= 3,
    c_l and interference as shares of the radix k'.

    d' is chosen on the greedy counts, a lower bound, so the tail condition holds for the true
    values too. CDP is given for the greedy counts over all pairs; PI for the exact sample,
    whose 99.9% tail is its maximum unless the sample has 1000 or more quadruples.
    """
    chosen = [h for h, e in cdp.items() if e["greedy"] and e["greedy"]["p1"] >= 3]
    if not chosen or radix == 0:
        return None
    hops = min(chosen, key=int)
    greedy = cdp[hops]["greedy"]
    exact_pi = interference[hops]["exact"]
    return {
        "d_prime": int(hops),
        "cdp_mean": round(greedy["mean"] / radix, 4),
        "cdp_p1": round(greedy["p1"] / radix, 4),
        "pi_mean": round(exact_pi["mean"] / radix, 4) if exact_pi else None,
        "pi_p99.9": round(exact_pi["p99.9"] / radix, 4) if exact_pi else None,
        "pi_samples": interference[hops]["exact_samples"],
    }
