"""FatPaths over TCP, one cause at a time: the FatPaths paper's TCP set-up (Figure 14: Slim Fly,
1 + 8 layers at rho 0.6, FatPaths limited to n = 4 layers, 10 Gb/s, the `websearch-sc20` sizes,
uniform traffic with a randomized mapping, Poisson arrivals over 5 ms with the first half as
warm-up, a 200 us minimum RTO), run with ECMP and with FatPaths on the same flows, then again
with exactly one thing changed, to see what each contributes to FatPaths' gain.

For each variant it prints, on one line: ECMP's and FatPaths' mean and p99 FCT and their ratios
(ECMP / FatPaths, above 1 when FatPaths is faster), the share of flows that FatPaths finishes at
least 2.5x faster than ECMP (the paper's Figure 14 speaks of "some flows" gaining more than
2.5x: the same flow is compared, so this is per flow, not of two distributions), and FatPaths'
spurious retransmissions and timeouts per flow. Every run's invariants must hold.

    python benchmarks/tcp_decomposition.py [--q 7] [--seed 1] [--only NAME ...] [--json FILE]
    python benchmarks/tcp_decomposition.py --stencil [--q 7] [--seed 1] [--only NAME ...]

`--stencil` runs the paper's Figure 17 instead (a stencil with compute and barrier phases, TCP,
200 KB halo messages, FatPaths on n = 4 layers against ECMP): the stencil as one wave of flows,
as Poisson arrivals, and as the application loop (`simulate --iterations`), and prints each
one's completion time (the paper's metric) and its FCTs, ECMP / FatPaths.

Slim Fly q=7 (588 hosts) takes about a second per variant here; q=19 (10,830 hosts) minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_paper_repro import MIN_RTO_US, TCP_LAYERS, WARMUP_US, WINDOW_PS, slimfly

from fatpaths_cfg.sim import SimConfig, SimNetwork, Workload, make_workload, simulate
from fatpaths_cfg.sim.loops import application_loop
from fatpaths_cfg.sim.results import SimResult

# What a flow must gain to count as one of the paper's "some flows".
PAPER_GAIN = 2.5


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    # SimConfig fields changed for both schemes (FatPaths' layer limit is the scheme's own).
    config: dict[str, Any] = field(default_factory=dict)
    # Workload changes: pattern, size, arrival rate (flows/s per host).
    pattern: str = "uniform"
    size: str = "websearch-sc20"
    arrival_rate: float = 200.0
    layers: tuple[int, ...] | None = TCP_LAYERS


VARIANTS = (
    Variant("paper", "the paper's set-up as the reproduction runs it"),
    Variant("load x5", "1,000 flows/s per host instead of 200", arrival_rate=1000.0),
    Variant("gap 10us", "flowlet gap 10 us (a new layer more often)", {"flowlet_gap_us": 10.0}),
    Variant("gap 500us", "flowlet gap 500 us (a layer per burst)", {"flowlet_gap_us": 500.0}),
    Variant("per flow", "flowlet gap 1 s: one layer per flow, no reordering",
            {"flowlet_gap_us": 1e6}),
    Variant("uniform layer", "layers drawn uniformly, not adaptively",
            {"layer_policy": "uniform"}),
    Variant("n=9", "every layer, not n = 4", layers=None),
    Variant("rto 1ms", "minimum RTO 1 ms instead of 200 us", {"min_rto_us": 1000.0}),
    Variant("ecn", "DCTCP (ECN marking) instead of TCP", {"transport": "dctcp"}),
    Variant("pacing", "TCP paced over one RTT", {"tcp_pacing": True}),
    Variant("1 MiB", "every flow 1 MiB (Figure 16's sizes)", size="1MiB"),
    Variant("adversarial", "adversarial pattern (neighbouring switches), no randomized mapping",
            pattern="adversarial"),
    Variant("skewed", "skewed off-diagonal (offset chosen farthest), no randomized mapping",
            pattern="skewed-off-diagonal"),
)  # fmt: skip
# Patterns run on the fabric's own host numbering: a random mapping would undo their structure.
UNMAPPED = ("adversarial", "skewed-off-diagonal")


def run_scheme(net: SimNetwork, work: Any, variant: Variant, lb: str, seed: int) -> SimResult:
    base = SimConfig(
        transport="tcp",
        load_balancing=lb,
        fatpaths_layers=variant.layers if lb == "fatpaths" else None,
        min_rto_us=MIN_RTO_US,
        warmup_us=WARMUP_US,
        seed=seed,
    )
    result = simulate(net, work, replace(base, **variant.config))
    broken = [i for i in result.invariants if not i.holds]
    if broken:
        raise SystemExit(
            f"{variant.name} {lb}: invariant {broken[0].name} broken: {broken[0].detail}"
        )
    return result


def fct_us(result: SimResult) -> np.ndarray:
    """Per flow, its completion time in us (NaN for a flow not finished)."""
    finish = result.flows["finish_ps"].astype(np.float64)
    fct = (finish - result.flows["start_ps"]) / 1e6
    return np.where(finish >= 0, fct, np.nan)


def measure(net: SimNetwork, variant: Variant, seed: int) -> dict[str, float | str]:
    work = make_workload(
        net,
        variant.pattern,
        variant.size,
        seed=seed,
        arrival_rate=variant.arrival_rate,
        duration_ps=WINDOW_PS,
        randomize_mapping=variant.pattern not in UNMAPPED,
    )
    started = time.process_time()
    ecmp = run_scheme(net, work, variant, "ecmp", seed)
    fatpaths = run_scheme(net, work, variant, "fatpaths", seed)
    # Flows after the warm-up, finished under both: the same flow, compared.
    measured = work.start_ps >= WARMUP_US * 1e6
    a, b = fct_us(ecmp)[measured], fct_us(fatpaths)[measured]
    both = np.isfinite(a) & np.isfinite(b)
    gain = a[both] / b[both]
    counters = fatpaths.counters
    sent = max(1, int(counters.get("data_packets_sent", 0)))
    flows = max(1, len(work.src))
    return {
        "variant": variant.name,
        "what": variant.what,
        "flows": int(both.sum()),
        "ecmp_mean_us": float(np.mean(a[both])),
        "fatpaths_mean_us": float(np.mean(b[both])),
        "ecmp_p99_us": float(np.percentile(a[both], 99)),
        "fatpaths_p99_us": float(np.percentile(b[both], 99)),
        "share_gaining_2_5x": float(np.mean(gain >= PAPER_GAIN)),
        "share_losing_2_5x": float(np.mean(gain <= 1 / PAPER_GAIN)),
        "fatpaths_spurious_share": int(counters.get("spurious_retransmissions", 0)) / sent,
        "fatpaths_timeouts_per_flow": int(counters.get("timeouts", 0)) / flows,
        "cpu_s": time.process_time() - started,
    }


def line(row: dict[str, Any]) -> str:
    mean = row["ecmp_mean_us"] / row["fatpaths_mean_us"]
    p99 = row["ecmp_p99_us"] / row["fatpaths_p99_us"]
    return (
        f"{row['variant']:<13} mean {row['ecmp_mean_us']:9,.1f} / "
        f"{row['fatpaths_mean_us']:9,.1f} us "
        f"= {mean:4.2f}; p99 {row['ecmp_p99_us']:9,.1f} / {row['fatpaths_p99_us']:9,.1f} us "
        f"= {p99:4.2f}; flows >= 2.5x faster {row['share_gaining_2_5x']:6.1%}, "
        f"slower {row['share_losing_2_5x']:6.1%}; fatpaths spurious "
        f"{row['fatpaths_spurious_share']:5.1%}, timeouts/flow "
        f"{row['fatpaths_timeouts_per_flow']:.2f} ({row['flows']} flows, {row['cpu_s']:.1f} CPU-s)"
    )


@dataclass(frozen=True)
class StencilVariant:
    name: str
    what: str
    # None: one wave at time zero; else Poisson arrivals (flows/s per host) over 5 ms.
    arrival_rate: float | None = None
    iterations: int | None = None
    compute_us: float = 0.0
    size: str = "200KB"
    randomize_mapping: bool = True
    # SimConfig fields changed for both schemes.
    config: dict[str, Any] = field(default_factory=dict)


# The paper gives no iteration count or compute time: a few iterations, with compute short
# beside the exchange (about 640 us of a NIC's time for four 200 KB messages) and as long.
STENCIL_ITERATIONS = 5
STENCIL_VARIANTS = (
    StencilVariant("wave", "one wave of halo messages at t=0, no loop (the Fig. 17 row)"),
    StencilVariant("poisson", "Poisson arrivals to stencil peers, lambda 200, 5 ms",
                   arrival_rate=200.0),
    StencilVariant("loop", "5 iterations: compute 100 us, exchange, barrier",
                   iterations=STENCIL_ITERATIONS, compute_us=100.0),
    StencilVariant("loop c0", "5 iterations without compute: exchange, barrier",
                   iterations=STENCIL_ITERATIONS),
    StencilVariant("loop c1ms", "5 iterations: compute 1 ms, exchange, barrier",
                   iterations=STENCIL_ITERATIONS, compute_us=1000.0),
    StencilVariant("loop 2MB", "5 iterations, compute 100 us, 2 MB messages (the paper's XP)",
                   iterations=STENCIL_ITERATIONS, compute_us=100.0, size="2MB"),
    StencilVariant("loop no map", "5 iterations, compute 100 us, ranks in host order",
                   iterations=STENCIL_ITERATIONS, compute_us=100.0, randomize_mapping=False),
    StencilVariant("loop per flow", "5 iterations, compute 100 us, one layer per flow (gap 1 s)",
                   iterations=STENCIL_ITERATIONS, compute_us=100.0,
                   config={"flowlet_gap_us": 1e6}),
    StencilVariant("loop no map per flow",
                   "ranks in host order and one layer per flow: collisions, no reordering",
                   iterations=STENCIL_ITERATIONS, compute_us=100.0, randomize_mapping=False,
                   config={"flowlet_gap_us": 1e6}),
)  # fmt: skip


def stencil_workload(net: SimNetwork, variant: StencilVariant, seed: int) -> Workload:
    wave = make_workload(
        net,
        "stencil",
        variant.size,
        seed=seed,
        arrival_rate=variant.arrival_rate,
        duration_ps=WINDOW_PS if variant.arrival_rate else None,
        randomize_mapping=variant.randomize_mapping,
    )
    if variant.iterations is None:
        return wave
    return application_loop(wave, variant.iterations, round(variant.compute_us * 1e6))


def measure_stencil(net: SimNetwork, variant: StencilVariant, seed: int) -> dict[str, Any]:
    """ECMP and FatPaths on the same stencil flows: completion time, per-iteration times of a
    loop, mean and p99 FCT (every flow: the loop has no warm-up), spurious retransmissions."""
    work = stencil_workload(net, variant, seed)
    started = time.process_time()
    row: dict[str, Any] = {"variant": variant.name, "what": variant.what, "flows": work.n_flows}
    for lb in ("ecmp", "fatpaths"):
        config = SimConfig(
            transport="tcp",
            load_balancing=lb,
            fatpaths_layers=TCP_LAYERS if lb == "fatpaths" else None,
            min_rto_us=MIN_RTO_US,
            seed=seed,
        )
        result = simulate(net, work, replace(config, **variant.config))
        broken = [i for i in result.invariants if not i.holds]
        if broken:
            raise SystemExit(f"{variant.name} {lb}: invariant {broken[0].name} broken")
        summary = result.summary()
        fct = fct_us(result)
        if not np.all(np.isfinite(fct)):
            raise SystemExit(f"{variant.name} {lb}: {int(np.sum(~np.isfinite(fct)))} unfinished")
        counters = result.counters
        sent = max(1, int(counters.get("data_packets_sent", 0)))
        iteration = summary.get("iteration_time")
        row[lb] = {
            "completion_us": float(np.max(result.flows["finish_ps"])) / 1e6,
            "iteration_median_us": iteration["median_us"] if isinstance(iteration, dict) else None,
            "mean_us": float(np.mean(fct)),
            "p99_us": float(np.percentile(fct, 99)),
            "spurious_share": int(counters.get("spurious_retransmissions", 0)) / sent,
            "timeouts_per_flow": int(counters.get("timeouts", 0)) / work.n_flows,
        }
    row["cpu_s"] = time.process_time() - started
    return row


def stencil_line(row: dict[str, Any]) -> str:
    e, f = row["ecmp"], row["fatpaths"]

    def pair(key: str) -> str:
        return f"{e[key]:9,.1f} / {f[key]:9,.1f} us = {e[key] / f[key]:4.2f}"

    per_iteration = (
        f"; per iteration (median) {pair('iteration_median_us')}"
        if e["iteration_median_us"] is not None
        else ""
    )
    return (
        f"{row['variant']:<13} completion {pair('completion_us')}{per_iteration}; "
        f"mean FCT {pair('mean_us')}; p99 FCT {pair('p99_us')}; spurious "
        f"{e['spurious_share']:5.1%} / {f['spurious_share']:5.1%}, timeouts/flow "
        f"{e['timeouts_per_flow']:.2f} / {f['timeouts_per_flow']:.2f} "
        f"({row['flows']} flows, {row['cpu_s']:.1f} CPU-s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="variant names to run (default: all)")
    parser.add_argument("--json", type=Path, help="write every row here as JSON")
    parser.add_argument("--stencil", action="store_true", help="the Figure 17 stencil variants")
    args = parser.parse_args()
    if args.stencil:
        run_variants(
            args,
            STENCIL_VARIANTS,
            measure_stencil,
            stencil_line,
            lambda net: (
                f"Slim Fly q={args.q} ({net.n_hosts} hosts), seed {args.seed}, stencil, "
                "TCP, ECMP / FatPaths (n = 4), ratios above 1: FatPaths faster"
            ),
        )
        return
    print(f"# python benchmarks/tcp_decomposition.py {' '.join(sys.argv[1:])}")
    run_variants(
        args,
        VARIANTS,
        measure,
        line,
        lambda net: (
            f"Slim Fly q={args.q}, seed {args.seed}, TCP, ECMP / FatPaths "
            "(n = 4 unless said), ratios above 1: FatPaths faster"
        ),
    )


def run_variants(
    args: argparse.Namespace,
    variants: Sequence[Any],
    measure_one: Callable[[SimNetwork, Any, int], dict[str, Any]],
    show: Callable[[dict[str, Any]], str],
    title: Callable[[SimNetwork], str],
) -> None:
    """The chosen variants (`--only`) on one Slim Fly, a line each as it finishes."""
    chosen = [v for v in variants if not args.only or v.name in args.only]
    net = slimfly(args.q, args.seed)
    print(title(net), flush=True)
    rows = []
    for variant in chosen:
        row = measure_one(net, variant, args.seed)
        rows.append(row)
        print(show(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
