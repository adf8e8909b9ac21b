"""Path diversity and maximum achievable throughput."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis.diversity import disjoint_shortest_paths, pair_diversity
from fatpaths_cfg.analysis.path_sampling import sample_pairs
from fatpaths_cfg.analysis.throughput import max_achievable_throughput
from fatpaths_cfg.analysis.traffic import host_pairs, switch_demand
from fatpaths_cfg.cli.analyze import add_commands
from fatpaths_cfg.compiled import load_compiled

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def _compile(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    tree = api.build_output(api.compile_fabric(INVENTORIES / f"{name}.yaml"))
    tree.commit(out)
    return out


def test_slimfly_has_a_single_disjoint_shortest_path_but_layers_add_more(tmp_path: Path) -> None:
    compiled = load_compiled(_compile(tmp_path, "slimfly-q5"))
    pairs = sample_pairs(np.arange(compiled.fabric.nr), 10_000, np.random.default_rng(1))
    diversity = pair_diversity(compiled.fabric, compiled.next_hop, compiled.dist[0], pairs)
    assert all(d.disjoint_shortest_paths == 1 for d in diversity)  # Hoffman-Singleton graph
    assert np.mean([d.disjoint_layer_paths for d in diversity]) > 2.0
    assert all(d.disjoint_layer_paths <= d.distinct_layer_paths for d in diversity)


def test_fat_tree_edge_switches_in_other_pods_have_two_disjoint_shortest_paths(
    tmp_path: Path,
) -> None:
    compiled = load_compiled(_compile(tmp_path, "fattree-k4"))
    fabric = compiled.fabric
    edge = [s.index for s in fabric.switches if s.role == "edge"]
    far = [(a, b) for a in edge for b in edge if compiled.dist[0, a, b] == 4]
    assert far
    for a, b in far:
        assert disjoint_shortest_paths(fabric, compiled.dist[0], a, b) == 2


def test_layers_raise_permutation_throughput_above_minimal_routing(tmp_path: Path) -> None:
    compiled = load_compiled(_compile(tmp_path, "slimfly-q5"))
    fabric = compiled.fabric
    demand = switch_demand(fabric, host_pairs(fabric, "permutation", np.random.default_rng(1)))
    minimal = max_achievable_throughput(
        fabric, compiled.next_hop, compiled.dist, demand, "single-path"
    )
    layered = max_achievable_throughput(
        fabric, compiled.next_hop, compiled.dist, demand, "fatpaths"
    )
    assert 0 < minimal.throughput < layered.throughput <= 1.0
    assert layered.max_link_utilisation <= 1.0 + 1e-6
    # minimal routing is limited by its busiest link: exactly saturated at the optimum
    assert abs(minimal.max_link_utilisation - 1.0) < 1e-6


def test_clique_uniform_traffic_is_not_link_limited(tmp_path: Path) -> None:
    compiled = load_compiled(_compile(tmp_path, "clique-k7"))
    fabric = compiled.fabric
    demand = switch_demand(fabric, host_pairs(fabric, "uniform", np.random.default_rng(1)))
    result = max_achievable_throughput(
        fabric, compiled.next_hop, compiled.dist, demand, "single-path"
    )
    assert abs(result.throughput - 1.0) < 1e-9


def test_analyze_command_writes_json_and_plot(tmp_path: Path) -> None:
    out = _compile(tmp_path, "hand-6")
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    result = CliRunner().invoke(app, ["analyze", str(out), "--pairs", "30"])
    assert result.exit_code == 0, result.output
    assert "max achievable throughput, share of line rate" in result.output
    data = json.loads((out / "analysis" / "analysis.json").read_text())
    assert set(data["max_achievable_throughput"]) == {"uniform", "permutation", "off-diagonal"}
    assert (out / "analysis" / "analysis.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(app, ["analyze", str(out), "--traffic", "nonsense"])
    assert bad.exit_code == 2


def test_analyze_stdout_is_the_table_and_result_lines_only(tmp_path: Path) -> None:
    """HiGHS prints a banner from C++ when its first solver is made: a separate process, so
    the check sees file descriptor 1 as a pipe into `analyze OUT | ...` would."""
    import subprocess
    import sys

    out = _compile(tmp_path, "hand-6")
    done = subprocess.run(
        [sys.executable, "-m", "fatpaths_cfg.cli", "analyze", str(out), "--pairs", "10",
         "--quadruples", "4", "--exact-samples", "2", "--results", str(tmp_path / "a")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].strip() == "max achievable throughput, share of line rate: hand6"
    assert not [line for line in lines if "HiGHS" in line or "Copyright" in line]
    assert lines[-1].startswith("wrote ")


def test_plane_analysis_of_a_fabric_it_cannot_take_is_a_located_error(tmp_path: Path) -> None:
    out = _compile(tmp_path, "hand-6")  # links at 25G but one at 100G: one plane, two speeds
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    result = CliRunner().invoke(app, ["analyze", str(out), "--planes"])
    assert result.exit_code == 2, result.output
    assert f"{out / 'fabric.json'}: plane 0 mixes link speeds" in result.output
    assert not (out / "planes").exists()
