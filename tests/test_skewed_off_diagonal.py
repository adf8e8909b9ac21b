"""The FatPaths paper's skewed off-diagonal (Figure 11): an off-diagonal whose offset is a whole
switch's hosts, chosen per topology so that every destination is as far as the network allows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.sim import make_workload, network_from_topology
from fatpaths_cfg.sim.network import SimNetwork
from fatpaths_cfg.sim.workloads import pattern_site
from fatpaths_cfg.traffic_patterns import PatternError, pattern_peers, skewed_offset

# Slim Fly q=5: 50 switches, p = 4 hosts each, diameter 2. Fat tree k=4 with
# oversubscription 2: 8 edge switches with 4 hosts each, two per pod; inter-pod pairs 4 hops.
NETWORKS = [("slimfly", {"q": 5}, 2), ("fattree", {"k": 4, "oversubscription": 2}, 4)]


def _network(kind: str, params: dict[str, int | float]) -> SimNetwork:
    return network_from_topology(kind, params, seed=1)


@pytest.mark.parametrize(("kind", "params", "farthest"), NETWORKS)
def test_every_host_sends_to_the_host_at_a_whole_switch_offset(
    kind: str, params: dict[str, int | float], farthest: int
) -> None:
    net = _network(kind, params)
    site = pattern_site(net)
    chosen = skewed_offset(site)
    p = int(site.hosts_per_switch().max())
    assert chosen.offset is not None and chosen.offset % p == 0 and chosen.offset > 0
    peers = pattern_peers(site, "skewed-off-diagonal", np.random.default_rng(1))
    n = net.n_hosts
    assert [peer.tolist() for peer in peers] == [[(h + chosen.offset) % n] for h in range(n)]
    # Skewed: the p hosts of a switch all send to one switch (a p-way collision there).
    src_switch = net.host_switch
    dst_switch = net.host_switch[[int(peer[0]) for peer in peers]]
    for switch in np.unique(src_switch):
        assert len(np.unique(dst_switch[src_switch == switch])) == 1


@pytest.mark.parametrize(("kind", "params", "farthest"), NETWORKS)
def test_every_destination_is_as_remote_as_the_network_allows(
    kind: str, params: dict[str, int | float], farthest: int
) -> None:
    net = _network(kind, params)
    site = pattern_site(net)
    chosen = skewed_offset(site)
    assert chosen.distance == farthest
    peers = pattern_peers(site, "skewed-off-diagonal", np.random.default_rng(1))
    hops = [
        int(site.dist[net.host_switch[h], net.host_switch[int(peer[0])]])
        for h, peer in enumerate(peers)
    ]
    # Every flow crosses the network's largest switch-to-switch distance: 2 hops on the Slim
    # Fly, between pods on the fat tree.
    assert set(hops) == {farthest}
    assert chosen.share_at_distance == 1.0 and chosen.mean_distance == farthest


def test_the_plain_off_diagonal_is_not_equally_remote() -> None:
    """The reason for the rule: one switch's hosts on, the plain off-diagonal stays in the pod
    on the fat tree while the skewed one leaves it."""
    net = _network("fattree", {"k": 4, "oversubscription": 2})
    site = pattern_site(net)
    plain = pattern_peers(site, "off-diagonal", np.random.default_rng(1))
    hops = {
        int(site.dist[net.host_switch[h], net.host_switch[int(peer[0])]])
        for h, peer in enumerate(plain)
    }
    assert 2 in hops  # edge - aggregation - edge, inside a pod


def test_same_seed_same_flows_and_the_offset_never_depends_on_the_seed() -> None:
    net = _network("slimfly", {"q": 5})
    first = make_workload(net, "skewed-off-diagonal", 1000, seed=3, arrival_rate=1e5,
                          duration_ps=200_000_000)  # fmt: skip
    again = make_workload(net, "skewed-off-diagonal", 1000, seed=3, arrival_rate=1e5,
                          duration_ps=200_000_000)  # fmt: skip
    for field in ("src", "dst", "size", "start_ps"):
        np.testing.assert_array_equal(getattr(first, field), getattr(again, field))
    offset = skewed_offset(pattern_site(net)).offset
    assert offset is not None
    for seed in (1, 2, 7):
        flows = make_workload(net, "skewed-off-diagonal", 1000, seed=seed)
        np.testing.assert_array_equal(flows.dst, (flows.src + offset) % net.n_hosts)


def test_an_explicit_offset_must_be_a_whole_switch_of_hosts() -> None:
    net = _network("slimfly", {"q": 5})
    site = pattern_site(net)
    n = net.n_hosts
    chosen = skewed_offset(site, offset=8)
    assert (chosen.shift, chosen.offset) == (2, 8)
    peers = pattern_peers(site, "skewed-off-diagonal", np.random.default_rng(1), offset=8)
    assert [int(peer[0]) for peer in peers] == [(h + 8) % n for h in range(n)]
    with pytest.raises(PatternError, match=r"--offset 6: .*multiple of the 4 hosts"):
        skewed_offset(site, offset=6)
    with pytest.raises(PatternError, match=r"--offset 200: .*onto itself"):
        skewed_offset(site, offset=n)


def test_simulate_runs_it_and_refuses_a_bad_offset_naming_the_flag(tmp_path: Path) -> None:
    app = build_app()
    base = ["simulate", "--generate", "slimfly", "-p", "q=3", "--size", "8KiB"]
    base += ["--workload", "skewed-off-diagonal"]
    out = tmp_path / "run"
    good = CliRunner().invoke(app, [*base, "-o", str(out)])
    assert good.exit_code == 0, good.output
    assert json.loads((out / "run.json").read_text())["workload"] == "skewed-off-diagonal"
    bad_out = tmp_path / "bad"
    bad = CliRunner().invoke(app, [*base, "--offset", "5", "-o", str(bad_out)])
    assert bad.exit_code == 2
    assert "--offset 5" in bad.output and "multiple of" in bad.output
    assert not bad_out.exists()


def test_analyze_takes_the_same_pattern(tmp_path: Path) -> None:
    import typer

    from fatpaths_cfg import api
    from fatpaths_cfg.cli.analyze import add_commands

    inventory = tmp_path / "sf.yaml"
    inventory.write_text(
        "fabric: sf\ngenerate: {kind: slimfly, q: 3}\n"
        "routing: {layers: 3, rho: 0.8, algorithm: random, seed: 1}\n",
        encoding="utf-8",
    )
    out = tmp_path / "sf"
    api.build_output(api.compile_fabric(inventory)).commit(out)
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    args = ["analyze", str(out), "--pairs", "10", "--schemes", "minimal"]
    result = CliRunner().invoke(app, [*args, "--traffic", "skewed-off-diagonal"])
    assert result.exit_code == 0, result.output
    assert any(line.startswith("skewed-off-diagonal") or " skewed-off-diagonal " in line
               for line in result.output.splitlines())  # fmt: skip
    bad = CliRunner().invoke(app, [*args, "--traffic", "skewed-off-diagonal", "--offset", "1"])
    assert bad.exit_code == 2 and "--offset 1" in bad.output
