"""Switch-side routing schemes (MIN, INR, UGAL-L), virtual channels and lossless PFC queues in the
packet simulator, and the deadlock it reports on cyclic layers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli.simulate import add_commands
from fatpaths_cfg.sim import (
    SimConfig,
    SimNetwork,
    Workload,
    load_network,
    make_workload,
    network_from_edges,
    simulate,
)
from fatpaths_cfg.sim.htsim import write_connection_matrix
from fatpaths_cfg.sim.network import network_from_topology
from fatpaths_cfg.sim.run import virtual_channels
from fatpaths_cfg.verify.deadlock import dependency_edges, is_acyclic

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def flows(pairs: list[tuple[int, int]], size: int) -> Workload:
    return Workload(
        src=np.array([p[0] for p in pairs], dtype=np.int32),
        dst=np.array([p[1] for p in pairs], dtype=np.int32),
        size=np.full(len(pairs), size, dtype=np.int64),
        start_ps=np.zeros(len(pairs), dtype=np.int64),
    )


def ring(n: int) -> SimNetwork:
    return network_from_edges(
        "ring", n, [(i, (i + 1) % n) for i in range(n)], [1] * n, link_gbps=10.0
    )


def ring_load(n: int) -> Workload:
    """Every host to the host two switches on: minimal routes chain each link to the next."""
    return flows([(h, (h + 2) % n) for h in range(n)], 3_000_000)


# Small PFC thresholds so a few packets already pause the upstream.
LOSSLESS = SimConfig(
    transport="tcp",
    load_balancing="spray",
    mtu=1500,
    lossless=True,
    pfc_xoff_packets=8,
    pfc_xon_packets=4,
    duration_us=20_000,
)


def test_paper_virtual_channel_counts() -> None:
    # RESEARCH section 8: SF 2 (MIN) / 4 (INR, UGAL); MLFM and OFT 1 / 2.
    assert virtual_channels("min", "slimfly", 2) == 2
    assert virtual_channels("inr", "slimfly", 2) == 4
    assert virtual_channels("ugal-l", "slimfly", 2) == 4
    assert virtual_channels("min", "mlfm", 2) == 1
    assert virtual_channels("ugal-l-threshold", "oft", 2) == 2
    # Elsewhere one channel per hop of the longest path, capped at the 8 priorities.
    assert virtual_channels("min", "jellyfish", 3) == 3
    assert virtual_channels("inr", None, 5) == 8


def test_min_paths_are_minimal_and_inr_goes_indirect() -> None:
    net = network_from_topology("slimfly", {"q": 5})
    wl = make_workload(net, "permutation", 100_000, seed=2)
    d = net.dist[0][net.host_switch[wl.src], net.host_switch[wl.dst]].astype(np.int64)
    minimal = simulate(net, wl, SimConfig(routing="min", load_balancing="spray"))
    c = minimal.counters
    assert c["indirect_packets"] == 0
    # Every data packet (first copies and retransmissions alike) took exactly d hops.
    per_packet = np.asarray(minimal.flows["packets_sent"], dtype=np.int64)
    assert c["data_hops"] == int(np.sum(per_packet * d))
    assert minimal.finished.all()
    inr = simulate(net, wl, SimConfig(routing="inr", load_balancing="spray"))
    c = inr.counters
    assert c["indirect_packets"] >= c["data_packets_sent"]
    sent = int(np.sum(inr.flows["packets_sent"]))
    assert int(np.sum(per_packet * d)) < c["data_hops"] <= 4 * sent
    assert inr.finished.all()


def test_valiant_on_mlfm_stays_within_two_minimal_legs() -> None:
    net = network_from_topology("mlfm", {"h": 3})
    wl = make_workload(net, "permutation", 50_000, seed=1)
    result = simulate(net, wl, SimConfig(routing="inr", load_balancing="spray"))
    c = result.counters
    # Intermediates are host-attached switches only (tested natively); on MLFM every host
    # switch is two hops from any other, so an indirect path is at most 4 hops.
    assert c["indirect_packets"] > 0
    assert c["data_hops"] <= 4 * int(np.sum(result.flows["packets_sent"]))
    assert result.finished.all()


def test_ugal_l_routes_minimally_at_low_load_and_indirectly_under_worst_case() -> None:
    net = network_from_topology("slimfly", {"q": 5})
    light = flows([(0, 100)], 9000)
    assert simulate(net, light, SimConfig(routing="ugal-l")).counters["indirect_packets"] == 0
    heavy = make_workload(net, "worst-case", 1_000_000, seed=1)
    cfg = SimConfig(routing="ugal-l", load_balancing="spray", transport="tcp")
    adaptive = simulate(net, heavy, cfg)
    threshold = simulate(net, heavy, SimConfig(**{**cfg.__dict__, "routing": "ugal-l-threshold"}))
    assert adaptive.counters["indirect_packets"] > 0
    # The threshold variant stays minimal while queues are short, so it detours less.
    assert threshold.counters["indirect_packets"] < adaptive.counters["indirect_packets"]


def test_ring_deadlocks_on_a_cyclic_layer_and_reports_the_cycle() -> None:
    net = ring(6)
    assert not is_acyclic(dependency_edges(net.next_hops()[0]))
    result = simulate(net, ring_load(6), LOSSLESS)
    assert result.deadlock is not None
    cycle = result.deadlock["cycle"]
    assert isinstance(cycle, list)
    links = {(link["from"], link["to"]) for link in cycle}
    clockwise = {(f"s{i}", f"s{(i + 1) % 6}") for i in range(6)}
    assert links == clockwise or links == {(b, a) for a, b in clockwise}
    # Traffic stopped well before the horizon, with nothing lost.
    assert not result.finished.any()
    assert float(result.deadlock["at_us"]) < 1000  # type: ignore[arg-type]
    c = result.counters
    assert c["data_drops"] == c["trims"] == c["pfc_headroom_overflows"] == 0


def test_hop_count_channels_keep_the_same_ring_load_deadlock_free() -> None:
    net = ring(6)
    result = simulate(net, ring_load(6), SimConfig(**{**LOSSLESS.__dict__, "routing": "min"}))
    assert result.deadlock is None
    assert result.finished.all()
    assert result.counters["pfc_pause_frames"] > 0


@pytest.mark.parametrize("transport", ["ndp", "tcp"])
def test_pfc_never_drops_under_overload(transport: str) -> None:
    net = network_from_topology("slimfly", {"q": 5})
    incast = flows([(h, 0) for h in range(1, 41)], 200_000)
    cfg = SimConfig(transport=transport, routing="ugal-l", lossless=True, pfc_xoff_packets=4)
    result = simulate(net, incast, cfg)
    c = result.counters
    assert c["pfc_pause_frames"] > 0
    assert c["data_drops"] == c["trims"] == c["header_drops"] == c["control_drops"] == 0
    assert c["pfc_headroom_overflows"] == 0
    assert result.deadlock is None and result.finished.all()
    assert c["payload_delivered"] == int(np.sum(incast.size))


def _compile(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    api.build_output(api.compile_fabric(INVENTORIES / f"{name}.yaml")).commit(out)
    return out


def _layer1_deadlock_free(out: Path) -> bool:
    fabric = json.loads((out / "fabric.json").read_text())
    return bool(fabric["layers"][0]["deadlock_free"])


def test_compiled_cyclic_layer_deadlocks_and_acyclic_layers_do_not(tmp_path: Path) -> None:
    cyclic = _compile(tmp_path, "slimfly-q5")
    acyclic = _compile(tmp_path, "slimfly-q5-acyclic")
    assert not _layer1_deadlock_free(cyclic)
    assert _layer1_deadlock_free(acyclic)
    # Three times what the host links carry, on the compiled layer 1 only (the layer `verify`
    # judged; fair baselines would route on the full network instead), two-packet thresholds.
    cfg = SimConfig(
        transport="tcp",
        load_balancing="ecmp",
        baselines_on_full_network=False,
        queue_packets=2,
        initial_window=200,
        lossless=True,
        duration_us=3000,
    )
    results = {}
    for out in (cyclic, acyclic):
        net = load_network(out)
        # Seed 3: whether a cycle of pauses closes depends on where the flows go; since the
        # workload's destinations have a stream of their own, seed 1 no longer closes one.
        wl = make_workload(
            net, "uniform", 4_000_000, seed=3, arrival_rate=5000, duration_ps=500_000_000
        )
        results[out.name] = simulate(net, wl, cfg)
    assert results["slimfly-q5"].deadlock is not None
    calm = results["slimfly-q5-acyclic"]
    assert calm.deadlock is None
    assert calm.finished.any() and calm.counters["data_drops"] == 0


def test_same_seed_same_flows_csv(tmp_path: Path) -> None:
    net = network_from_topology("slimfly", {"q": 5})
    wl = make_workload(net, "worst-case", 500_000, seed=4)
    texts: list[str] = []
    for seed in (4, 4, 5):
        cfg = SimConfig(routing="ugal-l", lossless=True, seed=seed)
        path = tmp_path / f"flows-{len(texts)}.csv"
        simulate(net, wl, cfg).write_flows_csv(path, net.host_names)
        texts.append(path.read_text())
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


def test_simulate_command_reports_a_deadlock(tmp_path: Path) -> None:
    out = tmp_path / "ring"
    inventory = tmp_path / "ring.yaml"
    switches = "\n".join(f"  - {{name: r{i}, ports: 4}}" for i in range(6))
    links = "\n".join(f"  - {{a: r{i}:Ethernet1, b: r{(i + 1) % 6}:Ethernet2}}" for i in range(6))
    hosts = "\n".join(f"  - {{name: h{i}, uplink: r{i}:Ethernet3}}" for i in range(6))
    inventory.write_text(
        f"fabric: ring6\ndefaults: {{platform: frr, link_speed: 10G}}\n"
        f"switches:\n{switches}\nlinks:\n{links}\nhosts:\n{hosts}\n"
        "routing: {layers: 1}\n"
    )
    api.build_output(api.compile_fabric(inventory)).commit(out)
    assert not _layer1_deadlock_free(out)
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fatpaths (test shell)"""

    add_commands(app)
    matrix = tmp_path / "ring.cm"
    write_connection_matrix(ring_load(6), 6, matrix)
    result = CliRunner().invoke(
        app,
        ["simulate", str(out), "--workload", str(matrix), "--mtu", "1500",
         "--transport", "tcp", "--lb", "ecmp", "--lossless", "--pfc-xoff", "8",
         "--duration", "5ms", "-o", str(tmp_path / "run")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "deadlock at" in result.output and "paused cycle" in result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["config"]["lossless"] is True
    assert len(summary["deadlock"]["cycle"]) == 6


def _clos_shift(n: int, r: int) -> Workload:
    """Host j of leaf i to host j of leaf i + 1: every flow crosses a middle switch."""
    hosts = n * r
    return flows([(h, (h + n) % hosts) for h in range(hosts)], 2_000_000)


@pytest.mark.parametrize("p", [1, 2])
def test_adaptive_routing_on_clos_converges_only_with_shaped_hosts(p: int) -> None:
    # Clos(n=6, r=4, m=6): with flows at the full link rate (p = 1) two flows on one middle
    # link already overload it and re-picks keep colliding; at half the rate (p = 2) each link
    # carries two flows and a few re-picks settle (Zahavi et al.; m * p >= n).
    net = network_from_topology("clos", {"n": 6, "r": 4, "m": 6}).with_options(host_gbps=100.0 / p)
    result = simulate(net, _clos_shift(6, 4), SimConfig(routing="adaptive", load_balancing="ecmp"))
    c = result.counters
    assert result.finished.all()
    assert c["adaptive_notifications"] >= c["adaptive_repicks"] > 0
    # A re-picked flow's packets on the new path overtake those still queued on the old one.
    assert c["out_of_order"] > 0
    assert int(np.sum(result.flows["out_of_order"])) == c["out_of_order"]
    if p == 2:
        assert c["adaptive_links_over_capacity"] == 0
        assert 0 <= c["adaptive_converged_at_ps"] < 50 * 1_000_000
    else:
        assert c["adaptive_links_over_capacity"] > 0
        assert c["adaptive_converged_at_ps"] == -1  # never
