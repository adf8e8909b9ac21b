"""FatPaths' own evaluation, reproduced: the layer-choice policy, fair baselines, statistics that
count unfinished flows, and the paper's parameter profile."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sim_fixtures import slimfly_q7_layered
from test_sim_io import cli, write_compiled
from typer.testing import CliRunner

from fatpaths_cfg.sim import (
    SimConfig,
    SimNetwork,
    make_workload,
    network_from_edges,
    network_from_topology,
    simulate,
)
from fatpaths_cfg.sim.network import minimal_routing
from fatpaths_cfg.sim.profiles import resolve_profile
from fatpaths_cfg.sim.results import SimResult
from fatpaths_cfg.sim.run import LOAD_BALANCING
from fatpaths_cfg.sim.workloads import SC20_CLIP_BYTES, flow_sizes, websearch_sc20_table

US = 1_000_000


@pytest.fixture(scope="module")
def slimfly() -> SimNetwork:
    return slimfly_q7_layered()


def multi_layer_share(layers_used: np.ndarray) -> float:
    masks = layers_used.astype(np.uint64)
    return float(np.mean([bin(int(m)).count("1") > 1 for m in masks]))


# ---- 1. layer choice ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["tcp", "dctcp"])
def test_tcp_fatpaths_switches_layers_on_congestion(slimfly: SimNetwork, transport: str) -> None:
    work = make_workload(slimfly, "adversarial", "1MB", seed=2)
    config = SimConfig(transport=transport, load_balancing="fatpaths")
    adaptive = simulate(slimfly, work, config)
    uniform = simulate(slimfly, work, replace(config, layer_policy="uniform"))
    assert adaptive.finished.all() and uniform.finished.all()
    # ACK clocking leaves no 50 us gaps: the memoryless baseline never re-picks a layer, the
    # adaptive policy moves flows off the direct link once their window is cut.
    assert uniform.counters["layer_changes"] == 0
    assert adaptive.counters["layer_changes"] > 100
    assert multi_layer_share(adaptive.flows["layers_used"]) > 0.9


def test_ndp_layer_choice_remembers_trims(slimfly: SimNetwork) -> None:
    work = make_workload(slimfly, "adversarial", "1MB", seed=2)
    config = SimConfig(transport="ndp", load_balancing="fatpaths")
    adaptive = simulate(slimfly, work, config)
    uniform = simulate(slimfly, work, replace(config, layer_policy="uniform"))
    # A NACK about a layer the flow already left only lowers that layer's score: far fewer
    # moves than one redraw per trimmed packet, and no slower.
    assert adaptive.counters["layer_changes"] < 0.5 * uniform.counters["layer_changes"]
    assert np.mean(adaptive.fct_ps()) <= 1.02 * np.mean(uniform.fct_ps())


def test_layer_policy_is_validated() -> None:
    with pytest.raises(ValueError, match="layer policy"):
        SimConfig(layer_policy="sticky")


# ---- 2. fair baselines -------------------------------------------------------------------------


def single_path_square() -> SimNetwork:
    """Two equal-cost paths between switches 0 and 3, but layer 1 compiled with one next hop."""
    net = network_from_edges(
        "square", 4, [(0, 1), (0, 2), (1, 3), (2, 3)], [4, 0, 0, 4], link_gbps=10.0
    )
    return replace(net, multipath=[False])


def test_baselines_route_on_every_minimal_path_of_the_full_network() -> None:
    net = single_path_square()
    assert SimConfig(load_balancing="ecmp").network_for(net).multipath == [True]
    assert SimConfig(load_balancing="single-path").network_for(net).multipath == [False]
    assert SimConfig(load_balancing="fatpaths").network_for(net) is net
    compiled = SimConfig(load_balancing="ecmp", baselines_on_full_network=False)
    assert compiled.network_for(net) is net
    work = make_workload(net, "permutation", "2MB", seed=1)
    work = replace(
        work,
        src=np.arange(4, dtype=np.int32),
        dst=np.arange(4, 8, dtype=np.int32),
        size=np.full(4, 2_000_000, dtype=np.int64),
        start_ps=np.zeros(4, dtype=np.int64),
    )
    minimal = simulate(net, work, SimConfig(transport="dctcp", load_balancing="single-path"))
    spray = simulate(net, work, SimConfig(transport="dctcp", load_balancing="spray"))
    # Four 2 MB flows over one 10G path take 6.4 ms at least; over two, about half that.
    assert np.max(minimal.fct_ps()) > 6.4e3 * US
    assert np.max(spray.fct_ps()) < 0.7 * np.max(minimal.fct_ps())


def test_a_built_network_lends_its_minimal_layer_to_the_equal_cost_baselines() -> None:
    # A network built from its links already holds every link's minimal distances in layer 0;
    # the equal-cost baselines take them instead of searching again, and run exactly as on a
    # baseline searched anew.
    net = network_from_topology("slimfly", {"q": 5}, seed=3)
    assert net.minimal_first_layer
    lent = net.baseline(multipath=True)
    dist, next_hop = minimal_routing(net.n_switches, net.link_a, net.link_b, seed=0)
    assert np.array_equal(lent.dist[0], dist)
    assert lent.multipath == [True] and lent.layer_links.shape[0] == 1
    searched = replace(net, minimal_first_layer=False).baseline(multipath=True)
    work = make_workload(net, "permutation", "200KB", seed=2)
    for lb in ("ecmp", "spray"):
        config = SimConfig(transport="ndp", load_balancing=lb)
        a, b = simulate(lent, work, config), simulate(searched, work, config)
        assert a.counters == b.counters
        assert all(np.array_equal(a.flows[k], b.flows[k]) for k in a.flows)
    # Single-path routing follows the baseline's own tie-breaks (seed 0): searched, not lent.
    single = net.baseline(multipath=False)
    assert np.array_equal(single.next_hops()[0], next_hop) and single.multipath == [False]


def test_a_multipath_network_searches_its_next_hops_only_when_a_layer_needs_them() -> None:
    # A fat tree's many equal-cost paths make the single next hops' tie-breaking search the
    # bulk of building its tables; every layer spreading over all of them never reads them.
    net = network_from_topology("fattree", {"k": 4}, seed=5)
    assert net.next_hop is None
    dist, next_hop = minimal_routing(net.n_switches, net.link_a, net.link_b, seed=5)
    assert np.array_equal(net.dist[0], dist)
    assert np.array_equal(net.next_hops()[0], next_hop)
    work = make_workload(net, "permutation", "100KB", seed=1)
    config = SimConfig(transport="ndp", load_balancing="spray")
    stored = replace(net, next_hop=net.next_hops())
    a, b = simulate(net, work, config), simulate(stored, work, config)
    assert a.counters == b.counters
    # FatPaths forwards over the network's own layers: made single-path, it searches them and
    # runs as with them stored, on other paths than the equal-cost ones.
    fatpaths = SimConfig(transport="ndp", load_balancing="fatpaths")
    single = net.with_options(all_equal_cost=False)
    c = simulate(single, work, fatpaths)
    d = simulate(replace(stored, multipath=[False]), work, fatpaths)
    assert c.counters == d.counters
    assert c.counters != simulate(net, work, fatpaths).counters


def test_letflow_differs_from_ecmp_where_flowlets_exist() -> None:
    net = single_path_square()
    rng = np.random.default_rng(5)
    n = 40
    src = rng.integers(0, 4, n).astype(np.int32)
    work = make_workload(net, "permutation", "1MB", seed=1)
    # Flows of 200 KB arriving every 100 us from the same hosts: bursts separated by gaps.
    work = replace(
        work,
        src=src,
        dst=(src + 4).astype(np.int32),
        size=np.full(n, 200_000, dtype=np.int64),
        start_ps=(np.arange(n) * 100 * US).astype(np.int64),
    )
    results = {
        lb: simulate(net, work, SimConfig(transport="tcp", load_balancing=lb))
        for lb in ("ecmp", "letflow")
    }
    assert all(r.finished.all() for r in results.values())
    assert not np.array_equal(results["ecmp"].fct_ps(), results["letflow"].fct_ps())


# ---- 3. statistics -----------------------------------------------------------------------------


def test_unfinished_flows_count_as_lower_bounds_and_warmup_is_left_out() -> None:
    net = network_from_edges("dumbbell", 2, [(0, 1)], [2, 2], link_gbps=10.0)
    work = make_workload(net, "permutation", "1MB", seed=1)
    work = replace(
        work,
        src=np.array([0, 1, 0], dtype=np.int32),
        dst=np.array([2, 3, 3], dtype=np.int32),
        size=np.array([10_000, 10**9, 10_000], dtype=np.int64),
        start_ps=np.array([0, 0, 300 * US], dtype=np.int64),
    )
    result = simulate(net, work, SimConfig(transport="ndp", duration_us=500, warmup_us=0))
    s = result.summary()
    assert (s["flows_finished"], s["flows_unfinished"]) == (2, 1)
    bounded = s["fct_with_unfinished"]
    assert isinstance(bounded, dict) and bounded["lower_bound"] and bounded["count"] == 3
    # The unfinished flow counts at its 500 us so far, not as a silent drop-out.
    assert bounded["max_us"] == pytest.approx(500.0)
    finished = s["fct"]
    assert isinstance(finished, dict) and bounded["mean_us"] > finished["mean_us"]
    warm = simulate(net, work, SimConfig(transport="ndp", duration_us=500, warmup_us=100))
    ws = warm.summary()
    assert (ws["flows_warmup"], ws["flows_measured"], ws["flows_unfinished"]) == (2, 1, 0)
    from fatpaths_cfg.sim.plots import fct_cdf_figure

    def legend(r: SimResult) -> str:
        return str(fct_cdf_figure({"ndp": r}).axes[0].get_legend().get_texts()[0].get_text())

    assert "1 of 3 flows unfinished" in legend(result)
    assert "unfinished" not in legend(warm)


# ---- 4. the paper's profile --------------------------------------------------------------------


def test_websearch_sc20_has_twenty_sizes_averaging_about_one_megabyte() -> None:
    table = websearch_sc20_table()
    assert len(table) == 20 and table.max() == SC20_CLIP_BYTES
    assert 1.0e6 < table.mean() < 1.1e6
    sizes = flow_sizes("websearch-sc20", 20_000, np.random.default_rng(1))
    assert set(np.unique(sizes)) <= set(table)
    assert abs(sizes.mean() - table.mean()) < 0.05 * table.mean()


def test_paper_profile_states_the_papers_rates() -> None:
    assert resolve_profile("fatpaths-sc20", "ndp").arrival_rate == 300
    assert resolve_profile("fatpaths-sc20", "tcp").arrival_rate == 200
    paper = resolve_profile("fatpaths-sc20", "dctcp")
    assert (paper.link_gbps, paper.min_rto_us, paper.warmup) == (10.0, 200.0, "half")
    with pytest.raises(ValueError, match="--profile"):
        resolve_profile("htsim", "ndp")
    # The paper simulates no MPTCP: a clear error, not a KeyError's traceback.
    with pytest.raises(ValueError, match="no preset for --transport mptcp"):
        resolve_profile("fatpaths-sc20", "mptcp")


# ---- the command -------------------------------------------------------------------------------


def test_compare_all_runs_every_scheme_and_counts_unfinished(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    args = [
        "simulate", str(out), "-w", "uniform", "--size", "200KB", "--lambda", "2000",
        "--duration", "2ms", "--compare", "all", "--transport", "tcp", "--warmup", "half",
    ]  # fmt: skip
    result = CliRunner().invoke(cli(), [*args, "-o", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert "unfinished" in result.output
    for scheme in LOAD_BALANCING:
        s = json.loads((tmp_path / "a" / scheme / "summary.json").read_text())
        assert s["flows_measured"] == s["flows_finished"] + s["flows_unfinished"]
        assert s["flows_warmup"] > 0 and s["warmup_us"] == 1000.0
    again = CliRunner().invoke(cli(), [*args, "-o", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    for scheme in ("fatpaths", "letflow"):
        first = (tmp_path / "a" / scheme / "flows.csv").read_bytes()
        assert first == (tmp_path / "b" / scheme / "flows.csv").read_bytes()


def test_profile_and_until_done_finish_every_flow(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    result = CliRunner().invoke(
        cli(),
        [
            "simulate", str(out), "-w", "uniform", "--profile", "fatpaths-sc20",
            "--duration", "1ms", "--transport", "dctcp", "--lb", "fatpaths",
            "--min-rto-us", "300", "--pacing", "-o", str(tmp_path / "run"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert s["flows_unfinished"] == 0 and s["flows"] > 0
    assert s["config"]["min_rto_us"] == 300.0 and s["config"]["tcp_pacing"]
    assert s["config"]["duration_us"] is None  # --until-done from the profile
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["lambda"] == 200.0 and run["link_gbps"] == 10.0
