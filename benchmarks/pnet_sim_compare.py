"""Benchmark: P-Net's 686-host Jellyfish comparison (CoNEXT'22, 5.1.2 and 5.2.1), packet simulation.

The four fabrics of `benchmarks/pnet_compare.py` (98 racks of 7 hosts, every switch with 7
network ports, Jellyfish seeded as `generate: {planes:, heterogeneous:}` seeds it): serial 400G,
serial 100G, homogeneous 4 x 100G (one graph four times), heterogeneous 4 x 100G (four graphs).
MTU 1,500 B, 1 us per hop, 10 ms minimum RTO (the paper's setting), drop-tail queues.

- FCT of one random permutation (the same on every fabric) for each flow size: serial fabrics
  with single-path TCP (ECMP), planes with MPTCP (Linked Increases, K subflows per plane on
  K shortest paths) and with single-path TCP on a hashed plane.
- RPC ping-pong (1,500 B request, 1,500 B response, R rounds, every host the client of its
  permutation peer): round time median and p99, idle and under a background permutation of
  long TCP flows (another permutation); single-path TCP, planes by hash and by fewest hops.

    PYTHONPATH=. python benchmarks/pnet_sim_compare.py [--sizes 100kB,1MB,10MB] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.sim import SimConfig, SimResult, make_workload, simulate
from fatpaths_cfg.sim.network import SimNetwork, network_from_topology
from fatpaths_cfg.sim.workloads import Workload, parse_bytes, rpc_workload

RACKS, HOSTS_PER_RACK, NETWORK_PORTS, PLANES = 98, 7, 7, 4
MTU = 1500
MIN_RTO_US = 10_000.0
TARGET_MPTCP_1MB_CPU_SECONDS = 120.0
SERIAL = ("serial-400G", "serial-100G")


@dataclass(frozen=True)
class Scheme:
    label: str
    config: dict[str, Any]


def fabrics(seed: int) -> dict[str, SimNetwork]:
    params: dict[str, int | float] = {"nr": RACKS, "k": NETWORK_PORTS, "p": HOSTS_PER_RACK}

    def jellyfish(planes: int, heterogeneous: bool, gbps: float) -> SimNetwork:
        return network_from_topology(
            "jellyfish",
            params,
            seed=seed,
            link_gbps=gbps,
            planes=planes,
            heterogeneous=heterogeneous,
        )

    return {
        "serial-400G": jellyfish(1, False, 400.0),
        "serial-100G": jellyfish(1, False, 100.0),
        "homogeneous-4x100G": jellyfish(PLANES, False, 100.0),
        "heterogeneous-4x100G": jellyfish(PLANES, True, 100.0),
    }


def fct_schemes(fabric: str, subflows: tuple[int, ...]) -> list[Scheme]:
    tcp = {"transport": "tcp", "load_balancing": "ecmp"}
    if fabric in SERIAL:
        return [Scheme("tcp", tcp)]
    return [
        *(
            Scheme(f"mptcp-{k}x{PLANES}", {"transport": "mptcp", "subflows_per_plane": k})
            for k in subflows
        ),
        Scheme("tcp-hash", {**tcp, "plane_choice": "hash"}),
    ]


def rpc_schemes(fabric: str) -> list[Scheme]:
    tcp = {"transport": "tcp", "load_balancing": "ecmp"}
    if fabric in SERIAL:
        return [Scheme("tcp", tcp)]
    return [
        Scheme("tcp-hash", {**tcp, "plane_choice": "hash"}),
        Scheme("tcp-fewest-hops", {**tcp, "plane_choice": "fewest-hops"}),
    ]


def run(network: SimNetwork, workload: Workload, scheme: Scheme, seed: int) -> SimResult:
    config = SimConfig(mtu=MTU, seed=seed, min_rto_us=MIN_RTO_US, **scheme.config)
    return simulate(network, workload, config)


def broken_invariants(what: str, result: SimResult) -> int:
    """Print the run's warnings (broken invariants, spurious retransmissions) to stderr; the
    number of broken invariants, whose run's figures are not to be published."""
    for warning in result.warnings():
        print(f"{what}: {warning}", file=sys.stderr, flush=True)
    return sum(not i.holds for i in result.invariants)


