"""Simulator inputs and outputs: workloads, htsim connection matrices, compiled-fabric loading
and the `simulate` command."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg.cli.simulate import add_commands
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim import (
    SimConfig,
    SimNetwork,
    WorkloadError,
    load_network,
    make_workload,
    network_from_edges,
    read_connection_matrix,
    simulate,
    write_connection_matrix,
)
from fatpaths_cfg.sim.htsim import ConnectionMatrixError
from fatpaths_cfg.sim.network import minimal_routing
from fatpaths_cfg.sim.workloads import (
    parse_bytes,
    parse_duration_ps,
    websearch_mean_bytes,
    websearch_sizes,
)


@pytest.fixture(scope="module")
def ring() -> SimNetwork:
    # 8 switches in a ring with chords, 4 hosts each (32 hosts).
    edges = [(i, (i + 1) % 8) for i in range(8)] + [(0, 4), (2, 6)]
    return network_from_edges("ring", 8, edges, [4] * 8, link_gbps=10.0)


# ---- workloads ---------------------------------------------------------------------------------


def test_permutation_is_a_derangement(ring: SimNetwork) -> None:
    w = make_workload(ring, "permutation", "64KiB", seed=1)
    assert sorted(w.src.tolist()) == list(range(32))
    assert sorted(w.dst.tolist()) == list(range(32))
    assert not np.any(w.src == w.dst)
    assert np.all(w.size == 65536)
    assert np.all(w.start_ps == 0)


def test_off_diagonal_stencil_and_shuffle_follow_their_formulas(ring: SimNetwork) -> None:
    off = make_workload(ring, "off-diagonal", 1000, seed=1, offset=5)
    np.testing.assert_array_equal(off.dst, (off.src + 5) % 32)
    stencil = make_workload(ring, "stencil", 1000, seed=1)
    assert stencil.n_flows == 32 * 4
    for s, d in zip(stencil.src, stencil.dst, strict=True):
        assert (int(d) - int(s)) % 32 in {1, 31, 42 % 32, (-42) % 32}
    shuffle = make_workload(ring, "shuffle", 1000, seed=1)
    for s, d in zip(shuffle.src, shuffle.dst, strict=True):
        assert d == ((s << 1) | (s >> 4)) & 31  # 32 hosts: 5-bit rotation
    assert 0 not in shuffle.src and 31 not in shuffle.src  # fixed points stay idle


def test_worst_case_and_adversarial_pick_far_and_near_switches(ring: SimNetwork) -> None:
    worst = make_workload(ring, "worst-case", 1000, seed=1)
    adversarial = make_workload(ring, "adversarial", 1000, seed=1)
    dist = ring.dist[0]
    hops_worst = dist[ring.host_switch[worst.src], ring.host_switch[worst.dst]]
    hops_adv = dist[ring.host_switch[adversarial.src], ring.host_switch[adversarial.dst]]
    assert hops_worst.mean() > 2.0  # the diameter of this ring-with-chords is 3
    assert np.all(hops_adv == 1)
    # Switch-level patterns keep whole racks together: every host of a switch talks to one
    # destination switch.
    for s in range(8):
        targets = set(ring.host_switch[adversarial.dst[ring.host_switch[adversarial.src] == s]])
        assert len(targets) == 1


def test_randomized_mapping_relabels_hosts(ring: SimNetwork) -> None:
    plain = make_workload(ring, "off-diagonal", 1000, seed=4, offset=1)
    mapped = make_workload(ring, "off-diagonal", 1000, seed=4, offset=1, randomize_mapping=True)
    assert not np.array_equal(plain.dst, mapped.dst)
    assert sorted(mapped.src.tolist()) == list(range(32))
    assert not np.any(mapped.src == mapped.dst)


def test_poisson_arrivals_match_the_rate(ring: SimNetwork) -> None:
    duration = 10**12 // 10  # 100 ms
    w = make_workload(ring, "uniform", 1000, seed=2, arrival_rate=500.0, duration_ps=duration)
    expected = 32 * 500 * 0.1
    assert abs(w.n_flows - expected) < 4 * np.sqrt(expected)
    assert np.all(np.diff(w.start_ps) >= 0)
    assert w.start_ps.min() >= 0 and w.start_ps.max() < duration
    assert not np.any(w.src == w.dst)


@pytest.mark.parametrize("pattern", ["uniform", "permutation", "stencil"])
def test_the_arrival_rate_moves_no_destination_or_size(ring: SimNetwork, pattern: str) -> None:
    """Destinations, sizes and arrivals draw from streams of their own: a source's k-th flow
    goes to the same host with the same size at any rate (one shared stream moved them)."""
    runs = [
        make_workload(
            ring, pattern, "websearch", seed=4, arrival_rate=rate,
            duration_ps=500_000_000, randomize_mapping=True,
        )
        for rate in (10_000, 40_000)
    ]  # fmt: skip
    slow, fast = runs
    assert fast.n_flows > 2 * slow.n_flows
    for host in range(ring.n_hosts):
        d_slow, d_fast = slow.dst[slow.src == host], fast.dst[fast.src == host]
        s_slow, s_fast = slow.size[slow.src == host], fast.size[fast.src == host]
        assert len(d_slow) <= len(d_fast)
        np.testing.assert_array_equal(d_slow, d_fast[: len(d_slow)])
        np.testing.assert_array_equal(s_slow, s_fast[: len(s_slow)])
    # The streams are independent draws, not one sequence: destinations differ by seed.
    other = make_workload(ring, pattern, "websearch", seed=5, arrival_rate=10_000,
                          duration_ps=500_000_000, randomize_mapping=True)  # fmt: skip
    assert not np.array_equal(other.dst[: slow.n_flows], slow.dst[: other.n_flows])


def test_the_duration_and_active_hosts_move_no_destination(ring: SimNetwork) -> None:
    full = make_workload(ring, "uniform", 1000, seed=2, arrival_rate=20_000, duration_ps=10**9)
    half = make_workload(
        ring, "uniform", 1000, seed=2, arrival_rate=20_000, duration_ps=10**9,
        active_hosts=list(range(0, 32, 2)),
    )  # fmt: skip
    assert set(half.src.tolist()) <= set(range(0, 32, 2))
    compared = 0
    for host in range(0, 32, 2):
        d_half, d_full = half.dst[half.src == host], full.dst[full.src == host]
        m = min(len(d_half), len(d_full))
        np.testing.assert_array_equal(d_half[:m], d_full[:m])
        compared += m
    assert compared > 100


def test_websearch_sizes_follow_the_cdf() -> None:
    sizes = websearch_sizes(200_000, np.random.default_rng(0))
    assert np.mean(sizes <= 6 * 1460) == pytest.approx(0.15, abs=0.01)
    assert np.median(sizes) == pytest.approx(53 * 1460, rel=0.1)
    assert np.mean(sizes) == pytest.approx(websearch_mean_bytes(), rel=0.05)
    assert sizes.max() <= 20000 * 1460


def test_size_and_duration_parsing() -> None:
    assert parse_bytes("2MB") == 2_000_000
    assert parse_bytes("64KiB") == 65536
    assert parse_bytes("1500") == 1500
    assert parse_duration_ps("10ms") == 10 * 10**9
    assert parse_duration_ps("250") == 250 * 10**6
    with pytest.raises(WorkloadError):
        parse_bytes("2 parsecs")
    with pytest.raises(WorkloadError):
        make_workload(network_from_edges("x", 1, [], [2]), "zigzag", 10, seed=1)


# ---- htsim connection matrices -----------------------------------------------------------------


def test_connection_matrix_round_trip(tmp_path: Path, ring: SimNetwork) -> None:
    w = make_workload(ring, "uniform", "websearch", seed=3, arrival_rate=100, duration_ps=10**10)
    path = tmp_path / "flows.cm"
    write_connection_matrix(w, ring.n_hosts, path)
    # The first line is a comment to htsim: what lets a later run replace the file.
    signature, *lines = path.read_text().splitlines()
    assert signature.startswith("# ") and "fatpaths" in signature
    assert lines[0] == "Nodes 32" and lines[1] == f"Connections {w.n_flows}"
    assert lines[2].startswith(f"{w.src[0]}->{w.dst[0]} id 1 start {w.start_ps[0]} size ")
    nodes, back = read_connection_matrix(path)
    assert nodes == 32
    for key in ("src", "dst", "size", "start_ps"):
        np.testing.assert_array_equal(getattr(back, key), getattr(w, key))


def test_connection_matrix_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.cm"
    path.write_text("Nodes 4\nConnections 1\n# comment\n0->1 id 1 start 0 size 10 trigger 3\n")
    with pytest.raises(ConnectionMatrixError, match=r"bad.cm:4: unsupported field"):
        read_connection_matrix(path)
    path.write_text("Nodes 4\nConnections 2\n0->1 id 1 start 0 size 10\n")
    with pytest.raises(ConnectionMatrixError, match="Connections 2"):
        read_connection_matrix(path)


# ---- compiled fabrics --------------------------------------------------------------------------


def write_compiled(out: Path) -> None:
    """A hand-made `fatpaths compile` output: a 4-switch square, two layers (no address plan,
    no checksums: the fields the simulator reads, in the shape the loader checks)."""
    names = ["sq-a", "sq-b", "sq-c", "sq-d"]
    edges = [(0, 1), (1, 2), (2, 3), (3, 0)]
    layers = [[0, 1, 2, 3], [0, 1, 2]]  # layer 2 drops the d-a link
    link_a = np.array([e[0] for e in edges], dtype=np.int32)
    link_b = np.array([e[1] for e in edges], dtype=np.int32)
    dist, nxt = [], []
    for links in layers:
        d, n = minimal_routing(4, link_a[links], link_b[links], 1)
        dist.append(d)
        nxt.append(n)
    fabric = {
        "schema": "fatpaths.fabric/2",
        "name": "square",
        "switches": [
            {"name": name, "index": i, "platform": "frr", "role": "switch", "ports": []}
            for i, name in enumerate(names)
        ],
        "links": [
            {
                "index": i,
                "a": {"switch": names[a], "port": "e1"},
                "b": {"switch": names[b], "port": "e2"},
                "speed_gbps": 10.0,
            }
            for i, (a, b) in enumerate(edges)
        ],
        "hosts": [
            {
                "index": 2 * s + j,
                "name": f"{names[s]}-h{j}",
                "switch": names[s],
                "port": f"h{j}",
                "speed_gbps": 10.0,
            }
            for s in range(4)
            for j in range(2)
        ],
        "layers": [
            {"id": i + 1, "algorithm": "random", "links": links, "ecmp": i == 0}
            for i, links in enumerate(layers)
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "fabric.json").write_text(json.dumps(fabric))
    np.savez(out / "routing.npz", dist=np.stack(dist), next_hop=np.stack(nxt))


def test_load_network_reads_a_compiled_output(tmp_path: Path) -> None:
    write_compiled(tmp_path / "out")
    net = load_network(tmp_path / "out")
    assert net.name == "square"
    assert net.switch_names == ["sq-a", "sq-b", "sq-c", "sq-d"]
    assert net.n_hosts == 8 and net.n_layers == 2
    assert net.host_switch.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert net.multipath == [True, False]
    assert net.layer_links.tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    np.testing.assert_array_equal(net.host_gbps, 10.0)
    # In layer 2, a and d are three hops apart: the route goes around the missing link.
    assert net.dist[1][0, 3] == 3 and net.dist[0][0, 3] == 1
    w = make_workload(net, "permutation", "100KB", seed=1)
    result = simulate(net, w, SimConfig(load_balancing="fatpaths", fatpaths_layers=(2,)))
    assert result.finished.all()
    assert set(result.flows["layers_used"].tolist()) == {0b10}


def test_load_network_errors(tmp_path: Path) -> None:
    with pytest.raises(UserErrors, match="not a compiled fabric directory"):
        load_network(tmp_path / "missing")
    write_compiled(tmp_path / "out")
    data = json.loads((tmp_path / "out" / "fabric.json").read_text())
    data["schema"] = "something/2"
    (tmp_path / "out" / "fabric.json").write_text(json.dumps(data))
    with pytest.raises(UserErrors, match="unsupported schema 'something/2'"):
        load_network(tmp_path / "out")


# ---- the command -------------------------------------------------------------------------------


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fatpaths (test shell)"""

    add_commands(app)
    return app


