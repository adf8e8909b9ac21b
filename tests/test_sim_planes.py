"""Simulator on parallel dataplanes (P-Net): MPTCP over planes, plane choice of single-path
flows, ping-pong RPC rounds, and `fatpaths simulate` on a compiled multi-plane fabric."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli.simulate import add_commands
from fatpaths_cfg.sim import SimConfig, SimNetwork, Workload, network_from_edges, simulate
from fatpaths_cfg.sim.network import network_from_planes, network_from_topology
from fatpaths_cfg.sim.workloads import make_workload, rpc_workload

ROOT = Path(__file__).resolve().parent.parent
US = 1_000_000  # picoseconds


def one_flow(src: int, dst: int, size: int) -> Workload:
    return Workload(
        src=np.array([src], dtype=np.int32),
        dst=np.array([dst], dtype=np.int32),
        size=np.array([size], dtype=np.int64),
        start_ps=np.zeros(1, dtype=np.int64),
    )


def two_single_link_planes() -> SimNetwork:
    """Two hosts, each with a NIC in both planes; each plane one 10 Gb/s link."""
    return network_from_planes("two-planes", [(2, [(0, 1)]), (2, [(0, 1)])], [1, 1], link_gbps=10)


def test_mptcp_over_two_disjoint_planes_gets_twice_one_path() -> None:
    net = two_single_link_planes()
    size = 20_000_000
    tcp = simulate(net, one_flow(0, 1, size), SimConfig(transport="tcp", load_balancing="ecmp"))
    mptcp = simulate(net, one_flow(0, 1, size), SimConfig(transport="mptcp"))
    ratio = float(tcp.fct_ps()[0] / mptcp.fct_ps()[0])
    # Measured 1.97.
    assert 1.85 <= ratio <= 2.02, ratio
    # Both NICs carried data: the flow used two planes.
    assert mptcp.counters["data_hops"] == mptcp.counters["data_packets_sent"]


def test_plane_of_a_network_is_read_back_from_its_ports() -> None:
    net = two_single_link_planes()
    assert net.planes == 2
    # Port 2E + 2n is NIC n = host * planes + plane.
    assert net.port_ends(2 * 2 + 2 * 1) == ("h0", "s2")
    assert net.port_ends(2 * 2 + 2 * 2 + 1) == ("s1", "h1")


def crossed_rings() -> SimNetwork:
    """Plane 0 a ring 0-1-2-3, plane 1 a ring 0-2-1-3: hosts two hops apart in one plane are
    one hop apart in the other."""
    ring0 = [(0, 1), (1, 2), (2, 3), (3, 0)]
    ring1 = [(0, 2), (2, 1), (1, 3), (3, 0)]
    return network_from_planes("crossed", [(4, ring0), (4, ring1)], [1, 1, 1, 1], link_gbps=10)


def planes_taken(net: SimNetwork, workload: Workload, choice: str) -> np.ndarray:
    config = SimConfig(transport="tcp", load_balancing="ecmp", plane_choice=choice)
    result = simulate(net, workload, config)
    assert result.summary()["flows_finished"] == workload.n_flows
    return np.asarray(result.flows["plane"])


def test_fewest_hops_takes_the_shortest_plane() -> None:
    net = crossed_rings()
    workload = make_workload(net, "all-to-all", 30_000, seed=1)
    taken = planes_taken(net, workload, "fewest-hops")
    uplinks = net.nic_switches()
    for i in range(workload.n_flows):
        s, d = uplinks[workload.src[i]], uplinks[workload.dst[i]]
        hops = [int(net.dist[0][s[p], d[p]]) for p in range(2)]
        assert hops[taken[i]] == min(hops), (i, hops, taken[i])
    # The rings differ, so some pairs prefer each plane.
    assert set(taken.tolist()) == {0, 1}


def test_round_robin_cycles_and_hash_repeats() -> None:
    net = crossed_rings()
    n = 6
    workload = Workload(
        src=np.zeros(n, dtype=np.int32),
        dst=np.full(n, 2, dtype=np.int32),
        size=np.full(n, 10_000, dtype=np.int64),
        start_ps=np.arange(n, dtype=np.int64) * US,
    )
    assert planes_taken(net, workload, "round-robin").tolist() == [0, 1, 0, 1, 0, 1]
    hashed = planes_taken(net, workload, "hash")
    assert hashed.tolist() == planes_taken(net, workload, "hash").tolist()


@pytest.mark.parametrize("transport", ["tcp", "ndp", "mptcp"])
def test_rpc_round_is_one_rtt_plus_serialisation_on_an_idle_network(transport: str) -> None:
    net = network_from_edges("pair", 2, [(0, 1)], [1, 1], link_gbps=10)
    config = SimConfig(transport=transport, load_balancing="ecmp", mtu=1500)
    workload = rpc_workload(net, rounds=4, request_bytes=1500, response_bytes=1500, seed=1)
    result = simulate(net, workload, config)
    times = result.round_times_ps()
    assert times is not None and len(times) == 2 * 4  # both hosts are clients
    packet_ps, header_ps = (1500 + 64) * 8 * 100, 64 * 8 * 100
    one_way = 3 * packet_ps + 3 * US  # three store-and-forward hops, three 1 us links
    # Each side ACKs before it answers: the server the request, the client the last response.
    assert all(2 * one_way <= t <= 2 * one_way + 6 * header_ps + 2 * packet_ps for t in times), (
        times
    )
    summary = result.summary()
    assert summary["rounds"] == summary["rounds_finished"] == 8


def test_rpc_rounds_run_one_after_another() -> None:
    net = network_from_edges("pair", 2, [(0, 1)], [1, 1], link_gbps=10)
    workload = rpc_workload(net, rounds=3, request_bytes=9000, response_bytes=90_000, seed=1)
    result = simulate(net, workload, SimConfig(transport="tcp", load_balancing="ecmp"))
    rounds = workload.rounds()
    assert rounds is not None
    finish = result.flows["finish_ps"]
    start = result.workload.start_ps
    for k in range(len(rounds)):
        request, response = rounds[k]
        assert start[response] == finish[request]
        if k % 3:  # each client's later rounds start when its previous response arrived
            assert start[request] == finish[rounds[k - 1][1]]


def test_mptcp_is_deterministic_for_a_seed() -> None:
    net = network_from_topology(
        "jellyfish", {"nr": 16, "k": 6, "p": 2}, seed=3, link_gbps=10, planes=2, heterogeneous=True
    )
    workload = make_workload(net, "permutation", 200_000, seed=2)

    def run(seed: int) -> list[int]:
        config = SimConfig(transport="mptcp", subflows_per_plane=2, seed=seed)
        result = simulate(net, workload, config)
        assert result.summary()["flows_finished"] == workload.n_flows
        return [int(x) for x in result.flows["finish_ps"]]

    assert run(5) == run(5)
    assert run(5) != run(6)


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fatpaths (test shell)"""

    add_commands(app)
    return app