def with_background(rpc: Workload, background: Workload) -> Workload:
    """RPC rounds first (so request/response pairs keep their indices), then the background
    flows, unchained and starting at 0."""
    after = rpc.after if rpc.after is not None else np.full(rpc.n_flows, -1, np.int32)
    return Workload(
        src=np.concatenate([rpc.src, background.src]),
        dst=np.concatenate([rpc.dst, background.dst]),
        size=np.concatenate([rpc.size, background.size]),
        start_ps=np.concatenate([rpc.start_ps, background.start_ps]),
        after=np.concatenate([after, np.full(background.n_flows, -1, np.int32)]),
        description={**rpc.description, "background": background.description},
    )


def round_times_us(result: SimResult, n_rpc_flows: int) -> np.ndarray:
    """Per RPC round, request leaving to response arriving (NaN if unfinished)."""
    finish = np.asarray(result.flows["finish_ps"], dtype=np.float64)[:n_rpc_flows]
    start = np.asarray(result.flows["start_ps"], dtype=np.float64)[:n_rpc_flows]
    times = (finish[1::2] - start[0::2]) / 1e6
    times[finish[1::2] < 0] = np.nan
    return times


def fct_row(fabric: str, size: int, scheme: Scheme, result: SimResult) -> dict[str, Any]:
    fct = result.fct_ps() / 1e6
    return {
        "fabric": fabric,
        "size_bytes": size,
        "scheme": scheme.label,
        "flows": result.workload.n_flows,
        "finished": int(result.finished.sum()),
        "fct_median_us": round(float(np.nanmedian(fct)), 2),
        "fct_p99_us": round(float(np.nanpercentile(fct, 99)), 2),
        "fct_max_us": round(float(np.nanmax(fct)), 2),
        "timeouts": int(result.counters["timeouts"]),
        "cpu_seconds": round(result.cpu_seconds, 2),
        "wall_seconds": round(result.wall_seconds, 2),
    }


def rpc_row(
    fabric: str, load: str, scheme: Scheme, times: np.ndarray, result: SimResult
) -> dict[str, Any]:
    return {
        "fabric": fabric,
        "load": load,
        "scheme": scheme.label,
        "rounds": int(times.size),
        "finished": int(np.count_nonzero(~np.isnan(times))),
        "rpc_median_us": round(float(np.nanmedian(times)), 3),
        "rpc_mean_us": round(float(np.nanmean(times)), 3),
        "rpc_p99_us": round(float(np.nanpercentile(times, 99)), 3),
        "cpu_seconds": round(result.cpu_seconds, 2),
    }


def fct_line(r: dict[str, Any]) -> str:
    return (
        f"fct {r['fabric']:<21} {r['size_bytes'] / 1e6:>6g} MB {r['scheme']:<12} "
        f"median {r['fct_median_us']:>10.1f} us  p99 {r['fct_p99_us']:>10.1f} us  "
        f"timeouts {r['timeouts']:>5}  finished {r['finished']}/{r['flows']}  "
        f"cpu {r['cpu_seconds']:.1f} s"
    )


def rpc_line(r: dict[str, Any]) -> str:
    return (
        f"rpc {r['fabric']:<21} {r['load']:<10} {r['scheme']:<16} "
        f"median {r['rpc_median_us']:>8.2f} us  mean {r['rpc_mean_us']:>8.2f} us  "
        f"p99 {r['rpc_p99_us']:>8.2f} us  rounds {r['finished']}/{r['rounds']}  "
        f"cpu {r['cpu_seconds']:.1f} s"
    )