def test_simulate_command_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    runner = CliRunner()
    result = runner.invoke(
        cli(),
        [
            "simulate", str(out), "--workload", "permutation", "--size", "200KB",
            "--transport", "ndp", "--compare", "ecmp,fatpaths", "--seed", "3",
            "--save-matrix", str(tmp_path / "flows.cm"), "--plot",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    run = out / "sim" / "ecmp+fatpaths-ndp-permutation-200KB-seed3"
    for scheme in ("ecmp", "fatpaths"):
        summary = json.loads((run / scheme / "summary.json").read_text())
        assert summary["flows"] == summary["flows_finished"] == 8
        assert summary["config"]["load_balancing"] == scheme
        assert summary["fct"]["median_us"] > 0
        assert summary["events"] > 0 and summary["cpu_seconds"] > 0
        with (run / scheme / "flows.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == 8
        assert all(float(r["fct_us"]) > 0 for r in rows)
        assert rows[0]["src"].startswith("sq-")
    assert (run / "fct_cdf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "permutation" in png_title(run / "fct_cdf.png")
    # One flow size: a plot of FCT against size would be one column of dots.
    assert not (run / "fct_vs_size.png").exists()
    # The saved matrix runs again through --workload FILE, giving the same flows.
    again = runner.invoke(
        cli(),
        ["simulate", str(out), "--workload", str(tmp_path / "flows.cm"), "--lb", "ecmp",
         "--seed", "3", "-o", str(tmp_path / "again")],
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    first = (run / "ecmp" / "flows.csv").read_text()
    assert (tmp_path / "again" / "flows.csv").read_text() == first
    # Plots only on --plot: matplotlib's import would outweigh a small run's simulation.
    assert not (tmp_path / "again" / "fct_cdf.png").exists()


def test_simulate_command_rejects_bad_options(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    runner = CliRunner()
    bad_lb = runner.invoke(cli(), ["simulate", str(out), "--lb", "magic"])
    assert bad_lb.exit_code == 2
    assert "magic" in bad_lb.output
    missing = runner.invoke(cli(), ["simulate", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert "not a compiled fabric directory (no fabric.json)" in missing.output


# ---- where runs go, what their tables and plots say ---------------------------------------------


def run_dirs(out: Path) -> set[str]:
    return {p.name for p in (out / "sim").iterdir() if p.is_dir()}


def test_runs_with_different_schemes_do_not_overwrite_each_other(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    runner = CliRunner()
    base = ["simulate", str(out), "--size", "100KB"]
    assert runner.invoke(cli(), [*base, "--lb", "ecmp"]).exit_code == 0
    ecmp = out / "sim" / "ecmp-ndp-permutation-100KB-seed1"
    first = {p.name: p.read_bytes() for p in ecmp.iterdir()}
    assert runner.invoke(cli(), [*base, "--lb", "fatpaths"]).exit_code == 0
    fatpaths = out / "sim" / "fatpaths-ndp-permutation-100KB-seed1"
    assert run_dirs(out) == {ecmp.name, fatpaths.name}
    assert {p.name: p.read_bytes() for p in ecmp.iterdir()} == first
    for folder, scheme in ((ecmp, "ecmp"), (fatpaths, "fatpaths")):
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["config"]["load_balancing"] == scheme


def test_a_run_with_other_options_takes_the_next_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    runner = CliRunner()
    base = ["simulate", str(out), "--size", "100KB", "--lb", "ecmp"]
    assert runner.invoke(cli(), base).exit_code == 0
    result = runner.invoke(cli(), [*base, "--mtu", "1500"])
    assert result.exit_code == 0, result.output
    assert run_dirs(out) == {
        "ecmp-ndp-permutation-100KB-seed1",
        "ecmp-ndp-permutation-100KB-seed1-2",
    }
    assert "ecmp-ndp-permutation-100KB-seed1-2" in result.output.replace("\n", "")
    mtus = {
        json.loads((out / "sim" / name / "run.json").read_text())["mtu"] for name in run_dirs(out)
    }
    assert mtus == {9000, 1500}
    # The same command again is the same run: it replaces its own directory.
    assert runner.invoke(cli(), [*base, "--mtu", "1500"]).exit_code == 0
    assert len(run_dirs(out)) == 2


def test_explicit_output_directory_never_mixes_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    runner = CliRunner()
    target = tmp_path / "results[run1]"  # brackets that rich markup would swallow
    compare = ["simulate", str(out), "--size", "100KB", "--compare", "ecmp,fatpaths"]
    first = runner.invoke(cli(), [*compare, "-o", str(target)])
    assert first.exit_code == 0, first.output
    assert f"results in {target}\n" in first.output
    assert (target / "ecmp" / "flows.csv").is_file()
    single = runner.invoke(cli(), ["simulate", str(out), "--size", "100KB", "-o", str(target)])
    assert single.exit_code == 0, single.output
    assert (target / "flows.csv").is_file()
    assert not (target / "ecmp").exists() and not (target / "fatpaths").exists()
    # A directory of other files is refused, and left as it was.
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "todo.txt").write_text("keep me")
    refused = runner.invoke(cli(), ["simulate", str(out), "-o", str(foreign)])
    assert refused.exit_code == 2
    assert "not a fatpaths simulate output" in refused.output.replace("\n", " ")
    assert [p.name for p in foreign.iterdir()] == ["todo.txt"]


def test_simulate_table_says_units_and_what_ran(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_compiled(out)
    result = CliRunner().invoke(
        cli(), ["simulate", str(out), "--size", "100KB", "--compare", "ecmp,fatpaths"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    title = next(line for line in lines if "flow completion time" in line)
    assert "square" in title and "permutation 100KB" in title and "ndp" in title
    header = next(line for line in lines if "scheme" in line)
    for unit in ("mean FCT µs", "p99 FCT µs", "median Gb/s", "CPU s"):
        assert unit in header
    rows = [line for line in lines if "fatpaths" in line and "8/8" in line]
    assert len(rows) == 1 and "layers 1-2" in rows[0]
    assert not result.output.startswith("\n")


# ---- plots -------------------------------------------------------------------------------------


def png_title(path: Path) -> str:
    from PIL import Image

    with Image.open(path) as image:
        return str(image.text["Title"])  # type: ignore[attr-defined]


def test_fct_cdf_says_what_ran_and_keeps_coinciding_curves_apart(
    ring: SimNetwork, tmp_path: Path
) -> None:
    from fatpaths_cfg.sim.plots import fct_cdf_figure, plot_fct_cdf

    work = make_workload(ring, "permutation", "64KiB", seed=1)
    ecmp = simulate(ring, work, SimConfig(transport="tcp", load_balancing="ecmp"))
    # The same result twice: the second curve lies exactly on the first.
    fig = fct_cdf_figure({"ecmp": ecmp, "ecmp again": ecmp})
    ax = fig.axes[0]
    assert "ring" in ax.get_title() and "permutation 64KiB" in ax.get_title()
    assert "tcp" in ax.get_title() and f"{ring.n_layers} layers" in ax.get_title()
    first, second = ax.get_lines()
    assert (first.get_linestyle(), first.get_marker()) != (
        second.get_linestyle(),
        second.get_marker(),
    )
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "same curve as ecmp" in legend[1] and "all links" in legend[0]
    plot_fct_cdf({"ecmp": ecmp}, tmp_path / "cdf.png")
    assert "ring" in png_title(tmp_path / "cdf.png")


def test_fct_cdf_counts_unfinished_flows(ring: SimNetwork) -> None:
    from fatpaths_cfg.sim.plots import fct_cdf_figure

    work = make_workload(ring, "permutation", "1MB", seed=1)
    cut = simulate(ring, work, SimConfig(transport="ndp", duration_us=2000))
    none = simulate(ring, work, SimConfig(transport="ndp", duration_us=5))
    finished = int(np.sum(cut.finished))
    assert 0 < finished < work.n_flows and not np.any(none.finished)
    legend = fct_cdf_figure({"cut": cut, "none": none}).axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert f"{work.n_flows - finished} of {work.n_flows} flows unfinished" in texts[0]
    assert f"none of {work.n_flows} flows finished" in texts[1]


def test_fct_vs_size_only_when_sizes_differ(ring: SimNetwork, tmp_path: Path) -> None:
    from fatpaths_cfg.sim.plots import plot_fct_vs_size

    config = SimConfig(transport="ndp")
    one_size = simulate(ring, make_workload(ring, "permutation", "64KiB", seed=1), config)
    assert not plot_fct_vs_size({"spray": one_size}, tmp_path / "one.png")
    assert not (tmp_path / "one.png").exists()
    mixed = simulate(ring, make_workload(ring, "permutation", "websearch", seed=1), config)
    assert plot_fct_vs_size({"spray": mixed}, tmp_path / "mixed.png")
    title = png_title(tmp_path / "mixed.png")
    assert "ring" in title and "websearch" in title and "ndp" in title
