"""`fatpaths tune`: the choice under limits, its explanation, and a tuned copy of the inventory
that compiles, written only where tune may write."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dask_fixtures import DaskCluster, dask_cluster
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.sweep.summary import PointScore
from fatpaths_cfg.sweep.tune import (
    TUNED_INVENTORY,
    Limits,
    choose,
    replace_routing_block,
    without_tune_header,
)

INVENTORY = """\
# An 18-switch Slim Fly to tune.
fabric: sf3
defaults: {platform: eos}
generate: {kind: slimfly, q: 3}
routing: {layers: 2, rho: 0.6, seed: 3}   # as first guessed
addressing:
  encoding: vlan
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    with dask_cluster(tmp_path_factory.mktemp("dask")) as running:
        yield running


def test_routing_block_is_replaced_and_everything_else_kept() -> None:
    text = "# head\nfabric: x\nrouting:\n  layers: 2   # old\n  rho: 0.5\n\n# tail\nhosts: []\n"
    replaced = replace_routing_block(text, {"layers": 4, "rho": 0.7})
    assert replaced == "# head\nfabric: x\nrouting:\n  layers: 4\n  rho: 0.7\n\n# tail\nhosts: []\n"
    flow = replace_routing_block("fabric: x\nrouting: {layers: 2}\nseed: 1\n", {"layers": 3})
    assert flow == "fabric: x\nrouting:\n  layers: 3\nseed: 1\n"
    assert (
        replace_routing_block("fabric: x\n", {"layers": 3}) == "fabric: x\nrouting:\n  layers: 3\n"
    )
    tuned = f"{TUNED_INVENTORY} a.yaml\n#   why\nfabric: x\n"
    assert without_tune_header(tuned) == "fabric: x\n"


def _row(layers: int, mat: float, routes: int) -> dict[str, object]:
    return {
        "topology": "f",
        "task": "analyze",
        "traffic": "permutation",
        "scheme": "fatpaths",
        "task_params": "{}",
        "layers": layers,
        "rho": 0.6,
        "algorithm": "random",
        "status": "ok",
        "mat": mat,
        "routes_per_switch": routes,
        "address_bits": 10,
        "vlans": 0,
    }


def test_choice_respects_limits_and_says_what_it_ruled_out() -> None:
    rows = [_row(1, 0.25, 49), _row(4, 0.5, 196), _row(8, 0.7, 392)]
    choice = choose(rows, "f", "mat", Limits(routes_per_switch=300), "results")
    assert (choice.best.layers, choice.best.value) == (4, 0.5)
    lines = choice.explanation()
    assert "of 2 routing points within routes per switch <= 300 (3 evaluated)" in lines[0]
    assert "ruled out: n=8 rho=0.6 random with 0.7 (routes per switch 392 > 300)" in lines
    unconstrained = choose(rows, "f", "mat", Limits(), "results")
    assert unconstrained.best.layers == 8
    with pytest.raises(Exception, match="none of 3 routing points fits routes per switch <= 10"):
        choose(rows, "f", "mat", Limits(routes_per_switch=10), "results")


def test_equal_metric_prefers_the_cheaper_point() -> None:
    rows = [_row(8, 0.5, 392), _row(2, 0.5, 98)]
    assert choose(rows, "f", "mat", Limits(), "results").best.layers == 2
    assert isinstance(choose(rows, "f", "mat", Limits(), "results").best, PointScore)


