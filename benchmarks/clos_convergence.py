"""Adaptive-routing convergence on a two-level Clos, reproduced (Zahavi et al.).

Two figures of the paper's set-ups, model and simulation side by side:

1. Iterations to converge against r for p=1 and p=2 with n = m = 6 (the paper's Fig. 9a
   set-up): the Last-Step Markov model and the iteration simulation (Algorithm 3) over random
   permutations, one line per point, plus a plot.
2. Static D-Mod-K against adaptive routing on the paper's rearrangeable Clos(24, 48, 24) under
   random permutations: D-Mod-K routes by destination and never moves a flow, so its most
   loaded link (the leaf-to-middle up-links, where it collides) and the share of flows on an
   overloaded link stay as drawn;
   adaptive routing moves flows until no link carries more than p, and the iterations it
   needs are printed beside.

The baseline each figure prints beside is the paper's own trend (exponential in r for p=1, a
few iterations for p=2), checked here as ratios, not as absolute values the model cannot give.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from fatpaths_cfg.analysis.convergence import (
    ClosShape,
    convergence_point,
    random_permutation,
    simulate_iterations,
)
from fatpaths_cfg.analysis.convergence_report import convergence_plot
from fatpaths_cfg.topologies.clos import dmodk_middle


def iterations_against_r(permutations: int, max_iterations: int, out: Path | None) -> None:
    points = []
    for p in (1, 2):
        for r in range(2, 9):
            started = time.process_time()
            point = convergence_point(ClosShape(6, r, 6, p), permutations, 1, max_iterations)
            points.append(point)
            capped = f", {point.unconverged} capped" if point.unconverged else ""
            print(
                f"n=m=6 r={r} p={p}: model {point.model:.1f}, simulated mean {point.mean:.1f} "
                f"p95 {point.p95:.0f}{capped} ({time.process_time() - started:.1f} CPU-s)",
                flush=True,
            )
    full = {pt.shape.r: pt.model or 0.0 for pt in points if pt.shape.p == 1}
    half = {pt.shape.r: pt.model or 0.0 for pt in points if pt.shape.p == 2}
    print(
        f"model growth per +1 r at p=1: x{(full[8] / full[2]) ** (1 / 6):.2f}; "
        f"p=2 stays at {min(half.values()):.1f}-{max(half.values()):.1f} iterations"
    )
    if out is not None:
        out.write_bytes(convergence_plot(points, "benchmarks/clos_convergence.py"))
        print(f"wrote {out}")


def dmodk_against_adaptive(permutations: int, p: int, max_iterations: int) -> None:
    shape = ClosShape(24, 48, 24, p)
    rng = random.Random(7)
    worst_loads, overloaded_shares, iterations = [], [], []
    capped = 0
    for _ in range(permutations):
        destinations = random_permutation(shape, rng)
        # D-Mod-K spreads each output leaf's hosts over distinct middles, so its down-links
        # are clean; the collisions are on the up-links, where one input leaf's flows to
        # destinations equal mod m share a middle.
        load: dict[tuple[str, int, int], int] = {}
        for source, destination in enumerate(destinations):
            middle = dmodk_middle(destination, shape.m)
            up, down = ("up", source // shape.n, middle), ("down", middle, destination // shape.n)
            for link in (up, down):
                load[link] = load.get(link, 0) + 1
        worst_loads.append(max(load.values()))
        overloaded = {link for link, count in load.items() if count > p}
        hit = sum(
            1
            for source, destination in enumerate(destinations)
            if ("up", source // shape.n, dmodk_middle(destination, shape.m)) in overloaded
            or ("down", dmodk_middle(destination, shape.m), destination // shape.n) in overloaded
        )
        overloaded_shares.append(hit / len(destinations))
        run = simulate_iterations(shape, destinations, rng, max_iterations)
        iterations.append(run.iterations)
        capped += not run.converged
    print(
        f"Clos(24, 48, 24) p={p}, {permutations} random permutations: D-Mod-K puts up to "
        f"{statistics.mean(worst_loads):.1f} flows on its busiest link (mean of maxima; "
        f"limit {p}), {statistics.mean(overloaded_shares):.0%} of flows on an overloaded link; "
        f"adaptive routing: mean {statistics.mean(iterations):.1f} iterations, max "
        f"{max(iterations)}"
        + (
            f", {capped} runs stopped at the cap of {max_iterations} still overloaded"
            if capped
            else ", no link overloaded at the end"
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--permutations", type=int, default=100)
    parser.add_argument("--max-iterations", type=int, default=20_000)
    parser.add_argument("--plot", type=Path, default=None, help="PNG of figure 1")
    args = parser.parse_args()
    iterations_against_r(args.permutations, args.max_iterations, args.plot)
    # Full-rate flows on r = 48 would need far more iterations than a run can afford (the
    # point of figure 1), so that case gets a small cap and says how many runs hit it.
    dmodk_against_adaptive(max(args.permutations // 10, 5), 1, min(args.max_iterations, 500))
    dmodk_against_adaptive(max(args.permutations // 10, 5), 2, args.max_iterations)


if __name__ == "__main__":
    main()