def test_simulate_mptcp_and_rpc_on_a_compiled_two_plane_fabric(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(ROOT / "inventories" / "hand-2planes.yaml", out)
    runner = CliRunner()
    mptcp = runner.invoke(
        cli(),
        ["simulate", str(out), "--transport", "mptcp", "--subflows-per-plane", "2",
         "--path-choice", "layers", "--size", "300KB", "-o", str(tmp_path / "mptcp")],
    )  # fmt: skip
    assert mptcp.exit_code == 0, mptcp.output
    summary = json.loads((tmp_path / "mptcp" / "summary.json").read_text())
    assert summary["flows_finished"] == summary["flows"] == 4
    assert summary["config"]["subflows_per_plane"] == 2
    rpc = runner.invoke(
        cli(),
        ["simulate", str(out), "--transport", "tcp", "--workload", "rpc", "--rounds", "5",
         "--plane-choice", "fewest-hops", "-o", str(tmp_path / "rpc")],
    )  # fmt: skip
    assert rpc.exit_code == 0, rpc.output
    assert "rpc rounds, completion time median" in rpc.output
    summary = json.loads((tmp_path / "rpc" / "summary.json").read_text())
    assert summary["rounds"] == summary["rounds_finished"] == 4 * 5
    assert summary["round_time"]["median_us"] > 0
    bad = runner.invoke(cli(), ["simulate", str(out), "--plane-choice", "random"])
    assert bad.exit_code == 2
