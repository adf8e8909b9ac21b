"""One answer per question: every random choice of `analyze` and of a sweep's analyze task
draws from a stream of its own, so a knob changes only what it names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis.path_metrics import MetricsSettings, path_metrics
from fatpaths_cfg.analysis.path_metrics_report import routed_network
from fatpaths_cfg.analysis.run import analyze
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.support.stable_hash import stream
from fatpaths_cfg.sweep.spec import load_sweep
from fatpaths_cfg.sweep.tasks import run_task

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


@pytest.fixture(scope="module")
def slimfly(tmp_path_factory: pytest.TempPathFactory) -> LoadedCompiled:
    out = tmp_path_factory.mktemp("sf5") / "slimfly-q5"
    api.build_output(api.compile_fabric(INVENTORIES / "slimfly-q5.yaml")).commit(out)
    return load_compiled(out)


def test_streams_are_named_and_seeded() -> None:
    def draws(seed: int, name: str) -> np.ndarray:
        return stream(seed, name).integers(1 << 30, size=4)

    first = draws(1, "analyze.traffic.permutation")
    assert np.array_equal(first, draws(1, "analyze.traffic.permutation"))
    assert not np.array_equal(first, draws(2, "analyze.traffic.permutation"))
    assert not np.array_equal(first, draws(1, "analyze.diversity.pairs"))


def test_permutation_throughput_does_not_depend_on_the_pairs_sampled(
    slimfly: LoadedCompiled,
) -> None:
    # Before the streams were split, slimfly-q5 seed 1 gave fatpaths 0.333 / 0.500 / 0.400
    # for --pairs 500 / 100 / 50 (0.500 / 0.333 / 0.500 for the pairs below): the
    # permutation was drawn after the pair sample, from the same stream.
    schemes = ["fatpaths", "single-path", "ecmp"]
    results = [analyze(slimfly, ["permutation"], schemes, pairs, 1) for pairs in (200, 50, 10)]
    mats = [r["max_achievable_throughput"]["permutation"] for r in results]
    assert mats[0] == mats[1] == mats[2]
    assert [r["pairs_sampled"] for r in results] == [200, 50, 10]
    # The pairs knob still does what it names.
    assert results[0]["diversity"] != results[2]["diversity"]
    # And the seed still matters: another seed draws another permutation.
    other = analyze(slimfly, ["permutation"], ["fatpaths"], 50, 2)
    assert other["max_achievable_throughput"]["permutation"]["fatpaths"] > 0


def test_a_pattern_does_not_depend_on_the_other_patterns_asked_for(
    slimfly: LoadedCompiled,
) -> None:
    alone = analyze(slimfly, ["permutation"], ["fatpaths"], 20, 1)
    after = analyze(slimfly, ["adversarial", "worst-case", "permutation"], ["fatpaths"], 20, 1)
    assert (
        alone["max_achievable_throughput"]["permutation"]
        == after["max_achievable_throughput"]["permutation"]
    )


def test_path_metrics_knobs_change_only_what_they_name(slimfly: LoadedCompiled) -> None:
    net = routed_network(slimfly)
    many = path_metrics(net, MetricsSettings(pairs=60, quadruples=10, exact_samples=0))
    few = path_metrics(net, MetricsSettings(pairs=5, quadruples=10, exact_samples=0))
    assert many["pairs_sampled"] == 60 and few["pairs_sampled"] == 5
    assert many["collisions"] == few["collisions"]
    assert many["interference"] == few["interference"]
    assert many["cdp"] != few["cdp"]


def test_sweep_and_analyze_agree_on_the_same_fabric_and_seed(
    slimfly: LoadedCompiled, tmp_path: Path
) -> None:
    spec = tmp_path / "agree.yaml"
    spec.write_text(
        f"sweep: agree\ntopologies:\n  - inventory: {INVENTORIES / 'slimfly-q5.yaml'}\n"
        "grid:\n  layers: [4]\nseeds: [1]\n"
        "tasks:\n  - analyze: {traffic: permutation, scheme: [fatpaths, ecmp], pairs: 100}\n",
        encoding="utf-8",
    )
    rows = [run_task(task.payload) for task in load_sweep(spec).tasks]
    assert [r["status"] for r in rows] == ["ok", "ok"], [r["error"] for r in rows]
    # `fatpaths analyze` on the compiled inventory (its seed is 1), with another --pairs.
    result = CliRunner().invoke(
        build_app(),
        ["analyze", str(slimfly.directory), "--traffic", "permutation", "--pairs", "40",
         "--quadruples", "0", "--exact-samples", "0", "--collision-permutations", "0",
         "--results", str(tmp_path / "analysis")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "analysis" / "analysis.json").read_text())
    mat = data["max_achievable_throughput"]["permutation"]
    assert {r["scheme"]: r["mat"] for r in rows} == {
        "fatpaths": mat["fatpaths"],
        "ecmp": mat["ecmp"],
    }
