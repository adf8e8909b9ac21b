"""The FatPaths paper's Slim Fly simulations, rerun with the paper's profile.

Runs the set-ups behind the paper's statements on Slim Fly (Section VII-B/C: Figures 11, 14, 16
and 17) on one Slim Fly with 1 full + 8 random-sampled layers (rho 0.6), 10 Gb/s, 9 KB frames,
pFabric web-search sizes discretised to 20 (`websearch-sc20`), Poisson arrivals over a 5 ms
window whose first half is warm-up, every flow run to completion (`--profile fatpaths-sc20`),
and prints each measured ratio beside the paper's. The paper's figures are plots; only the
statements its text makes are quoted here, the others are marked "-".

    python benchmarks/sim_paper_repro.py [--q 19] [--seed 1]

Slim Fly q=19 (722 switches, 10,830 hosts) takes a few minutes per experiment on two cores;
--q 7 (588 hosts) takes seconds.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fatpaths_cfg.sim import SimConfig, SimNetwork, make_workload, network_from_edges, simulate
from fatpaths_cfg.sim.network import sampled_layers
from fatpaths_cfg.sim.results import SimResult

WINDOW_PS = 5_000_000_000
WARMUP_US = 2_500.0
MIN_RTO_US = 200.0
# The paper's TCP runs limited FatPaths to n = 4 layers (Section VII-C).
TCP_LAYERS = (1, 2, 3, 4)


def slimfly(q: int, seed: int) -> SimNetwork:
    from fatpaths_cfg.topologies import generate

    topo = generate("slimfly", {"q": q}, seed)
    base = network_from_edges("sf", topo.num_switches, topo.edges, topo.hosts_per_switch)
    return network_from_edges(
        f"slimfly-q{q}",
        topo.num_switches,
        topo.edges,
        topo.hosts_per_switch,
        link_gbps=10.0,
        seed=seed,
        extra_layers=sampled_layers(base, 8, 0.6, seed),
    )


@dataclass(frozen=True)
class Experiment:
    figure: str
    what: str
    transport: str
    pattern: str
    size: str
    arrival_rate: float | None
    metric: str
    schemes: tuple[tuple[str, str, tuple[int, ...] | None], ...]
    paper: str
    why: str


def p99(result: SimResult) -> float:
    stats = result.summary()["fct_with_unfinished"]
    assert isinstance(stats, dict)
    return float(stats["p99_us"])


def mean(result: SimResult) -> float:
    stats = result.summary()["fct_with_unfinished"]
    assert isinstance(stats, dict)
    return float(stats["mean_us"])


def completion(result: SimResult) -> float:
    """Total completion time of the workload (the last flow's finish), in µs."""
    return float(np.max(result.flows["finish_ps"])) / 1e6


METRICS: dict[str, Callable[[SimResult], float]] = {
    "mean FCT": mean,
    "p99 FCT": p99,
    "completion": completion,
}

FATPATHS = ("fatpaths", "fatpaths", None)
ECMP = ("ecmp", "ecmp", None)
LETFLOW = ("letflow", "letflow", None)

EXPERIMENTS = (
    Experiment(
        "Fig. 11", "skewed adversarial, NDP", "ndp", "adversarial", "websearch-sc20", 300.0,
        "mean FCT", (ECMP, LETFLOW, FATPATHS), "-",
        "the paper's pattern is an off-diagonal with skewed offsets; ours pairs neighbours",
    ),
    Experiment(
        "Fig. 11", "skewed adversarial, NDP", "ndp", "adversarial", "websearch-sc20", 300.0,
        "p99 FCT", (ECMP, LETFLOW, FATPATHS), "-", "as above",
    ),
    Experiment(
        "Fig. 14", "random mapping, TCP, n=4", "tcp", "uniform", "websearch-sc20", 200.0,
        "p99 FCT", (ECMP, LETFLOW, ("fatpaths", "fatpaths", TCP_LAYERS)), "> 2.5 (some flows)",
        "the paper quotes single flows; a p99 over all sizes mixes short TCP-bound flows in",
    ),
    Experiment(
        "Fig. 16", "1 MiB flows, TCP, rho 0.6 vs 1", "tcp", "uniform", "1MiB", 200.0,
        "p99 FCT", (("rho=1", "fatpaths", (1,)), ("fatpaths", "fatpaths", TCP_LAYERS)), "2",
        "rho=1 is layer 1 alone here (one minimal path), the paper's rho=1 keeps n layers",
    ),
    Experiment(
        "Fig. 17", "stencil, 200 KB, TCP", "tcp", "stencil", "200KB", None,
        "completion", (ECMP, LETFLOW, ("fatpaths", "fatpaths", TCP_LAYERS)), "> 2.5",
        "one wave of stencil flows (the loop with compute + barrier: tcp_decomposition --stencil)",
    ),
)  # fmt: skip


def run(net: SimNetwork, exp: Experiment, seed: int) -> dict[str, SimResult]:
    work = make_workload(
        net,
        exp.pattern,
        exp.size,
        seed=seed,
        arrival_rate=exp.arrival_rate,
        duration_ps=WINDOW_PS if exp.arrival_rate else None,
        randomize_mapping=exp.pattern != "adversarial",
    )
    values = {}
    for label, lb, layers in exp.schemes:
        config = SimConfig(
            transport=exp.transport,
            load_balancing=lb,
            fatpaths_layers=layers,
            min_rto_us=MIN_RTO_US,
            warmup_us=WARMUP_US if exp.arrival_rate else 0.0,
            seed=seed,
        )
        values[label] = simulate(net, work, config)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, default=19)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    net = slimfly(args.q, args.seed)
    print(f"{net.name}: {net.n_switches} switches, {net.n_hosts} hosts, {net.n_layers} layers")
    header = f"{'figure':8} {'set-up':34} {'metric':10} {'baseline µs':>12} {'FatPaths µs':>12}"
    print(f"{header} {'ratio':>6}  {'paper':18} where it differs")
    # Experiments that differ only in the metric share their runs.
    cache: dict[tuple[str, str], dict[str, SimResult]] = {}
    for exp in EXPERIMENTS:
        started = time.perf_counter()
        key = (exp.figure, exp.what)
        if key not in cache:
            cache[key] = run(net, exp, args.seed)
        metric = METRICS[exp.metric]
        values = {label: metric(result) for label, result in cache[key].items()}
        fat = values["fatpaths"]
        for label, baseline in values.items():
            if label == "fatpaths":
                continue
            print(
                f"{exp.figure:8} {exp.what + ' (' + label + ')':34} {exp.metric:10} "
                f"{baseline:12,.1f} {fat:12,.1f} {baseline / fat:6.2f}  {exp.paper:18} {exp.why}"
            )
        print(f"{'':8} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