def plot(fct: list[dict[str, Any]], rpc_cdf: dict[str, np.ndarray], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.5))
    series: dict[str, list[dict[str, Any]]] = {}
    for r in fct:
        series.setdefault(f"{r['fabric']} {r['scheme']}", []).append(r)
    for label, rows in series.items():
        sizes = [r["size_bytes"] for r in rows]
        (line,) = left.plot(sizes, [r["fct_median_us"] for r in rows], marker="o", label=label)
        left.plot(sizes, [r["fct_p99_us"] for r in rows], ls=":", color=line.get_color())
    left.set(
        xscale="log",
        yscale="log",
        xlabel="flow size (bytes)",
        ylabel="FCT (us): median solid, p99 dotted",
        title="Permutation FCT",
    )
    left.legend(fontsize=7)
    # One colour per (fabric, scheme), idle solid and background dashed, so pairs read together.
    colours: dict[str, Any] = {}
    for label, times in rpc_cdf.items():
        t = np.sort(times[~np.isnan(times)])
        key = label.rsplit(" ", 1)[0]
        colour = colours.setdefault(key, plt.get_cmap("tab10")(len(colours)))
        right.plot(
            t,
            np.arange(1, t.size + 1) / t.size,
            label=label,
            color=colour,
            ls="--" if label.endswith("background") else "-",
        )
    right.set(
        xscale="log", xlabel="RPC round time (us)", ylabel="CDF", title="1,500 B RPC ping-pong"
    )
    right.legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="100kB,1MB,10MB", help="permutation flow sizes")
    parser.add_argument(
        "--subflows-per-plane", default="1,4", help="MPTCP subflows per plane to run (comma list)"
    )
    parser.add_argument("--rounds", type=int, default=100, help="RPC rounds per client")
    parser.add_argument(
        "--background",
        default="10MB",
        help="size of the background permutation flows under RPC; 0: none",
    )
    parser.add_argument("--figure", type=Path, default=Path("docs/figures/pnet_sim_compare.png"))
    parser.add_argument("--json", action="store_true", help="print all results as JSON")
    args = parser.parse_args(argv)
    sizes = [parse_bytes(s) for s in args.sizes.split(",")]
    subflows = tuple(int(k) for k in args.subflows_per_plane.split(","))
    background_bytes = 0 if args.background.strip() == "0" else parse_bytes(args.background)

    wall, cpu = time.perf_counter(), time.process_time()
    nets = fabrics(args.seed)
    fct: list[dict[str, Any]] = []
    rpc: list[dict[str, Any]] = []
    cdf: dict[str, np.ndarray] = {}
    broken = 0
    for fabric, network in nets.items():
        for size in sizes:
            workload = make_workload(network, "permutation", size, seed=args.seed)
            for scheme in fct_schemes(fabric, subflows):
                result = run(network, workload, scheme, args.seed)
                fct.append(fct_row(fabric, size, scheme, result))
                print(fct_line(fct[-1]), flush=True)
                broken += broken_invariants(fct_line(fct[-1]), result)
        idle = rpc_workload(
            network, rounds=args.rounds, request_bytes=MTU, response_bytes=MTU, seed=args.seed
        )
        loads = {"idle": idle}
        if background_bytes:
            other = make_workload(network, "permutation", background_bytes, seed=args.seed + 1)
            loads["background"] = with_background(idle, other)
        for load, workload in loads.items():
            for scheme in rpc_schemes(fabric):
                result = run(network, workload, scheme, args.seed)
                times = round_times_us(result, idle.n_flows)
                rpc.append(rpc_row(fabric, load, scheme, times, result))
                cdf[f"{fabric} {scheme.label} {load}"] = times
                print(rpc_line(rpc[-1]), flush=True)
                broken += broken_invariants(rpc_line(rpc[-1]), result)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu

    title = (
        f"686-host Jellyfish ({RACKS} racks x {HOSTS_PER_RACK} hosts, {NETWORK_PORTS} "
        f"network ports), seed {args.seed}, MTU {MTU}, RTO min 10 ms\npermutation FCT "
        f"(sizes {args.sizes}; serial TCP, planes MPTCP / TCP-hash) | RPC 1,500 B x "
        f"{args.rounds} rounds, idle and with a {args.background} permutation behind"
    )
    plot(fct, cdf, title, args.figure)
    one_mb = [
        r
        for r in fct
        if r["size_bytes"] == 1_000_000
        and r["fabric"] == "heterogeneous-4x100G"
        and r["scheme"].startswith("mptcp")
    ]
    out = {
        "fct": fct,
        "rpc": rpc,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "mptcp_1mb_heterogeneous": one_mb,
        "figure": str(args.figure),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    print(f"whole run: {wall:.1f} s wall, {cpu:.1f} s CPU; figure {args.figure}")
    runs = len(fct) + len(rpc)
    if broken:
        print(f"INVARIANTS BROKEN: {broken} in {runs} runs (see stderr)", file=sys.stderr)
        return 1
    print(f"invariants hold in all {runs} runs")
    ok = all(r["cpu_seconds"] <= TARGET_MPTCP_1MB_CPU_SECONDS for r in one_mb)
    for r in one_mb:
        print(
            f"1 MB MPTCP ({r['scheme']}) on heterogeneous 4x100G: {r['cpu_seconds']} CPU-s, "
            f"{r['wall_seconds']} s wall (target <= {TARGET_MPTCP_1MB_CPU_SECONDS:.0f} s)"
        )
    print("target met" if ok else "TARGET MISSED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
