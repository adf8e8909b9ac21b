"""`fatpaths analyze OUT --convergence`: adaptive-routing convergence of a compiled Clos, model
and simulation against r for full-rate (p=1) and half-rate (p=2) flows."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.convergence import (
    ClosShape,
    ConvergencePoint,
    clos_shape,
    convergence_point,
)
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.fabric import Fabric


def clos_shape_of(fabric: Fabric, source: str) -> tuple[int, int, int]:
    shape = clos_shape(fabric)
    if shape is None:
        raise UserErrors.single(
            source,
            "",
            "the convergence analysis needs a two-level Clos: leaves with equal host counts, "
            "each linked once to every middle switch, and no other links",
            "compile a `generate: {kind: clos, n: ..., r: ..., m: ...}` inventory",
        )
    return shape


def r_values(r: int, points: int = 8) -> list[int]:
    """Up to `points` values of r from 2 to the fabric's own r, evenly spread."""
    return sorted({int(v) for v in np.linspace(2, r, num=min(points, r - 1)).round()})


def convergence_sweep(
    n: int,
    r: int,
    m: int,
    permutations: int,
    seed: int,
    max_iterations: int,
    tick: Callable[[ConvergencePoint], None],
) -> list[ConvergencePoint]:
    points = []
    for p in (1, 2):
        for rr in r_values(r):
            point = convergence_point(ClosShape(n, rr, m, p), permutations, seed, max_iterations)
            tick(point)
            points.append(point)
    return points


def point_json(point: ConvergencePoint) -> dict[str, Any]:
    data = asdict(point)
    data.update(data.pop("shape"))
    if data["model"] is not None and not np.isfinite(data["model"]):
        data["model"] = "inf"
    return data


def point_line(point: ConvergencePoint) -> str:
    shape = point.shape
    model = "n/a" if point.model is None else f"{point.model:.1f}"
    censored = f", {point.unconverged} hit the cap" if point.unconverged else ""
    return (
        f"Clos(n={shape.n}, r={shape.r}, m={shape.m}) p={shape.p}: model {model} iterations, "
        f"simulated mean {point.mean:.1f}, p95 {point.p95:.0f}, max {point.maximum} over "
        f"{point.permutations} permutations{censored}"
    )


def convergence_plot(points: list[ConvergencePoint], fabric_name: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.5))
    styles = {1: ("tab:red", "o"), 2: ("tab:blue", "s")}
    for p, (color, marker) in styles.items():
        chosen = [pt for pt in points if pt.shape.p == p]
        rs = [pt.shape.r for pt in chosen]
        axis.plot(
            rs,
            [max(pt.mean, 0.1) for pt in chosen],
            color=color,
            marker=marker,
            label=f"p={p}: simulated mean",
        )
        axis.plot(
            rs,
            [max(pt.p95, 0.1) for pt in chosen],
            color=color,
            marker=marker,
            linestyle=":",
            alpha=0.6,
            label=f"p={p}: simulated p95",
        )
        model = [pt.model for pt in chosen if pt.model is not None and np.isfinite(pt.model)]
        if len(model) == len(chosen):
            axis.plot(rs, model, color=color, linestyle="--", label=f"p={p}: Last-Step model")
        for pt in chosen:
            if pt.unconverged:  # the mean is then a lower bound: say so on the point
                axis.annotate(
                    f"{pt.unconverged}/{pt.permutations} capped",
                    (pt.shape.r, pt.mean),
                    textcoords="offset points",
                    xytext=(-30, -14),
                    fontsize=7,
                    color=color,
                )
    first = points[0].shape
    axis.set_yscale("log")
    axis.set_xlabel("r (input = output switches)")
    axis.set_ylabel("iterations to converge")
    axis.set_title(
        f"{fabric_name}: adaptive routing convergence in Clos(n={first.n}, r, m={first.m})\n"
        f"Last-Step model and iteration simulation, {points[0].permutations} random "
        "permutations per point",
        fontsize=9,
    )
    axis.legend(fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()
