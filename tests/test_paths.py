"""The one walker (shared by analysis, verify and the lab), sampler, greedy disjoint count and
derangement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fatpaths_cfg.analysis.path_sampling import greedy_disjoint, links_of, sample_pairs
from fatpaths_cfg.compiled.paths import layer_paths, walk, walk_layers
from fatpaths_cfg.traffic_patterns import derangement


def ring_tables() -> np.ndarray:
    """Two layers on a 4-switch ring: layer 0 clockwise, layer 1 counter-clockwise."""
    n = 4
    clockwise = np.array([[(s + 1) % n if s != t else s for t in range(n)] for s in range(n)])
    counter = np.array([[(s - 1) % n if s != t else s for t in range(n)] for s in range(n)])
    return np.stack([clockwise, counter])


def test_walk_follows_the_table_and_stops_where_it_has_no_entry_or_loops() -> None:
    tables = ring_tables()
    assert walk(tables[0], 0, 2) == (0, 1, 2)
    assert walk(tables[1], 0, 2) == (0, 3, 2)
    assert walk(tables[0], 3, 3) == (3,)
    missing = tables[0].copy()
    missing[1, 2] = -1
    assert walk(missing, 0, 2) is None  # never indexes row -1 (the last switch)
    looping = tables[0].copy()
    looping[1, 2] = 0
    assert walk(looping, 0, 2) is None


def test_layer_paths_are_distinct_in_layer_order_and_skip_layers_without_one() -> None:
    tables = np.concatenate([ring_tables(), ring_tables()[:1]])
    assert layer_paths(tables, 0, 2) == [(0, 1, 2), (0, 3, 2)]
    tables[0, 0, 2] = -1
    assert walk_layers(tables, 0, 2) == [None, (0, 3, 2), (0, 1, 2)]
    assert layer_paths(tables, 0, 2) == [(0, 3, 2), (0, 1, 2)]


def test_greedy_disjoint_takes_shortest_first() -> None:
    assert links_of((2, 1, 0)) == {(0, 1), (1, 2)}
    # The 2-hop path uses the first link of one 3-hop path, so greedy keeps 2 of the 3.
    paths = [(0, 1, 5), (0, 1, 2, 5), (0, 3, 4, 5)]
    assert greedy_disjoint(paths) == 2
    assert greedy_disjoint(paths + paths) == 2  # duplicates count once
    assert greedy_disjoint([]) == 0


def test_sample_pairs_gives_every_pair_or_a_sample_of_distinct_members() -> None:
    switches = np.array([3, 5, 9])
    every = sample_pairs(switches, 6, np.random.default_rng(0))
    assert [tuple(p) for p in every.tolist()] == [
        (3, 5), (3, 9), (5, 3), (5, 9), (9, 3), (9, 5)
    ]  # fmt: skip
    drawn = sample_pairs(np.arange(50), 400, np.random.default_rng(0))
    assert drawn.shape == (400, 2) and drawn.dtype == np.int64
    assert (drawn[:, 0] != drawn[:, 1]).all() and drawn.min() >= 0 and drawn.max() < 50
    again = sample_pairs(np.arange(50), 400, np.random.default_rng(0))
    assert np.array_equal(drawn, again)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 200])
def test_derangement_returns_for_every_size_and_fixes_no_point(n: int) -> None:
    # The analyses' former copy looped forever for n = 1 (every permutation fixes the point).
    perm = derangement(n, np.random.default_rng(n))
    assert sorted(perm.tolist()) == list(range(n))
    if n >= 2:
        assert not (perm == np.arange(n)).any()


def test_verify_and_lab_walk_no_invented_path_through_a_missing_entry() -> None:
    """A layer without an s-t route (-1, e.g. a pair across planes) gives no expected path: the
    Batfish check and the lab's traces used to step to switch -1, the last switch."""
    from types import SimpleNamespace

    from fatpaths_cfg.lab.probe import PathModel
    from fatpaths_cfg.verify.batfish import compiled_path

    tables = ring_tables()
    tables[0, 1, 3] = -1  # switch 1 has no route to 3 in layer 0
    names = [SimpleNamespace(name=f"S{i}") for i in range(4)]
    loaded: Any = SimpleNamespace(next_hop=tables, fabric=SimpleNamespace(switches=names))
    assert compiled_path(loaded, 0, 0, 3) is None
    assert compiled_path(loaded, 1, 0, 3) == ["s0", "s3"]
    assert compiled_path(loaded, 0, 0, 2) == ["s0", "s1", "s2"]

    model = PathModel.__new__(PathModel)
    model.ecmp, model.next_hop = False, tables
    assert model.path(1, 0, 3) == []
    assert model.path(1, 0, 2) == [0, 1, 2]