def test_tune_writes_a_compiling_copy_and_refuses_foreign_files(
    tmp_path: Path, cluster: DaskCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    inventory = tmp_path / "sf3.yaml"
    inventory.write_text(INVENTORY, encoding="utf-8")
    args = ["tune", str(inventory), "--max-vlans", "4", "--layers", "1,2,4,8", "--rho", "0.6"]
    args += ["--scheduler", cluster.address]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    tuned = tmp_path / "sf3-tuned.yaml"
    text = tuned.read_text(encoding="utf-8")
    assert text.startswith(f"{TUNED_INVENTORY} sf3.yaml with VLANs <= 4\n")
    assert "ruled out: n=8 rho=0.6 random" in text
    routing = yaml.safe_load(text)["routing"]
    assert routing["layers"] <= 4 and routing["seed"] == 3
    assert "# An 18-switch Slim Fly to tune.\nfabric: sf3\n" in text
    # Its own sweep ran in a temporary folder: nothing but the tuned copy was written.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sf3-tuned.yaml", "sf3.yaml"]
    summary = api.compile_to_directory(tuned, tmp_path / "compiled")
    assert (summary.directory / "configs" / "eos").is_dir()
    assert len(api.compile_fabric(tuned).layers) == routing["layers"]
    args += ["--results", str(tmp_path / "kept")]
    assert CliRunner().invoke(build_app(), args).exit_code == 0
    tune_sweep = tmp_path / "kept" / "tune-sweep.yaml"
    assert yaml.safe_load(tune_sweep.read_text(encoding="utf-8"))["seeds"] == [3]
    # A rerun may replace what tune wrote (and computes nothing new) ...
    again = CliRunner().invoke(build_app(), args)
    assert again.exit_code == 0, again.output
    assert "running" not in again.output
    # ... but never a file tune did not write.
    foreign = tmp_path / "mine.yaml"
    foreign.write_text("fabric: mine\n", encoding="utf-8")
    refused = CliRunner().invoke(build_app(), [*args, "-o", str(foreign)])
    assert refused.exit_code == 2
    assert "exists and was not written by fatpaths tune" in refused.stderr
    assert foreign.read_text(encoding="utf-8") == "fabric: mine\n"
    itself = CliRunner().invoke(build_app(), [*args, "-o", str(inventory)])
    assert itself.exit_code == 2
    assert inventory.read_text(encoding="utf-8") == INVENTORY


def test_tune_from_existing_results_under_impossible_limits_fails_cleanly(
    tmp_path: Path, cluster: DaskCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    inventory = tmp_path / "sf3.yaml"
    inventory.write_text(INVENTORY, encoding="utf-8")
    base = ["tune", str(inventory), "--layers", "1,2", "--rho", "0.6"]
    base += ["--scheduler", cluster.address, "--results", str(tmp_path / "res")]
    assert CliRunner().invoke(build_app(), base).exit_code == 0
    args = ["tune", str(inventory), "--results", str(tmp_path / "res"), "--max-routes", "5"]
    args += ["-o", str(tmp_path / "tight.yaml")]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 2
    assert "none of 2 routing points fits routes per switch <= 5" in result.stderr
    assert not (tmp_path / "tight.yaml").exists()


def test_tune_chooses_from_a_given_sweep_by_p99_fct(
    tmp_path: Path, cluster: DaskCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sf3.yaml").write_text(INVENTORY, encoding="utf-8")
    sweep = tmp_path / "s3.yaml"
    sweep.write_text(
        "sweep: s3\ntopologies: [{inventory: sf3.yaml}]\ngrid: {layers: [1, 2, 4], rho: [0.6]}\n"
        "tasks: [{simulate: {workload: permutation, size: 16KiB}}]\n",
        encoding="utf-8",
    )
    args = ["tune", "sf3.yaml", "--sweep", str(sweep), "--metric", "fct_p99_us"]
    result = CliRunner().invoke(build_app(), [*args, "--scheduler", cluster.address])
    assert result.exit_code == 0, result.output
    assert "lowest p99 flow completion time [us]" in result.output
    assert "of 3 routing points within no hardware limits" in result.output
    # Without --results the sweep's rows are not kept in the current directory.
    assert not (tmp_path / "out").exists()
    tuned = yaml.safe_load((tmp_path / "sf3-tuned.yaml").read_text(encoding="utf-8"))
    assert tuned["routing"]["layers"] in (1, 2, 4)
