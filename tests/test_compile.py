"""Compiler core: the pipeline from inventory to compiled output directory."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.layers import Layer
from fatpaths_cfg.routing import UNREACHABLE, compute_routing
from fatpaths_cfg.verify.deadlock import dependency_edges, is_acyclic

INVENTORIES = sorted((Path(__file__).resolve().parent.parent / "inventories").glob("*.yaml"))
SLIMFLY_Q5 = Path(__file__).resolve().parent.parent / "inventories" / "slimfly-q5.yaml"


def _walk(next_hop: np.ndarray, s: int, t: int) -> list[int]:
    path = [s]
    while path[-1] != t:
        path.append(int(next_hop[path[-1], t]))
        assert path[-1] >= 0, f"black hole on {s}->{t}"
        assert len(path) <= next_hop.shape[0], f"loop on {s}->{t}"
    return path


@pytest.mark.parametrize("inventory", INVENTORIES, ids=[p.stem for p in INVENTORIES])
def test_every_example_compiles_and_routes_every_pair(inventory: Path) -> None:
    compiled = api.compile_fabric(inventory)
    fabric, routing = compiled.fabric, compiled.routing
    nr = fabric.nr
    assert routing.dist.shape == (len(compiled.layers), nr, nr)
    # Routes join the switches of one plane (every pair, with one plane).
    plane_of = fabric.plane_of_switch
    same = plane_of[:, None] == plane_of[None, :]
    assert (routing.dist[:, same] != UNREACHABLE).all(), "a layer leaves a pair unrouted"
    assert (routing.dist[:, ~same] == UNREACHABLE).all(), "a route crosses planes"
    off = ~np.eye(nr, dtype=bool) & same
    for i, layer in enumerate(compiled.layers):
        links = {tuple(e) for e in fabric.edges[layer.links].tolist()}
        for s in range(nr):
            for t in range(nr):
                if s == t or not same[s, t]:
                    continue
                path = _walk(routing.next_hop[i], s, t)
                assert len(path) - 1 == routing.dist[i, s, t]
                for u, v in itertools.pairwise(path):
                    assert (min(u, v), max(u, v)) in links, "route leaves its layer"
        assert (routing.dist[i][off] >= routing.dist[0][off]).all() or layer.rank is not None


def test_layer_one_is_minimal_and_sparse_layers_are_subsets() -> None:
    compiled = api.compile_fabric(SLIMFLY_Q5)
    dist = compiled.routing.dist
    assert compiled.layers[0].links.all()
    assert dist[0].max() == 2  # Slim Fly diameter
    for layer in compiled.layers[1:]:
        assert 0 < layer.link_count < len(compiled.fabric.links)
        # rho = 0.6: the share of links kept sits near rho (175 links, so within +-0.15)
        assert abs(layer.link_count / len(compiled.fabric.links) - 0.6) < 0.15
    assert compiled.route_counts == [4 * 49] * 50


def test_same_inventory_and_seed_give_byte_identical_output(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    api.compile_to_directory(SLIMFLY_Q5, first)
    api.compile_to_directory(SLIMFLY_Q5, second)
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_other_seed_gives_other_layers(tmp_path: Path) -> None:
    a = api.compile_fabric(SLIMFLY_Q5, seed=1)
    b = api.compile_fabric(SLIMFLY_Q5, seed=2)
    assert not np.array_equal(a.layers[1].links, b.layers[1].links)
    assert np.array_equal(a.routing.dist[0], b.routing.dist[0])


def test_failed_compile_leaves_earlier_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(SLIMFLY_Q5, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.yaml"
    # The address plan fails after the layers and tables are built: nothing may be written.
    bad.write_text(
        SLIMFLY_Q5.read_text().replace(
            "family: ipv4", "family: ipv4\n  link_pool_v4: 172.16.0.0/28"
        )
    )
    with pytest.raises(UserErrors):
        api.compile_to_directory(bad, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["bad.yaml", "out"]


def test_unchanged_files_keep_their_timestamps(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(SLIMFLY_Q5, out)
    stamp = (out / "fabric.json").stat().st_mtime_ns
    summary = api.compile_to_directory(SLIMFLY_Q5, out)
    assert summary.files_written == 0
    assert (out / "fabric.json").stat().st_mtime_ns == stamp


def test_compiled_directory_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(SLIMFLY_Q5, out)
    loaded = load_compiled(out)
    data = json.loads((out / "fabric.json").read_text())
    assert data["schema"] == "fatpaths.fabric/2"
    assert loaded.fabric.nr == 50 and len(loaded.fabric.hosts) == 200
    assert loaded.next_hop.shape == (4, 50, 50) and loaded.next_hop.dtype == np.int32
    assert loaded.dist.dtype == np.uint8
    report = json.loads((out / "report.json").read_text())
    share = report["path_diversity"]["share_pairs_with_at_least_3_paths"]
    assert 0.0 < share <= 1.0
    assert "| layer |" in (out / "report.md").read_text()


def test_acyclic_mode_layers_are_deadlock_free_and_route_up_then_down() -> None:
    compiled = api.compile_fabric(SLIMFLY_Q5.parent / "slimfly-q5-acyclic.yaml")
    assert all(compiled.deadlock_free)
    for i, layer in enumerate(compiled.layers):
        rank = layer.rank
        assert rank is not None
        for s in range(0, 50, 7):
            for t in range(50):
                if s == t:
                    continue
                path = _walk(compiled.routing.next_hop[i], s, t)
                turned_down = False
                for u, v in itertools.pairwise(path):
                    down = rank[v] > rank[u]
                    assert not (turned_down and not down), "down->up turn"
                    turned_down |= down


def test_minimal_routing_on_a_ring_is_cyclic() -> None:
    nr = 6
    edges = np.array([(i, (i + 1) % nr) for i in range(nr)], dtype=np.int32)
    edges = np.sort(edges, axis=1)
    layer = Layer(1, np.ones(nr, dtype=bool), "full", None)
    routing = compute_routing(nr, edges, [layer], seed=1)
    assert not is_acyclic(dependency_edges(routing.next_hop[0]))


def test_ecmp_route_counts_exceed_single_next_hop() -> None:
    compiled = api.compile_fabric(SLIMFLY_Q5.parent / "fattree-k4.yaml")
    # edge switches reach the 6 other edge switches outside their pod over 2 aggregation
    # switches each, so ECMP tables must be larger than one entry per destination.
    assert max(compiled.route_counts) > compiled.fabric.nr - 1


def test_compile_refuses_to_replace_a_running_lab(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(SLIMFLY_Q5, out)
    state = out / "lab" / "state.json"
    state.write_text("{}")
    with pytest.raises(UserErrors) as raised:
        api.compile_to_directory(SLIMFLY_Q5, out)
    assert "lab down" in str(raised.value)
    assert state.is_file()
