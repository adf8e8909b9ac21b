"""FatPaths' path-diversity measures: c_l, path interference, TNL, collisions.

Expected values are derived by hand in the comments; the exact programmes are checked against
exhaustive search, and the greedy count against the exact one.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path as FsPath

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis.disjoint import (
    Graph,
    enumerate_paths,
    greedy_disjoint_in_graph,
    max_disjoint_paths,
    min_length_bounded_cut,
)
from fatpaths_cfg.analysis.path_metrics import (
    DisjointCount,
    MetricsSettings,
    RoutedNetwork,
    cdp_metrics,
    collision_histogram,
    count_disjoint,
    interference,
    path_metrics,
    total_network_load,
)
from fatpaths_cfg.analysis.path_sampling import links_of
from fatpaths_cfg.cli.analyze import add_commands
from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.compiled.paths import Path
from fatpaths_cfg.topologies import generate

INVENTORIES = FsPath(__file__).resolve().parent.parent / "inventories"


def cycle(n: int) -> Graph:
    return Graph.from_edges(n, [(i, (i + 1) % n) for i in range(n)])


def complete(n: int) -> Graph:
    return Graph.from_edges(n, itertools.combinations(range(n), 2))


def greedy_trap() -> Graph:
    """s=0, t=5: the 3-hop path 0-1-4-5 takes the first link of 0-1-2-3-5 and the last of
    0-6-7-4-5 (both 4 hops), so greedy finds 1 path where 2 exist."""
    return Graph.from_edges(
        8, [(0, 1), (1, 2), (2, 3), (3, 5), (0, 6), (6, 7), (7, 4), (4, 5), (1, 4)]
    )


def minimal_next_hop(graph: Graph) -> np.ndarray:
    """One layer of minimal routing: the lowest-numbered neighbour one hop closer."""
    table = np.full((1, graph.nr, graph.nr), -1, dtype=np.int64)
    for u in range(graph.nr):
        for t in range(graph.nr):
            closer = [nb for nb in graph.neighbours[u] if graph.dist[nb, t] == graph.dist[u, t] - 1]
            if u != t and closer:
                table[0, u, t] = closer[0]
    return table


def network(graph: Graph) -> RoutedNetwork:
    return RoutedNetwork(graph, np.arange(graph.nr), minimal_next_hop(graph))


def pair_counts(net: RoutedNetwork, hops: int, cap: int = 10_000) -> list[DisjointCount]:
    """The three topology counts interference needs for a, b, c, d = 0, 1, 2, 3."""
    counts = [
        count_disjoint(net, "topology", [0, 2], targets, hops, exact=True, cap=cap)
        for targets in ([1], [3], [1, 3])
    ]
    assert all(c is not None for c in counts)
    return [c for c in counts if c is not None]


def exact_c(graph: Graph, a: list[int], b: list[int], hops: int) -> tuple[int, int, int]:
    paths = enumerate_paths(graph, a, b, hops, cap=100_000)
    assert paths is not None
    greedy = greedy_disjoint_in_graph(graph, a, b, hops)
    packing = max_disjoint_paths(paths)
    cut = min_length_bounded_cut(paths)
    assert packing is not None and cut is not None
    return greedy, packing, cut


def brute_force_packing(paths: list[Path]) -> int:
    best = 0

    def search(i: int, used: frozenset[tuple[int, int]], chosen: int) -> None:
        nonlocal best
        best = max(best, chosen)
        if i == len(paths) or chosen + len(paths) - i <= best:
            return
        links = links_of(paths[i])
        if not links & used:
            search(i + 1, used | links, chosen + 1)
        search(i + 1, used, chosen)

    search(0, frozenset(), 0)
    return best


def brute_force_cut(paths: list[Path]) -> int:
    links = sorted(set().union(*(links_of(p) for p in paths)))
    for size in range(len(links) + 1):
        for removed in itertools.combinations(links, size):
            if all(links_of(p) & set(removed) for p in paths):
                return size
    raise AssertionError("unreachable: removing every link meets every path")


@pytest.mark.parametrize("distance", [1, 2, 3, 4])
def test_cycle_has_one_path_until_the_way_round_fits(distance: int) -> None:
    # On C_8 a pair k hops apart has the k-hop arc and the (8-k)-hop arc, link-disjoint.
    graph = cycle(8)
    for hops in range(1, 9):
        expected = 0 if hops < distance else 1 if hops < 8 - distance else 2
        assert exact_c(graph, [0], [distance], hops) == (expected, expected, expected)


def test_complete_graph_adjacent_pair_has_one_direct_and_n_minus_2_two_hop_paths() -> None:
    n = 6
    graph = complete(n)
    assert exact_c(graph, [0], [1], 1) == (1, 1, 1)
    # the direct link plus 0-x-1 through each of the n-2 other switches; degree caps it there
    assert exact_c(graph, [0], [1], 2) == (n - 1, n - 1, n - 1)
    assert exact_c(graph, [0], [1], 3) == (n - 1, n - 1, n - 1)


def test_complete_graph_interference() -> None:
    # a, b, c, d = 0, 1, 2, 3 in K_6. l=1: the four direct links serve both pairs, I = 2+2-4 = 0.
    # l=2: c({a,c},{b}) = n-1 (b's degree), likewise for d; c({a,c},{b,d}) = 2n-4 (the four
    # direct links and a-x-b, c-x-d for each of the n-4 other x; the links out of {a,c} other
    # than a-c number 2n-4), so I = 2(n-1) - (2n-4) = 2.
    n = 6
    net = network(complete(n))
    for hops, expected in ((1, 0), (2, 2)):
        counts = pair_counts(net, hops)
        assert interference(counts, lambda c: c.exact) == expected
        assert interference(counts, lambda c: c.greedy) == expected


def test_radix_invariant_figures_of_a_clique_match_the_paper_s_reasoning() -> None:
    # K_8, k'=7: c_1 = 1 < 3 and c_2 = 7 for every pair, so d' = 2 and CDP is 100% of k' in
    # mean and tail; every quadruple interferes by 2 (see above), 2/7 of k'. The paper's
    # clique row (k'=100) reads 100%, 100%, 2% = 2/100 for the same reason.
    result = path_metrics(
        network(complete(8)), MetricsSettings(pairs=40, quadruples=10, exact_samples=10)
    )
    assert result["radix_invariant"] == {
        "d_prime": 2,
        "cdp_mean": 1.0,
        "cdp_p1": 1.0,
        "pi_mean": round(2 / 7, 4),
        "pi_p99.9": round(2 / 7, 4),
        "pi_samples": 10,
    }


def test_interference_through_a_bridge() -> None:
    # a=0, c=2 hang off x=4; b=1, d=3 off y=5; one bridge x-y carries everything:
    # c({a,c},{b}) = c({a,c},{d}) = c({a,c},{b,d}) = 1, so I = 1 + 1 - 1 = 1.
    bridge = Graph.from_edges(6, [(0, 4), (2, 4), (4, 5), (5, 1), (5, 3)])
    counts = pair_counts(network(bridge), 3)
    assert [(c.greedy, c.exact, c.cut) for c in counts] == [(1, 1, 1)] * 3
    assert interference(counts, lambda c: c.exact) == 1
    # with a link a-b and c-d of their own the pairs do not interfere: 1 + 1 - 2 = 0
    apart = Graph.from_edges(4, [(0, 1), (2, 3)])
    counts = pair_counts(network(apart), 3)
    assert interference(counts, lambda c: c.exact) == 0


def test_slimfly_q5_every_pair_has_exactly_one_disjoint_path_within_two_hops() -> None:
    topo = generate("slimfly", {"q": 5}, seed=1)
    graph = Graph.from_edges(topo.num_switches, topo.edges)
    assert int(graph.dist.max()) == 2
    for s, t in itertools.combinations(range(graph.nr), 2):
        # Hoffman-Singleton: girth 5, so a second path of <= 2 hops would close a cycle of <= 4
        assert exact_c(graph, [s], [t], 2) == (1, 1, 1)
    for s, t in graph.edges.tolist()[:40]:
        # the same girth argument for a neighbour's 2- and 3-hop detours
        assert exact_c(graph, [s], [t], 3) == (1, 1, 1)


def test_greedy_is_a_lower_bound_and_the_gap_is_reported() -> None:
    graph = greedy_trap()
    assert exact_c(graph, [0], [5], 4) == (1, 2, 2)
    report = cdp_metrics(network(graph), "topology", [(0, 5)], [4], MetricsSettings())
    assert report["4"]["greedy"]["mean"] == 1 and report["4"]["exact"]["mean"] == 2
    assert report["4"]["gap"]["max_exact_minus_greedy"] == 1
    assert report["4"]["gap"]["samples_greedy_below_exact"] == 1


def test_length_bounded_cut_exceeds_the_disjoint_path_count_on_a_dragonfly() -> None:
    # The 4-hop paths between switch 0 of group 6 (s=24) and switch 0 of group 7 (t=28) of the
    # p=2 dragonfly. Through group 0 and through group 1 every path shares its first link, so
    # each gives one path and one cut link. The rest run over the global link 27-31 or around
    # it through group 8 (27-35-31); two of them always share 24-27, 31-28 or 27-31, so they
    # give one path, but no single link meets them all: 3 disjoint paths, and a cut of 4.
    paths = [
        (24, 2, 3, 28),
        (24, 6, 7, 28),
        (24, 27, 31, 28),
        (24, 2, 0, 3, 28),
        (24, 2, 1, 3, 28),
        (24, 6, 4, 7, 28),
        (24, 6, 5, 7, 28),
        (24, 25, 27, 31, 28),
        (24, 26, 27, 31, 28),
        (24, 27, 31, 29, 28),
        (24, 27, 31, 30, 28),
        (24, 27, 35, 31, 28),
    ]
    graph = Graph.from_edges(36, set().union(*(links_of(p) for p in paths)))
    found = enumerate_paths(graph, [24], [28], 4, cap=100)
    assert found is not None and set(found) == set(paths)
    assert brute_force_packing(paths) == max_disjoint_paths(paths) == 3
    assert brute_force_cut(paths) == min_length_bounded_cut(paths) == 4


@pytest.mark.parametrize(
    ("graph", "pairs", "hops"),
    [
        (greedy_trap(), [([0], [5]), ([0, 2], [5, 3])], 5),
        (complete(5), [([0], [1]), ([0, 2], [1, 3])], 3),
        (cycle(7), [([0], [3]), ([0, 1], [4])], 6),
        # Petersen graph: 3-regular, girth 5
        (
            Graph.from_edges(
                10,
                [(i, (i + 1) % 5) for i in range(5)]
                + [(i, i + 5) for i in range(5)]
                + [(5 + i, 5 + (i + 2) % 5) for i in range(5)],
            ),
            [([0], [1]), ([0], [7]), ([0, 2], [6, 8])],
            4,
        ),
    ],
)
def test_programmes_match_exhaustive_search(
    graph: Graph, pairs: list[tuple[list[int], list[int]]], hops: int
) -> None:
    for sources, targets in pairs:
        for bound in range(1, hops + 1):
            paths = enumerate_paths(graph, sources, targets, bound, cap=10_000)
            assert paths is not None
            exact = max_disjoint_paths(paths)
            assert exact == brute_force_packing(paths)
            assert min_length_bounded_cut(paths) == brute_force_cut(paths)
            assert greedy_disjoint_in_graph(graph, sources, targets, bound) <= exact


def test_path_cap_drops_the_exact_value_but_keeps_the_greedy_one() -> None:
    net = network(complete(6))
    capped = count_disjoint(net, "topology", [0], [1], 3, exact=True, cap=5)
    assert capped is not None and capped.exact is None and capped.cut is None and capped.greedy == 5


def test_a_routed_set_over_the_cap_drops_the_sample_instead_of_counting_zero() -> None:
    # on C_4 the opposite switches 0 and 2 have two shortest paths; neighbours have one
    net = network(cycle(4))
    assert count_disjoint(net, "minimal", [0], [2], 2, exact=True, cap=1) is None
    report = cdp_metrics(net, "minimal", [(0, 2), (0, 1)], [2], MetricsSettings(path_cap=1))
    assert report["2"]["samples"] == 1 and report["2"]["exact"]["mean"] == 1
    assert cdp_metrics(net, "minimal", [(0, 2)], [2], MetricsSettings())["2"]["exact"]["mean"] == 2


def test_total_network_load_of_a_cycle_and_a_clique() -> None:
    # C_6: 12 directed channels; from any switch the others are 1, 1, 2, 2, 3 hops away: d = 1.8
    tnl = total_network_load(network(cycle(6)), "minimal")
    assert tnl["directed_channels"] == 12 and tnl["mean_path_length"] == 1.8
    assert tnl["tnl_flows"] == pytest.approx(12 / 1.8, abs=1e-4)
    assert tnl["tnl_per_host"] == pytest.approx(12 / 1.8 / 6, abs=1e-4)
    assert total_network_load(network(cycle(6)), "layers") == tnl  # one minimal layer
    # K_5: 20 channels, every path one hop
    assert total_network_load(network(complete(5)), "minimal")["tnl_flows"] == 20.0


def test_collision_histogram_counts_flows_per_switch_pair() -> None:
    # hosts 0,1 on switch 0; 2,3 on 1; 4,5 on 2. Flows 0->2 and 1->3 both cross 0->1;
    # 2->4 (1->2), 3->0 (1->0), 4->1 (2->0); 5->5 never leaves its switch.
    host_switch = np.array([0, 0, 1, 1, 2, 2])
    result = collision_histogram(host_switch, [np.array([2, 3, 4, 0, 1, 5])])
    assert result["pairs_by_flow_count"] == {"1": 3, "2": 1}
    assert result["share_pairs_colliding"] == 0.25
    assert result["share_pairs_over_3"] == 0.0
    assert result["flows_per_pair"] is not None and result["flows_per_pair"]["max"] == 2


def test_metrics_are_deterministic_in_the_seed() -> None:
    topo = generate("jellyfish", {"nr": 20, "k": 4}, seed=3)
    graph = Graph.from_edges(topo.num_switches, topo.edges)
    # three hosts a switch, so that permutations can collide
    net = RoutedNetwork(graph, np.repeat(np.arange(graph.nr), 3), minimal_next_hop(graph))
    settings = MetricsSettings(pairs=30, quadruples=10, exact_samples=5, permutations=3, seed=7)
    first = path_metrics(net, settings)
    assert json.dumps(first) == json.dumps(path_metrics(net, settings))
    other = path_metrics(
        net, MetricsSettings(pairs=30, quadruples=10, exact_samples=5, permutations=3, seed=8)
    )
    assert first["collisions"] != other["collisions"]


def test_compiled_slimfly_layers_offer_a_subset_of_the_topology_paths(tmp_path: FsPath) -> None:
    out = tmp_path / "sf"
    api.build_output(api.compile_fabric(INVENTORIES / "slimfly-q5.yaml")).commit(out)
    compiled = load_compiled(out)
    fabric = compiled.fabric
    net = RoutedNetwork(
        Graph(fabric.nr, fabric.edges.astype(np.int64)),
        np.array([h.switch for h in fabric.hosts]),
        compiled.next_hop,
    )
    result = path_metrics(net, MetricsSettings(pairs=60, quadruples=20, exact_samples=10))
    assert result["diameter"] == 2 and result["lengths"] == [2, 3, 4]
    cdp = result["cdp"]
    for hops in ("2", "3", "4"):
        assert cdp["minimal"][hops]["exact"]["max"] == 1  # one shortest path per pair
        # a routed path is a path of the graph, so it cannot beat the topology's greedy-or-better
        assert cdp["layers"][hops]["exact"]["mean"] <= cdp["topology"][hops]["exact"]["mean"]
    assert cdp["layers"]["3"]["exact"]["mean"] > 1.5  # the layers add almost-minimal paths
    tnl = result["tnl"]
    assert tnl["layers"]["mean_path_length"] > tnl["minimal"]["mean_path_length"]


def test_analyze_prints_one_line_per_metric(tmp_path: FsPath) -> None:
    out = tmp_path / "hand-6"
    api.build_output(api.compile_fabric(INVENTORIES / "hand-6.yaml")).commit(out)
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    result = CliRunner().invoke(
        app, ["analyze", str(out), "--pairs", "30", "--traffic", "permutation"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for layer_set in ("topology", "minimal", "layers"):
        assert any(line.startswith(f"c_l {layer_set} l=") for line in lines), result.output
        assert any(line.startswith(f"interference {layer_set} l=") for line in lines)
    assert any(line.startswith("TNL layers:") for line in lines)
    assert any(line.startswith("collisions:") for line in lines)
    data = json.loads((out / "analysis" / "analysis.json").read_text())
    assert set(data["path_metrics"]["cdp"]) == {"topology", "minimal", "layers"}
    assert (out / "analysis" / "path_metrics.png").read_bytes()[:4] == b"\x89PNG"
