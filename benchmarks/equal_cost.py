"""Design at equal cost: the FatPaths paper's headline (Figure 2) rerun on networks `topo match`
picks, each with its cost per endpoint from `topo cost`.

The Slim Fly, Xpander, HyperX and Dragonfly nearest N with FatPaths (1 full + 8 random layers,
rho 0.6; `--kinds` to choose) against the fat tree with
oversubscription 2 nearest in size (k=28 at N of about 10,000, the paper's pair) under LetFlow
and under packet spraying; NDP at 300 flows/s per host, pFabric web-search sizes (the paper's
20-point discretisation), uniform traffic on a randomized host mapping, 10 Gb/s, 9 KB frames,
a 5 ms window whose first half is warm-up, every flow run to completion (`--profile
fatpaths-sc20`). Prints, per network and scheme, throughput per flow by size bucket (mean and
1% tail, Figure 2's axes), latency (the median FCT of one-packet flows) and the cost per
endpoint, then the ratios beside the paper's "15% higher throughput at 2x lower latency".

    python benchmarks/equal_cost.py --quick            # N of about 1,000, one seed
    python benchmarks/equal_cost.py --seeds 1 2 3      # N of about 10,000
    python benchmarks/equal_cost.py --workload off-diagonal --no-randomize   # one switch on
    python benchmarks/equal_cost.py --workload skewed-off-diagonal --no-randomize \
        --low-schemes fatpaths,letflow     # Figure 11: the offset as remote on every network,
                                           # FatPaths against minimal paths (LetFlow)

The prices are the example file's unless --prices names real quotes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.cost.match import Configuration, match
from fatpaths_cfg.cost.model import priced
from fatpaths_cfg.cost.network import from_topology
from fatpaths_cfg.cost.prices import load_prices
from fatpaths_cfg.sim import SimConfig, SimNetwork, make_workload, network_from_edges, simulate
from fatpaths_cfg.sim.network import sampled_layers
from fatpaths_cfg.sim.results import SIZE_BUCKETS, SimResult
from fatpaths_cfg.sim.workloads import pattern_site
from fatpaths_cfg.topologies import GeneratedTopology
from fatpaths_cfg.traffic_patterns import canonical, skewed_offset

EXAMPLE_PRICES = Path(__file__).resolve().parent.parent / "examples" / "prices-100g-example.yaml"
LINK_GBPS = 10.0
WINDOW_PS = 5_000_000_000
MIN_RTO_US = 200.0
ARRIVAL_RATE = 300.0
SIZES = "websearch-sc20"
LAYERS, RHO = 8, 0.6
# The paper's claims (abstract, Figure 2): throughput +15%, latency 2x lower.
PAPER_THROUGHPUT_GAIN = 1.15
PAPER_LATENCY_RATIO = 2.0


@dataclass(frozen=True)
class Contender:
    label: str
    spec: str
    topology: GeneratedTopology
    schemes: tuple[str, ...]
    extra_layers: int


def pick(
    hosts: int, kinds: list[str], low_schemes: tuple[str, ...] = ("fatpaths",)
) -> list[Contender]:
    """Per low-diameter kind, the configuration `topo match` lists nearest `hosts` (FatPaths);
    then the oversubscription-2 fat tree nearest `hosts` (LetFlow and spraying)."""
    rows = match(hosts, 0.5, [*kinds, "fattree"], 128)

    def nearest(kind: str, suffix: str = "") -> Configuration:
        return min(
            (r for r in rows if r.kind == kind and r.label.endswith(suffix)),
            key=lambda r: (abs(r.hosts - hosts), r.radix),
        )

    picked: list[tuple[Configuration, tuple[str, ...], int]] = [
        (nearest(kind), low_schemes, LAYERS) for kind in kinds
    ]
    picked.append((nearest("fattree", "o=2"), ("letflow", "spray"), 0))
    contenders = []
    for row, schemes, layers in picked:
        assert row.spec is not None
        contenders.append(
            Contender(f"{row.kind} {row.label}", row.spec.text, row.topology(), schemes, layers)
        )
    return contenders


def network(contender: Contender, seed: int) -> SimNetwork:
    topo = contender.topology
    base = network_from_edges("base", topo.num_switches, topo.edges, topo.hosts_per_switch)
    layers = (
        sampled_layers(base, contender.extra_layers, RHO, seed) if contender.extra_layers else []
    )
    return network_from_edges(
        contender.spec,
        topo.num_switches,
        topo.edges,
        topo.hosts_per_switch,
        link_gbps=LINK_GBPS,
        seed=seed,
        extra_layers=layers,
    )


def run(
    net: SimNetwork,
    scheme: str,
    seed: int,
    workload: str,
    randomize: bool,
    arrival_rate: float = ARRIVAL_RATE,
    window_ps: int = WINDOW_PS,
) -> SimResult:
    work = make_workload(
        net,
        workload,
        SIZES,
        seed=seed,
        arrival_rate=arrival_rate,
        duration_ps=window_ps,
        randomize_mapping=randomize,
    )
    config = SimConfig(
        transport="ndp",
        load_balancing=scheme,
        min_rto_us=MIN_RTO_US,
        # The first half of the arrivals is warm-up, as in the paper's set-up.
        warmup_us=window_ps / 2e6,
        seed=seed,
    )
    return simulate(net, work, config)


def remoteness(net: SimNetwork) -> str:
    """Where the skewed off-diagonal's rule put the offset on this network, and how many
    minimal paths its switch pairs have (what minimal routing can spread the p flows over)."""
    site = pattern_site(net)
    chosen = skewed_offset(site)
    switches = np.flatnonzero(site.hosts_per_switch() > 0)
    paths = minimal_path_counts(site.dist, switches, np.roll(switches, -chosen.shift))
    return (
        f"skewed offset {chosen.offset} hosts ({chosen.shift} switches on), "
        f"{chosen.share_at_distance:.0%} of switches send {chosen.distance} hops "
        f"(the farthest), mean {chosen.mean_distance:.2f}; minimal paths per pair: median "
        f"{np.median(paths):g}, {np.mean(paths == 1):.0%} with one"
    )


def minimal_path_counts(
    dist: npt.NDArray[np.uint8], sources: npt.NDArray[np.int64], targets: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Shortest paths from each source to its target, counted level by level back from the
    target (paths to x = the sum over x's neighbours one hop nearer)."""
    adjacent = (dist == 1).astype(np.int64)
    counts = np.zeros(len(sources), dtype=np.int64)
    for i, (source, target) in enumerate(zip(sources.tolist(), targets.tolist(), strict=True)):
        ways = np.zeros(len(dist), dtype=np.int64)
        ways[target] = 1
        for level in range(1, int(dist[source, target]) + 1):
            ring = np.flatnonzero(dist[:, target] == level)
            nearer = np.flatnonzero(dist[:, target] == level - 1)
            ways[ring] = adjacent[np.ix_(ring, nearer)] @ ways[nearer]
        counts[i] = ways[source]
    return counts


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def figures(results: list[SimResult]) -> dict[str, float]:
    """Over seeds: per bucket mean and 1% tail throughput (Gb/s), latency median (µs)."""
    out: dict[str, list[float]] = {}
    for result in results:
        summary = result.summary()
        buckets = summary["throughput_by_size_gbps"]
        latency = summary["latency"]
        assert isinstance(buckets, dict) and isinstance(latency, dict)
        for bucket, stats in buckets.items():
            if stats["mean"] is not None:
                out.setdefault(f"{bucket} mean", []).append(stats["mean"])
                out.setdefault(f"{bucket} p1", []).append(stats["p1"])
        if latency["median_us"] is not None:
            out.setdefault("latency", []).append(latency["median_us"])
        overall = summary["throughput_gbps"]
        assert isinstance(overall, dict)
        out.setdefault("all mean", []).append(overall["mean"])
    return {key: _mean(values) for key, values in out.items()}


