"""Closed forms and invariants of docs/topologies.md for every topology generator."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Mapping

import networkx as nx
import numpy as np
import pytest

from fatpaths_cfg.topologies import (
    KINDS,
    GeneratedTopology,
    ParameterSpec,
    TopologyParameterError,
    generate,
)
from fatpaths_cfg.topologies.base import SWITCH_NAME_PATTERN
from fatpaths_cfg.topologies.galois import galois_field, prime_power

SLIMFLY_DELTA = {3: -1, 4: 0, 5: 1, 7: -1, 8: 0, 9: 1, 11: -1, 13: 1, 19: -1, 37: 1}


def graph(topo: GeneratedTopology) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(topo.num_switches))
    g.add_edges_from(topo.edges)
    return g


def host_switch_diameter(topo: GeneratedTopology) -> int:
    """Largest distance between two switches that hold hosts (what host traffic sees)."""
    g = graph(topo)
    with_hosts = [i for i, p in enumerate(topo.hosts_per_switch) if p > 0]
    worst = 0
    for s in with_hosts:
        dist = nx.single_source_shortest_path_length(g, s)
        worst = max(worst, max(dist[t] for t in with_hosts))
    return worst


def assert_well_formed(topo: GeneratedTopology) -> None:
    n = topo.num_switches
    assert len(topo.switch_roles) == n
    assert len(topo.hosts_per_switch) == n
    assert len(set(topo.switch_names)) == n
    assert all(SWITCH_NAME_PATTERN.match(name) for name in topo.switch_names)
    assert all(type(a) is int and type(b) is int for a, b in topo.edges)
    assert all(0 <= a < b < n for a, b in topo.edges)
    assert topo.edges == sorted(set(topo.edges))
    assert set(topo.params) == {spec.name for spec in KINDS[topo.kind]}


SAMPLES: list[tuple[str, dict[str, int | float]]] = [
    ("slimfly", {"q": 5}),
    ("dragonfly", {"p": 2}),
    ("jellyfish", {"nr": 30, "k": 5}),
    ("xpander", {"k": 5, "l": 4}),
    ("hyperx", {"L": 2, "S": 3}),
    ("fattree", {"k": 4}),
    ("clique", {"k": 4}),
    ("mlfm", {"h": 3}),
    ("oft", {"k": 3}),
    ("clos", {"n": 4, "r": 6}),
]


def test_every_kind_has_a_sample_and_specs() -> None:
    assert {kind for kind, _ in SAMPLES} == set(KINDS)
    for specs in KINDS.values():
        for spec in specs:
            assert isinstance(spec, ParameterSpec)
            assert spec.kind in (int, float)
            assert not (spec.required and spec.default is not None)


@pytest.mark.parametrize(("kind", "params"), SAMPLES)
def test_well_formed_connected_and_deterministic(kind: str, params: dict[str, int]) -> None:
    topo = generate(kind, params, seed=7)
    assert topo.kind == kind
    assert_well_formed(topo)
    assert nx.is_connected(graph(topo))
    assert generate(kind, params, seed=7) == topo


@pytest.mark.parametrize(("kind", "params"), SAMPLES)
def test_no_global_random_state(kind: str, params: dict[str, int]) -> None:
    np.random.seed(1)
    random.seed(1)
    np_state = np.random.get_state()[1].copy()  # type: ignore[index]
    py_state = random.getstate()
    generate(kind, params, seed=3)
    assert np.array_equal(np.random.get_state()[1], np_state)  # type: ignore[index]
    assert random.getstate() == py_state


# --- Galois fields -------------------------------------------------------------------------


@pytest.mark.parametrize("q", [2, 3, 4, 5, 8, 9, 16, 25, 27, 49])
def test_galois_field_axioms(q: int) -> None:
    field = galois_field(q)
    add, mul = field.add_table, field.mul_table
    elems = np.arange(q)
    assert np.array_equal(add[0], elems) and np.array_equal(mul[1], elems)
    assert np.array_equal(add, add.T) and np.array_equal(mul, mul.T)
    assert np.all(add[elems, field.neg] == 0)
    for a in range(1, q):
        assert sorted(mul[a, 1:].tolist()) == list(range(1, q))  # no zero divisors
        # Distributivity a*(b+c) == a*b + a*c.
        assert np.array_equal(mul[a][add], add[mul[a][:, None], mul[a][None, :]])
    for a, b, c in itertools.product(range(q), repeat=3) if q <= 9 else []:
        assert add[add[a, b], c] == add[a, add[b, c]]
        assert mul[mul[a, b], c] == mul[a, mul[b, c]]
    # xi is primitive: its powers run through every non-zero element.
    assert sorted(field.exp_table.tolist()) == list(range(1, q))
    assert field.power(q - 1) == 1


def test_prime_power() -> None:
    assert prime_power(27) == (3, 3)
    assert prime_power(1) is None
    assert prime_power(6) is None
    assert prime_power(13) == (13, 1)


# --- Slim Fly ------------------------------------------------------------------------------


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 11, 13])
def test_slimfly_closed_forms(q: int) -> None:
    topo = generate("slimfly", {"q": q}, seed=0)
    delta = SLIMFLY_DELTA[q]
    k_net = (3 * q - delta) // 2
    p = math.ceil(k_net / 2)
    assert topo.num_switches == 2 * q * q
    assert set(topo.degrees()) == {k_net}
    assert topo.params == {"q": q, "p": p}
    assert topo.num_hosts == 2 * q * q * p
    assert nx.diameter(graph(topo)) == 2


@pytest.mark.parametrize(
    ("q", "num_switches", "k_net"), [(5, 50, 7), (13, 338, 19), (19, 722, 29), (37, 2738, 55)]
)
def test_slimfly_examples(q: int, num_switches: int, k_net: int) -> None:
    start = time.perf_counter()
    topo = generate("slimfly", {"q": q}, seed=0)
    assert time.perf_counter() - start < 2.0
    assert topo.num_switches == num_switches
    assert set(topo.degrees()) == {k_net}
    assert topo.switch_names[0] == "sf-0-0-0"
    assert topo.switch_names[-1] == f"sf-1-{q - 1}-{q - 1}"


def test_slimfly_explicit_p() -> None:
    topo = generate("slimfly", {"q": 5, "p": 3}, seed=0)
    assert topo.params["p"] == 3
    assert topo.num_hosts == 150


def _single_path_share(topo: GeneratedTopology) -> float:
    """Share of switch pairs at distance 2 joined by exactly one shortest path (networkx)."""
    g = graph(topo)
    unique = total = 0
    for s, t in itertools.combinations(range(topo.num_switches), 2):
        if nx.shortest_path_length(g, s, t) == 2:
            total += 1
            unique += len(list(nx.all_shortest_paths(g, s, t))) == 1
    return unique / total


def _single_path_share_matrix(topo: GeneratedTopology) -> float:
    """Same share via A^2: for non-adjacent pairs it counts the 2-hop (shortest) paths."""
    adj = nx.to_numpy_array(graph(topo), nodelist=range(topo.num_switches), dtype=np.int64)
    paths = adj @ adj
    at_two = (adj == 0) & ~np.eye(topo.num_switches, dtype=bool) & (paths > 0)
    return float(np.mean(paths[at_two] == 1))


def test_slimfly_single_minimal_path_property() -> None:
    # Measured: q=5 (the Hoffman-Singleton graph, girth 5) has a unique 2-hop path for every
    # pair at distance 2; q=7 has 81.4%, q=8 90.4%, q=9 97.3%, q=13 98.1%.
    q5 = generate("slimfly", {"q": 5}, seed=0)
    assert _single_path_share(q5) == 1.0
    assert _single_path_share_matrix(q5) == 1.0
    assert _single_path_share_matrix(generate("slimfly", {"q": 7}, seed=0)) > 0.8
    assert _single_path_share_matrix(generate("slimfly", {"q": 9}, seed=0)) > 0.95
    assert _single_path_share_matrix(generate("slimfly", {"q": 13}, seed=0)) > 0.95


# --- Dragonfly -----------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2, 3])
def test_dragonfly_balanced(p: int) -> None:
    topo = generate("dragonfly", {"p": p}, seed=0)
    a, h = 2 * p, p
    groups = a * h + 1
    assert topo.params == {"p": p, "a": a, "h": h}
    assert topo.num_switches == a * groups
    assert set(topo.degrees()) == {a - 1 + h}
    assert topo.num_hosts == a * groups * p
    assert nx.diameter(graph(topo)) == 3
    links: dict[tuple[int, int], int] = {}
    for u, v in topo.edges:
        gu, gv = u // a, v // a
        if gu != gv:
            links[(gu, gv)] = links.get((gu, gv), 0) + 1
    assert links == {pair: 1 for pair in itertools.combinations(range(groups), 2)}


def test_dragonfly_example_and_unbalanced() -> None:
    topo = generate("dragonfly", {"p": 8}, seed=0)
    assert topo.num_switches == 2064
    assert set(topo.degrees()) == {23}
    unbalanced = generate("dragonfly", {"p": 1, "a": 3, "h": 2}, seed=0)
    assert unbalanced.num_switches == 3 * 7
    assert set(unbalanced.degrees()) == {4}
    assert unbalanced.switch_names[4] == "df-g1-s1"


# --- Fat tree ------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "over"), [(4, 1), (4, 2), (8, 1), (8, 2)])
def test_fattree(k: int, over: int) -> None:
    topo = generate("fattree", {"k": k, "oversubscription": over}, seed=0)
    roles = topo.switch_roles
    assert roles.count("edge") == k * k // 2
    assert roles.count("aggregation") == k * k // 2
    assert roles.count("core") == k * k // 4
    assert topo.num_switches == 5 * k * k // 4
    assert topo.num_hosts == over * k**3 // 4
    degrees = topo.degrees()
    for role, degree, hosts in zip(roles, degrees, topo.hosts_per_switch, strict=True):
        if role == "edge":
            assert (degree, hosts) == (k // 2, over * k // 2)
        else:
            assert (degree, hosts) == (k, 0)
    assert nx.diameter(graph(topo)) == 4
    assert "ft-core-0" in topo.switch_names


# --- Clique, HyperX ------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 8])
def test_clique(k: int) -> None:
    topo = generate("clique", {"k": k}, seed=0)
    assert topo.num_switches == k + 1
    assert set(topo.degrees()) == {k}
    assert topo.num_hosts == (k + 1) * k
    assert nx.diameter(graph(topo)) == 1


@pytest.mark.parametrize(("dims", "size"), [(1, 5), (2, 4), (3, 3), (2, 7)])
def test_hyperx(dims: int, size: int) -> None:
    topo = generate("hyperx", {"L": dims, "S": size}, seed=0)
    assert topo.num_switches == size**dims
    assert set(topo.degrees()) == {dims * (size - 1)}
    assert topo.params["p"] == size - 1
    assert nx.diameter(graph(topo)) == dims


# --- MLFM, OFT -----------------------------------------------------------------------------


@pytest.mark.parametrize("h", [2, 3, 4, 15])
def test_mlfm(h: int) -> None:
    topo = generate("mlfm", {"h": h}, seed=0)
    assert topo.num_switches == 3 * h * (h + 1) // 2
    assert topo.num_hosts == h**3 + h**2
    degrees = topo.degrees()
    for role, degree, hosts in zip(topo.switch_roles, degrees, topo.hosts_per_switch, strict=True):
        assert (degree, hosts) == ((h, h) if role == "local" else (2 * h, 0))
    if h <= 4:
        assert host_switch_diameter(topo) == 2
        # Two global switches of disjoint pairs are 4 hops apart; no hosts sit on them.
        # For h=2 every two pairs of {0,1,2} intersect, so only local-global paths reach 3.
        assert nx.diameter(graph(topo)) == (4 if h >= 3 else 3)
    if h == 15:
        assert (topo.num_switches, topo.num_hosts) == (360, 3600)


@pytest.mark.parametrize("k", [3, 4, 5, 12])
def test_oft(k: int) -> None:
    topo = generate("oft", {"k": k}, seed=0)
    rl = 1 + k * (k - 1)
    assert topo.num_switches == 3 * k * k - 3 * k + 3 == 3 * rl
    assert topo.num_hosts == 2 * k**3 - 2 * k**2 + 2 * k
    assert topo.switch_roles == ["l0"] * rl + ["l1"] * rl + ["l2"] * rl
    up: list[set[int]] = [set() for _ in range(3 * rl)]
    for u, v in topo.edges:
        up[u].add(v)
        up[v].add(u)
    for i in range(rl):
        assert len(up[i]) == k
        assert up[i] == up[2 * rl + i]  # L0 i and L2 i share their L1 switches
    for i, j in itertools.combinations(range(rl), 2):
        assert len(up[i] & up[j]) == 1
    if k <= 5:
        assert host_switch_diameter(topo) == 2
        assert nx.diameter(graph(topo)) == 3
    if k == 12:
        assert (topo.num_switches, topo.num_hosts) == (399, 3192)


# --- Randomised: Jellyfish, Xpander --------------------------------------------------------

RANDOM_CASES: list[tuple[str, dict[str, int | float], int, int]] = [
    ("jellyfish", {"nr": 50, "k": 7}, 50, 7),
    ("jellyfish", {"nr": 98, "k": 11}, 98, 11),
    ("jellyfish", {"nr": 25, "k": 4}, 25, 4),
    ("jellyfish", {"nr": 12, "k": 11}, 12, 11),
    ("xpander", {"k": 7, "l": 6}, 48, 7),
    ("xpander", {"k": 4, "l": 10}, 50, 4),
    ("xpander", {"k": 10, "l": 1}, 11, 10),
]


@pytest.mark.parametrize(("kind", "params", "num", "k_net"), RANDOM_CASES)
def test_random_topologies(
    kind: str, params: Mapping[str, int | float], num: int, k_net: int
) -> None:
    first = generate(kind, params, seed=1)
    assert first.num_switches == num
    assert set(first.degrees()) == {k_net}
    assert nx.is_connected(graph(first))
    assert first.params["p"] == k_net // 2
    assert generate(kind, params, seed=1).edges == first.edges
    if num > k_net + 1:  # a complete graph has only one realisation
        assert generate(kind, params, seed=2).edges != first.edges


def test_jellyfish_large_is_fast() -> None:
    start = time.perf_counter()
    topo = generate("jellyfish", {"nr": 722, "k": 29}, seed=5)
    assert time.perf_counter() - start < 2.0
    assert set(topo.degrees()) == {29}


# --- Parameter errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "params", "field"),
    [
        ("slimfly", {"q": 6}, "q"),
        ("slimfly", {"q": 1}, "q"),
        ("slimfly", {"q": 2}, "q"),
        ("slimfly", {"q": 5, "p": 0}, "p"),
        ("slimfly", {"q": 5.0}, "q"),
        ("slimfly", {"q": True}, "q"),
        ("slimfly", {}, "q"),
        ("slimfly", {"q": 5, "radix": 3}, "radix"),
        ("fattree", {"k": 5}, "k"),
        ("fattree", {"k": 4, "oversubscription": 0}, "oversubscription"),
        ("oft", {"k": 7}, "k"),
        ("oft", {"k": 2}, "k"),
        ("jellyfish", {"nr": 11, "k": 3}, "k"),
        ("jellyfish", {"nr": 10, "k": 10}, "k"),
        ("jellyfish", {"k": 3}, "nr"),
        ("xpander", {"k": 1, "l": 3}, "k"),
        ("hyperx", {"L": 2, "S": 1}, "S"),
        ("hyperx", {"L": 40, "S": 10}, "L"),
        ("mlfm", {"h": 0}, "h"),
        ("dragonfly", {"p": 0}, "p"),
        ("nonsense", {}, "kind"),
    ],
)
def test_bad_parameters(kind: str, params: dict[str, int | float], field: str) -> None:
    with pytest.raises(TopologyParameterError) as info:
        generate(kind, params, seed=0)
    assert info.value.field == field
    assert info.value.message and info.value.hint


def test_error_messages() -> None:
    with pytest.raises(TopologyParameterError) as info:
        generate("slimfly", {"q": 6}, seed=0)
    assert info.value.message == "q=6 is not a prime power"
    assert "5" in info.value.hint and "7" in info.value.hint
    with pytest.raises(TopologyParameterError) as info:
        generate("oft", {"k": 7}, seed=0)
    assert "k-1=6" in info.value.message
    with pytest.raises(TopologyParameterError) as info:
        generate("slimfly", {"q": 5}, seed=-1)
    assert info.value.field == "seed"


@pytest.mark.parametrize(("n", "r", "m"), [(4, 6, 4), (6, 8, 3), (24, 48, 24)])
def test_clos_is_a_complete_bipartite_leaf_middle_graph(n: int, r: int, m: int) -> None:
    topo = generate("clos", {"n": n, "r": r, "m": m}, seed=1)
    assert topo.num_switches == r + m and topo.num_hosts == n * r
    assert len(topo.edges) == r * m
    g = graph(topo)
    assert all(g.degree(i) == m for i in range(r))
    assert all(g.degree(r + j) == r for j in range(m))
    assert nx.is_bipartite(g) and host_switch_diameter(topo) == 2
    assert generate("clos", {"n": n, "r": r}, seed=1).params["m"] == n
