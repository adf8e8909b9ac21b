"""SC'15's saturation study: Slim Fly, MLFM and OFT under MIN, INR and UGAL-L.

Kathareios et al. ("Cost-Effective Diameter-Two Topologies", SC'15, Section 4) measure the
throughput each diameter-two topology accepts as the offered load grows, under uniform random
and worst-case traffic, with minimal (MIN), indirect random (INR) and adaptive (UGAL-L) routing.
This script reruns that study on the packet simulator at the paper's scale (about 3,000
endpoints: Slim Fly q=13 with p=10, MLFM h=15, OFT k=12), prints the saturation throughput of
each combination beside the closed forms, and plots accepted against offered load.

    python benchmarks/sim_sc15_saturation.py [--loads 0.05,0.1,...] [--plot FILE] [--lossless]
        [--warmup-us 20] [--window-us 20]

Offered load: every host starts Poisson one-packet flows whose payload adds up to the given
share of its link; accepted load is the payload delivered per host and second over the
measured window (`--window-us`, after `--warmup-us` of warm-up), as a share of the link.
Saturation throughput is the largest accepted load of the sweep; the table also gives the
median host's accepted load at that point. SC'15 simulated
256-byte packets, flit by flit, on lossless credit-based links with 100 KB of buffer per
port; here packets are 9,000 bytes (far fewer events), queues hold 100 KB, and the transport
is NDP (trimming instead of credits); docs/guide/simulate.md's reproduction section says what that
changes.

`--lossless` runs the paper's model instead: PFC queues (pause at the 100 KB of a port's
ingress share, resume at half; one priority per hop-count channel, as SC'15's virtual
channels) carrying the same NDP one-packet messages. NDP sends its first window without
waiting for pulls, and on lossless queues nothing is trimmed or retransmitted, so every
message leaves its host at once, whatever the network's state: the open-loop injection of
SC'15, with the host NIC's unbounded queue as the paper's source queue. (TCP would do the
same with one packet per flow, but adds retransmission timers that a lossless network never
needs; NDP keeps the two modes identical but for the queues.)
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from fatpaths_cfg.sim import SimConfig, SimNetwork, make_workload, network_from_topology
from fatpaths_cfg.sim.run import NativeEngine, native_engine

MTU = 9_000
HEADER = 64
# 100 KB of buffer per port, as in SC'15's switches.
QUEUE_PACKETS = 11
LINK_GBPS = 100.0
# SC'15: 50 ns links plus 100 ns switch traversal, folded into the link latency.
LINK_LATENCY_PS = 150_000
# One packet per message: SC'15 draws a destination per packet, so each packet is a flow of
# its own here (longer flows turn uniform traffic into receiver hot spots that outlast the
# measured window).
FLOW_BYTES = MTU
# 20 us measured after 20 us of warm-up keeps the 90 runs of a mode within 2 minutes; a network
# past saturation is still filling its queues then, which --warmup-us and --window-us show.
WARMUP_US = 20.0
WINDOW_US = 20.0
# Lossless runs look for a cycle of paused queues this often (a cycle seen twice in a row,
# with nothing sent in between, is a deadlock).
DEADLOCK_CHECK_PS = 5_000_000
ROUTINGS = ("min", "inr", "ugal-l")
PATTERNS = ("uniform", "worst-case")
DEFAULT_LOADS = (0.1, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Topology:
    label: str
    kind: str
    params: dict[str, int | float]
    # Worst-case saturation under minimal routing (SC'15 Section 4.2).
    worst_case_min: float
    worst_case_formula: str


TOPOLOGIES = (
    Topology("Slim Fly q=13, p=10", "slimfly", {"q": 13, "p": 10}, 1 / 20, "1/(2p) = 1/20"),
    Topology("MLFM h=15", "mlfm", {"h": 15}, 1 / 15, "1/h = 1/15"),
    Topology("OFT k=12", "oft", {"k": 12}, 1 / 12, "1/k = 1/12"),
)


def closed_form(topo: Topology, pattern: str, routing: str) -> str:
    """SC'15's analytical saturation point, where it gives one."""
    if routing == "inr":
        # Valiant routing makes every pattern uniform over twice the path length.
        return "1/2"
    if pattern == "worst-case" and routing == "min":
        return topo.worst_case_formula
    if pattern == "uniform" and routing == "min":
        return "1"
    return "-"


@dataclass(frozen=True)
class Accepted:
    """Accepted load, as a share of the link rate: the mean over all hosts, and the median
    host's, as offered load times the part of its offered load that got through (where most
    hosts sit behind a bottleneck link, the median host is one of them)."""

    mean: float
    median_host: float


@dataclass(frozen=True)
class Window:
    """Warm-up and measured window of every run, in simulated picoseconds."""

    warmup_ps: int
    end_ps: int

    @classmethod
    def of(cls, warmup_us: float, window_us: float) -> Window:
        warmup_ps = round(warmup_us * 1e6)
        return cls(warmup_ps, warmup_ps + round(window_us * 1e6))


class DeadlockError(RuntimeError):
    """A lossless run whose paused queues wait for each other in a cycle."""


class InvariantError(RuntimeError):
    """A run that broke one of the engine's accounting identities: its figures are not to be
    trusted."""


def run_checked(engine: NativeEngine, until_ps: int, lossless: bool) -> None:
    """Advance to `until_ps`; lossless runs in slices, checking for a deadlock after each (a
    deadlocked network delivers nothing more, so its accepted load is no saturation)."""
    if not lossless:
        engine.run_until(until_ps)
        return
    t = engine.now_ps
    while t < until_ps:
        t = min(until_ps, t + DEADLOCK_CHECK_PS)
        engine.run_until(t)
        cycle = engine.check_deadlock()
        if cycle:
            raise DeadlockError(f"deadlock at {t / 1e6:.1f} us: {cycle}")


def accepted_load(
    net: SimNetwork,
    pattern: str,
    routing: str,
    load: float,
    seed: int,
    lossless: bool = False,
    window: Window | None = None,
) -> Accepted:
    """Payload delivered per source host over the measured window; raises InvariantError
    when the run breaks one of the engine's invariants."""
    window = window or Window.of(WARMUP_US, WINDOW_US)
    rate = load * LINK_GBPS * 1e9 / 8 / FLOW_BYTES
    workload = make_workload(
        net, pattern, FLOW_BYTES, seed=seed, arrival_rate=rate, duration_ps=window.end_ps
    )
    config = SimConfig(
        transport="ndp",
        load_balancing="spray",
        routing=routing,
        mtu=MTU,
        header=HEADER,
        queue_packets=QUEUE_PACKETS,
        seed=seed,
        lossless=lossless,
    )
    engine = native_engine(net, workload, config)
    run_checked(engine, window.warmup_ps, lossless)
    before = np.asarray(engine.flow_results()["delivered"], dtype=np.float64)
    run_checked(engine, window.end_ps, lossless)
    after = np.asarray(engine.flow_results()["delivered"], dtype=np.float64)
    broken = [(name, detail) for name, holds, detail in engine.invariants() if not holds]
    if broken:
        raise InvariantError(
            f"{net.name} {pattern} {routing} at {load}: "
            + "; ".join(f"invariant {name} broken: {detail}" for name, detail in broken)
        )
    n = net.n_hosts
    delivered = np.bincount(workload.src, weights=after - before, minlength=n)
    window_s = (window.end_ps - window.warmup_ps) / 1e12
    mean = float(delivered.sum()) * 8 / window_s / (n * LINK_GBPS * 1e9)
    # Per host, the share of what it offered in the window that got through: a ratio, so
    # that hosts drawing fewer Poisson arrivals do not pass for bottlenecked ones.
    in_window = workload.start_ps >= window.warmup_ps
    offered = np.bincount(workload.src[in_window], weights=workload.size[in_window], minlength=n)
    active = offered > 0
    ratio = np.minimum(1.0, delivered[active] / offered[active])
    return Accepted(mean, load * float(np.median(ratio)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", default=",".join(map(str, DEFAULT_LOADS)))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", default="sc15_saturation.png", help="PNG to write")
    parser.add_argument(
        "--lossless", action="store_true", help="PFC queues instead of NDP trimming (SC'15's model)"
    )
    parser.add_argument(
        "--warmup-us",
        type=float,
        default=WARMUP_US,
        help="simulated microseconds before the measured window",
    )
    parser.add_argument(
        "--window-us", type=float, default=WINDOW_US, help="simulated microseconds measured"
    )
    args = parser.parse_args(argv)
    if args.warmup_us < 0 or args.window_us <= 0:
        parser.error("--warmup-us must be >= 0 and --window-us > 0")
    loads = [float(x) for x in args.loads.split(",")]
    window = Window.of(args.warmup_us, args.window_us)
    started = time.perf_counter()
    curves: dict[tuple[str, str, str], list[Accepted]] = {}
    for topo in TOPOLOGIES:
        net = network_from_topology(
            topo.kind, topo.params, args.seed, link_gbps=LINK_GBPS, link_latency_ps=LINK_LATENCY_PS
        )
        print(f"{topo.label}: {net.n_switches} switches, {net.n_hosts} endpoints", flush=True)
        for pattern in PATTERNS:
            for routing in ROUTINGS:
                accepted = [
                    accepted_load(net, pattern, routing, x, args.seed, args.lossless, window)
                    for x in loads
                ]
                curves[(topo.label, pattern, routing)] = accepted
                print(
                    f"  {pattern:>10} {routing:>6}: "
                    + " ".join(f"{a.mean:.3f}" for a in accepted)
                    + f"  ({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
    print_table(curves)
    plot(curves, loads, args.plot, args.lossless, window)
    # Every run got here through accepted_load's check, which raises on a broken invariant.
    runs = len(curves) * len(loads)
    print(
        f"invariants hold in all {runs} runs; {args.window_us:g} us measured after "
        f"{args.warmup_us:g} us of warm-up"
    )
    print(f"plot: {args.plot}; {time.perf_counter() - started:.0f} s in all")
    return 0


def print_table(curves: dict[tuple[str, str, str], list[Accepted]]) -> None:
    """Saturation throughput: the largest mean accepted load of the sweep, with the median
    host's at that load beside it."""
    print()
    print("| topology | traffic | routing | saturation, all hosts | median host | closed form |")
    print("|---|---|---|---:|---:|---|")
    by_label = {t.label: t for t in TOPOLOGIES}
    for (label, pattern, routing), accepted in curves.items():
        form = closed_form(by_label[label], pattern, routing)
        best = max(accepted, key=lambda a: a.mean)
        print(
            f"| {label} | {pattern} | {routing.upper()} | {best.mean:.3f} "
            f"| {best.median_host:.3f} | {form} |"
        )


def plot(
    curves: dict[tuple[str, str, str], list[Accepted]],
    loads: list[float],
    path: str,
    lossless: bool,
    window: Window,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    colours = {t.label: c for t, c in zip(TOPOLOGIES, ("C0", "C1", "C2"), strict=True)}
    styles = {"min": "-", "inr": "--", "ugal-l": ":"}
    for ax, pattern in zip(axes, PATTERNS, strict=True):
        for (label, pat, routing), accepted in curves.items():
            if pat == pattern:
                ax.plot(
                    loads,
                    [a.mean for a in accepted],
                    styles[routing],
                    color=colours[label],
                    marker="o",
                    markersize=3,
                    label=f"{label}, {routing.upper()}",
                )
        ax.plot(loads, loads, color="grey", linewidth=0.5)
        ax.set_title(f"{pattern} traffic")
        ax.set_xlabel("offered load (share of injection bandwidth)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accepted load")
    axes[1].legend(fontsize=7)
    fig.suptitle(
        "SC'15 saturation study on the packet simulator: "
        + ", ".join(t.label for t in TOPOLOGIES)
        + ("\nNDP on lossless (PFC) queues" if lossless else "\nNDP")
        + ", 100 Gb/s, 9,000 B packets, 100 KB queues, one-packet Poisson messages, "
        f"{(window.end_ps - window.warmup_ps) / 1e6:.0f} us measured after "
        f"{window.warmup_ps / 1e6:.0f} us warm-up"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
