"""Traffic patterns shared by `simulate` and `analyze`, and SC'15's worst cases against their
closed forms (MAT of minimal routing = saturation throughput of the LP model)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis import traffic
from fatpaths_cfg.analysis.throughput import max_achievable_throughput
from fatpaths_cfg.cli.analyze import add_commands
from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.sim import network_from_topology, workloads
from fatpaths_cfg.traffic_patterns import (
    _greedy_overlapping_pairs,
    matching_switch_map,
    pattern_peers,
    slimfly_switch_map,
    switch_level_peers,
    torus_dims,
)


def _compiled(tmp_path: Path, kind: str, params: dict[str, int]) -> LoadedCompiled:
    name = f"{kind}-" + "-".join(f"{k}{v}" for k, v in params.items())
    inventory = tmp_path / f"{name}.yaml"
    generate = ", ".join(f"{k}: {v}" for k, v in {"kind": kind, **params}.items())
    inventory.write_text(
        f"fabric: {name}\ngenerate: {{{generate}}}\n"
        "routing: {layers: 3, rho: 0.8, algorithm: random, seed: 1}\n",
        encoding="utf-8",
    )
    out = tmp_path / name
    api.build_output(api.compile_fabric(inventory)).commit(out)
    return load_compiled(out)


def _mat(compiled: LoadedCompiled, pattern: str, scheme: str = "single-path") -> float:
    fabric = compiled.fabric
    pairs = traffic.host_pairs(fabric, pattern, np.random.default_rng(1))
    demand = traffic.switch_demand(fabric, pairs)
    return max_achievable_throughput(
        fabric, compiled.next_hop, compiled.dist, demand, scheme
    ).throughput


# SC'15 §4.2: under minimal routing the worst case reaches 1/(2p) on Slim Fly, 1/h on MLFM and
# 1/k on OFT. p = ceil(k'/2): 3 for q=3, 4 for q=5.
CLOSED_FORMS = [
    ("slimfly", {"q": 3}, 1 / 6),
    ("slimfly", {"q": 5}, 1 / 8),
    ("mlfm", {"h": 2}, 1 / 2),
    ("mlfm", {"h": 3}, 1 / 3),
    ("oft", {"k": 3}, 1 / 3),
    ("oft", {"k": 4}, 1 / 4),
]


@pytest.mark.parametrize(("kind", "params", "closed_form"), CLOSED_FORMS)
def test_worst_case_saturates_minimal_routing_at_the_sc15_closed_form(
    tmp_path: Path, kind: str, params: dict[str, int], closed_form: float
) -> None:
    compiled = _compiled(tmp_path, kind, params)
    assert _mat(compiled, "worst-case") == pytest.approx(closed_form, abs=1e-6)
    assert _mat(compiled, "uniform") > closed_form


@pytest.mark.parametrize("q", [3, 5])
def test_slimfly_worst_case_puts_every_switch_behind_a_link_of_2p_flows(
    tmp_path: Path, q: int
) -> None:
    """SC'15's construction: every switch's hosts send over a link shared with another
    switch's hosts (2p flows), and no link carries more; a matching on path length alone
    shares links only by chance."""
    compiled = _compiled(tmp_path, "slimfly", {"q": q})
    site = traffic.pattern_site(compiled.fabric)
    next_hop = compiled.next_hop[0]
    p = int(site.hosts_per_switch().max())

    def flows_per_link(peers: list[np.ndarray]) -> dict[tuple[int, int], int]:
        load: dict[tuple[int, int], int] = {}
        for host, targets in enumerate(peers):
            for target in targets.tolist():
                at, end = int(site.host_switch[host]), int(site.host_switch[target])
                while at != end:
                    hop = int(next_hop[at, end])
                    load[(at, hop)] = load.get((at, hop), 0) + 1
                    at = hop
        return load

    def switches_behind_2p(mapping: np.ndarray, load: dict[tuple[int, int], int]) -> int:
        behind = 0
        for source, target in enumerate(mapping.tolist()):
            assert site.dist[source, target] == 2
            middle = int(next_hop[source, target])
            behind += load[(source, middle)] == 2 * p or load[(middle, target)] == 2 * p
        return behind

    worst = pattern_peers(site, "worst-case", np.random.default_rng(1))
    load = flows_per_link(worst)
    assert max(load.values()) == 2 * p
    mapping = slimfly_switch_map(site, np.random.default_rng(1))
    assert sorted(mapping.tolist()) == list(range(compiled.fabric.nr))  # each receives once
    assert switches_behind_2p(mapping, load) == compiled.fabric.nr
    matching = matching_switch_map(site, np.random.default_rng(1))
    matching_load = flows_per_link(switch_level_peers(site, matching))
    assert switches_behind_2p(matching, matching_load) < compiled.fabric.nr / 2


def test_simulator_and_analysis_accept_the_same_pattern_names() -> None:
    assert workloads.PATTERNS == traffic.PATTERNS
    for name in (
        "worst-case",
        "worst-case-matching",
        "all-to-all",
        "nearest-neighbour",
        "off-diagonal",
    ):
        assert name in traffic.PATTERNS


def test_off_diagonal_offset_all_to_all_and_nearest_neighbour(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "mlfm", {"h": 2})  # 12 hosts on 6 local switches
    fabric = compiled.fabric
    n = len(fabric.hosts)
    rng = np.random.default_rng(1)
    shifted = traffic.host_pairs(fabric, "off-diagonal", rng, offset=5)
    np.testing.assert_array_equal(shifted[:, 1], (shifted[:, 0] + 5) % n)
    every = traffic.host_pairs(fabric, "all-to-all", rng)
    assert len(every) == n * (n - 1) == len({tuple(p) for p in every.tolist()})
    assert torus_dims(n) == (2, 2, 3)
    near = traffic.host_pairs(fabric, "nearest-neighbour", rng)
    as_set = {tuple(p) for p in near.tolist()}
    assert all((b, a) in as_set for a, b in as_set)  # an exchange goes both ways
    # X is the fastest dimension: host 0's X neighbour is host 1, on the same switch.
    assert (0, 1) in as_set and (0, 2) in as_set and (0, 4) in as_set


def test_analyze_reports_saturation_throughput_per_pattern(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "oft", {"k": 3})
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    result = CliRunner().invoke(
        app,
        [
            "analyze",
            str(compiled.directory),
            "--pairs",
            "20",
            "--schemes",
            "minimal",
            "--traffic",
            "worst-case,offdiagonal,nearest-neighbour",
            "--offset",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "0.333" in line]
    # `minimal`, single-path's old name, is read as it and the table says the new name.
    # (The path metrics' `minimal` set of paths, printed below the table, is not a scheme.)
    table = result.output.split("c_l ")[0]
    assert "single-path" in table and "minimal" not in table
    looped = CliRunner().invoke(
        app,
        [
            "analyze",
            str(compiled.directory),
            "--traffic",
            "off-diagonal",
            "--offset",
            str(len(compiled.fabric.hosts)),
        ],
    )
    assert looped.exit_code == 2 and "multiple of" in looped.output
    # The alias maps to off-diagonal; offset 3 = k is OFT's worst case too.
    assert any("worst-case" in row for row in rows)
    assert any("off-diagonal" in row for row in rows)


def test_simulator_workload_uses_the_topology_worst_case(tmp_path: Path) -> None:
    from fatpaths_cfg.sim.network import load_network

    compiled = _compiled(tmp_path, "mlfm", {"h": 3})
    network = load_network(compiled.directory)
    flows = workloads.make_workload(network, "worst-case", 1000, seed=1)
    # SC'15's MLFM worst case is the shift by h hosts.
    np.testing.assert_array_equal(flows.dst, (flows.src + 3) % network.n_hosts)
    for a, b in itertools.pairwise(sorted(flows.src.tolist())):
        assert b == a + 1


def test_slimfly_worst_case_at_sc15_scale_leaves_no_switch_out() -> None:
    """Slim Fly q=13 (338 switches, SC'15's size): the greedy pairing leaves switches whose
    flows share no link; the chained cycle puts all 338 behind a link of 2p flows."""
    site = workloads.pattern_site(network_from_topology("slimfly", {"q": 13, "p": 10}, 1))
    adjacent = (site.dist == 1).astype(np.int64)

    def switches_behind_2p(mapping: np.ndarray, one_route: bool) -> int:
        load: dict[tuple[int, int], int] = {}
        routes = []
        for source, target in enumerate(mapping.tolist()):
            middles = np.flatnonzero(adjacent[source] & adjacent[target])
            assert site.dist[source, target] == 2
            # The greedy's left-over pairs may have several minimal routes; the cycle's never.
            assert len(middles) == 1 or not one_route
            links = ((source, int(middles[0])), (int(middles[0]), target))
            routes.append(links)
            for link in links:
                load[link] = load.get(link, 0) + 1
        assert max(load.values()) <= 2
        return sum(any(load[link] == 2 for link in links) for links in routes)

    chained = switches_behind_2p(slimfly_switch_map(site, np.random.default_rng(1)), True)
    greedy = switches_behind_2p(_greedy_overlapping_pairs(site, np.random.default_rng(1)), False)
    assert chained == site.n_switches
    assert greedy < site.n_switches
