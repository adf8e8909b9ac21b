"""The comparison view of a sweep: schemes that ignore the layers run once per seed, the metric
is drawn against the swept parameter with one line per scheme, and no one-column heatmap."""

from __future__ import annotations

from pathlib import Path

import pytest

from fatpaths_cfg.sweep.compare import comparison_markdown, comparison_plots, comparisons, lines
from fatpaths_cfg.sweep.plots import sweep_plots
from fatpaths_cfg.sweep.spec import load_sweep
from fatpaths_cfg.sweep.summary import summary_markdown
from fatpaths_cfg.sweep.tasks import run_task

LAYER_SWEEP = """\
sweep: compare
topologies:
  - generate: {kind: slimfly, q: 3}
grid:
  layers: [1, 2, 3]
  rho: [0.7]
seeds: [1, 2]
tasks:
  - analyze: {traffic: permutation, pairs: 30, scheme: [fatpaths, ecmp]}
"""


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    path: Path = tmp_path_factory.mktemp("sweep") / "compare.yaml"
    path.write_text(LAYER_SWEEP, encoding="utf-8")
    plan = load_sweep(path)
    return [run_task(task.payload) for task in plan.tasks]


def test_a_scheme_that_ignores_layers_runs_once_per_seed(rows: list[dict[str, object]]) -> None:
    ecmp = [r for r in rows if r["scheme"] == "ecmp"]
    fatpaths = [r for r in rows if r["scheme"] == "fatpaths"]
    # 3 layer counts x 2 seeds for FatPaths; ECMP once per seed, on the one full layer.
    assert len(fatpaths) == 6 and {r["layers"] for r in fatpaths} == {1, 2, 3}
    assert len(ecmp) == 2 and {r["layers"] for r in ecmp} == {1}
    assert all(r["status"] == "ok" for r in rows)


def test_the_comparison_draws_one_line_per_scheme_with_the_spread(
    rows: list[dict[str, object]],
) -> None:
    (comparison, group), *rest = comparisons(rows).items()
    assert not rest
    drawn = {line.scheme: line for line in lines(comparison, group, "layers")}
    assert set(drawn) == {"fatpaths", "ecmp"}
    assert drawn["ecmp"].flat and len(drawn["ecmp"].points) == 1
    assert [value for value, _ in drawn["fatpaths"].points] == [1, 2, 3]
    for _, spread in drawn["fatpaths"].points:
        assert spread.seeds == 2 and spread.low <= spread.mean <= spread.high
    table = "\n".join(comparison_markdown(rows))
    assert "against layers" in table and "ecmp (ignores layers)" in table
    assert "| scheme | 1 | 2 | 3 |" in table


def test_no_one_column_heatmap_and_a_comparison_chart(rows: list[dict[str, object]]) -> None:
    plots = sweep_plots("compare", rows)
    # rho has a single value: the layers-by-rho heatmap would be one column.
    assert not [name for name in plots if name.startswith("heatmap-")]
    compare = [name for name in plots if name.startswith("compare-")]
    assert len(compare) == 1 and compare[0].endswith("-layers.png")
    assert plots[compare[0]].startswith(b"\x89PNG")
    assert comparison_plots("compare", rows).keys() == {compare[0]}
    assert "## Comparison of schemes" in summary_markdown("compare", rows)
