"""Sweep plots: a heatmap of the metric over layers x rho, and the Pareto view of cost against
the metric, one pair per fabric and task. Titles say which fabric, task and metric; PNGs carry
no timestamps, so a resumed sweep that computed nothing redraws identical files."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from fatpaths_cfg.sweep.summary import (
    COSTS,
    METRIC_LABEL,
    PointScore,
    TaskGroup,
    pareto_front,
    point_scores,
    task_groups,
)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    _pyplot().close(figure)
    return buffer.getvalue()


def sweep_plots(name: str, rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """File name -> PNG bytes for every task group with at least one successful point."""
    plots: dict[str, bytes] = {}
    for group, group_rows in task_groups(rows).items():
        scores = point_scores(group, group_rows)
        if not scores:
            continue
        seeds = sorted({row["seed"] for row in group_rows})
        # A heatmap needs two axes: with one layer count or one rho it is a single column,
        # which the comparison view draws as a line instead.
        if len({s.layers for s in scores}) > 1 and len({s.rho for s in scores}) > 1:
            plots[f"heatmap-{group.slug()}.png"] = heatmap(name, group, scores, seeds)
        if len(scores) > 1:
            plots[f"pareto-{group.slug()}.png"] = pareto(name, group, scores)
    from fatpaths_cfg.sweep.compare import comparison_plots

    plots.update(comparison_plots(name, rows))
    return plots


def heatmap(name: str, group: TaskGroup, scores: list[PointScore], seeds: list[int]) -> bytes:
    plt = _pyplot()
    algorithms = sorted({s.algorithm for s in scores})
    layers = sorted({s.layers for s in scores})
    rhos = sorted({s.rho for s in scores})
    figure, axes = plt.subplots(
        1,
        len(algorithms),
        figsize=(max(7.0, 2.5 + 1.3 * len(rhos) * len(algorithms)), 2.4 + 0.55 * len(layers)),
        squeeze=False,
        layout="constrained",
    )
    values = [s.value for s in scores]
    # Greener is better whichever way the metric points.
    cmap = "viridis" if group.higher_is_better else "viridis_r"
    for axis, algorithm in zip(axes[0], algorithms, strict=True):
        grid = np.full((len(layers), len(rhos)), np.nan)
        for s in scores:
            if s.algorithm == algorithm:
                grid[layers.index(s.layers), rhos.index(s.rho)] = s.value
        image = axis.imshow(
            grid, cmap=cmap, vmin=min(values), vmax=max(values), origin="lower", aspect="auto"
        )
        for (i, j), value in np.ndenumerate(grid):
            text = "failed" if np.isnan(value) else f"{value:.3g}"
            # Dark text on viridis' bright end, light text on its dark end.
            shade = image.norm(value) if group.higher_is_better else 1 - image.norm(value)
            color = "black" if not np.isnan(value) and shade > 0.6 else "white"
            axis.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
        axis.set_xticks(range(len(rhos)), [f"{r:g}" for r in rhos])
        axis.set_yticks(range(len(layers)), [str(n) for n in layers])
        axis.set_xlabel("rho (share of links kept per sparse layer)")
        axis.set_ylabel("layers n")
        axis.set_title(f"algorithm {algorithm}", fontsize=9)
    figure.colorbar(image, ax=axes[0].tolist(), label=METRIC_LABEL[group.metric])
    figure.suptitle(
        f"{group.topology}: {METRIC_LABEL[group.metric]}\n"
        f"sweep {name}; {group.describe()}\nmean over seeds {', '.join(map(str, seeds))}",
        fontsize=9,
    )
    return _png(figure)


def pareto(name: str, group: TaskGroup, scores: list[PointScore]) -> bytes:
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(COSTS), figsize=(5 * len(COSTS), 4.2), squeeze=False)
    algorithms = sorted({s.algorithm for s in scores})
    for axis, (cost, cost_label) in zip(axes[0], COSTS.items(), strict=True):
        for algorithm in algorithms:
            mine = [s for s in scores if s.algorithm == algorithm]
            axis.scatter(
                [getattr(s, cost) for s in mine], [s.value for s in mine], label=algorithm, s=22
            )
        front = pareto_front(group, scores, cost)
        axis.step(
            [getattr(s, cost) for s in front],
            [s.value for s in front],
            where="post",
            color="black",
            linewidth=0.8,
            label="Pareto front",
        )
        for s in front:
            axis.annotate(
                f"n={s.layers} rho={s.rho:g}",
                (getattr(s, cost), s.value),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
            )
        if cost == "vlans" and not any(s.vlans for s in scores):
            axis.text(
                0.5, 0.5, "prefix encoding: no VLANs used", transform=axis.transAxes, ha="center"
            )
            axis.set_xticks([0])
        axis.set_xlabel(f"{cost_label} (fewer is cheaper)")
        axis.set_ylabel(METRIC_LABEL[group.metric])
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    figure.suptitle(
        f"{group.topology}: cost against {METRIC_LABEL[group.metric]}\n"
        f"sweep {name}; {group.describe()}",
        fontsize=9,
    )
    figure.tight_layout()
    return _png(figure)