def plot(
    rows: list[tuple[str, str, float, dict[str, float]]],
    keys: list[str],
    seeds: list[int],
    args: argparse.Namespace,
    path: Path,
) -> None:
    """Figure 2's shape: throughput per flow by size, mean (bars) and 1% tail (dark bars)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buckets = [k.removesuffix(" mean") for k in keys if k.endswith(" mean")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(rows)
    for i, (label, scheme, cost, f) in enumerate(rows):
        xs = [j + i * width for j in range(len(buckets))]
        name = f"{label} {scheme} ({cost:,.0f}/N)"
        axes[0].bar(xs, [f.get(f"{b} mean", 0.0) for b in buckets], width, label=name)
        axes[1].bar(xs, [f.get(f"{b} p1", 0.0) for b in buckets], width, label=name)
    for axis, what in zip(axes, ("mean", "1% tail"), strict=True):
        axis.set_xticks([j + 0.4 - width / 2 for j in range(len(buckets))], buckets)
        axis.set_xlabel("flow size")
        axis.set_ylabel(f"throughput per flow, {what} (Gb/s)")
        axis.grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=7)
    fig.suptitle(
        f"benchmarks/equal_cost.py: {args.workload}"
        f"{'' if args.no_randomize else ' randomized'}, NDP {args.arrival_rate:g} flows/s, "
        f"{SIZES}, {args.window_ms:g} ms of arrivals, seeds {seeds}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N of about 1,000 instead of 10,000")
    parser.add_argument("--hosts", type=int, default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument(
        "--kinds",
        default="slimfly,xpander,hyperx,dragonfly",
        help="Low-diameter kinds run with FatPaths (comma-separated).",
    )
    parser.add_argument("--workload", default="uniform")
    parser.add_argument(
        "--low-schemes",
        default="fatpaths",
        help="Schemes run on the low-diameter networks (comma-separated; letflow: minimal "
        "paths only, Figure 11's baseline).",
    )
    parser.add_argument("--no-randomize", action="store_true")
    parser.add_argument(
        "--lambda",
        dest="arrival_rate",
        type=float,
        default=ARRIVAL_RATE,
        help="Flows per second per host (the paper's 300; a light load, e.g. 10, shows the "
        "latency of the paths alone).",
    )
    parser.add_argument(
        "--window-ms",
        type=float,
        default=WINDOW_PS / 1e9,
        help="How long flows arrive (the first half is warm-up); every flow then runs to "
        "completion. Minimal routing on an overloaded path falls further behind the longer "
        "arrivals last.",
    )
    parser.add_argument(
        "--offsets-only",
        action="store_true",
        help="Print where the skewed off-diagonal's offset lands on each network, run nothing.",
    )
    parser.add_argument("--prices", type=Path, default=EXAMPLE_PRICES)
    parser.add_argument("--plot", type=Path, default=None, help="Write Figure 2's bars here.")
    args = parser.parse_args(argv)
    hosts = args.hosts or (1_000 if args.quick else 10_000)
    seeds = args.seeds or ([1] if args.quick else [1, 2, 3])
    prices = load_prices(args.prices)
    started = time.perf_counter()
    # The output names what made it, so a saved copy can be rerun.
    print(f"# python benchmarks/equal_cost.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    rows: list[tuple[str, str, float, dict[str, float]]] = []
    low_schemes = tuple(s.strip() for s in args.low_schemes.split(",") if s.strip())
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if args.offsets_only:
        for contender in pick(hosts, kinds, low_schemes):
            print(f"{contender.label}: {remoteness(network(contender, seeds[0]))}", flush=True)
        return 0
    for contender in pick(hosts, kinds, low_schemes):
        bill = priced(from_topology(contender.spec, contender.topology), prices)
        cost = float(bill["cost_per_endpoint"]["total"])
        per_scheme: dict[str, list[SimResult]] = {s: [] for s in contender.schemes}
        for seed in seeds:
            net = network(contender, seed)
            if seed == seeds[0] and canonical(args.workload) == "skewed-off-diagonal":
                print(f"# {contender.label}: {remoteness(net)}")
            for scheme in contender.schemes:
                t = time.perf_counter()
                result = run(
                    net,
                    scheme,
                    seed,
                    args.workload,
                    not args.no_randomize,
                    args.arrival_rate,
                    round(args.window_ms * 1e9),
                )
                per_scheme[scheme].append(result)
                # A run whose accounting identities fail is reported, never silently averaged.
                for warning in result.warnings():
                    print(f"# warning: {contender.label} {scheme} seed {seed}: {warning}")
                print(
                    f"# {contender.label} {scheme} seed {seed}: {net.n_hosts} hosts, "
                    f"{result.workload.n_flows} flows, {time.perf_counter() - t:.0f} s",
                    flush=True,
                )
        for scheme, results in per_scheme.items():
            rows.append((contender.label, scheme, cost, figures(results)))
    currency = prices.spec.currency
    present = {k for _, _, _, f in rows for k in f}
    keys = [
        f"{b} {m}" for b, _, _ in SIZE_BUCKETS for m in ("mean", "p1") if f"{b} mean" in present
    ]
    print(
        f"\nthroughput per flow (Gb/s, mean over seeds {seeds}), latency = median FCT of "
        f"one-packet flows; {args.workload}{'' if args.no_randomize else ' randomized'}, NDP "
        f"{args.arrival_rate:g} flows/s per host, {args.window_ms:g} ms of arrivals"
    )
    print(
        f"{'network':24} {'scheme':9} {'cost/N ' + currency:>12} {'latency µs':>10} "
        + " ".join(f"{k:>18}" for k in keys)
    )
    for label, scheme, cost, f in rows:
        cells = " ".join(f"{f.get(k, float('nan')):18.2f}" for k in keys)
        print(f"{label:24} {scheme:9} {cost:12,.0f} {f.get('latency', float('nan')):10.1f} {cells}")
    # The largest bucket every network has flows in: Figure 2's long-flow throughput.
    large = [k for k in keys if k.endswith("mean") and all(k in r[3] for r in rows)][-1]
    trees = [r for r in rows if r[0].startswith("fattree")]
    for low in (r for r in rows if r[1] == "fatpaths"):
        for label, scheme, cost, f in trees:
            gain = low[3]["all mean"] / f["all mean"]
            gain_large = low[3][large] / f[large]
            latency = f["latency"] / low[3]["latency"]
            print(
                f"{low[0]} FatPaths vs {label} {scheme}: throughput x{gain:.2f} (all flows), "
                f"x{gain_large:.2f} ({large.removesuffix(' mean')}) "
                f"[paper x{PAPER_THROUGHPUT_GAIN}]; latency {latency:.2f}x lower "
                f"[paper {PAPER_LATENCY_RATIO:g}x]; cost/N {low[2] / cost:.2f} of the tree's"
            )
    if args.plot is not None:
        plot(rows, keys, seeds, args, args.plot)
    print(f"# total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
