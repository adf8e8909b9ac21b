"""Benchmark: P-Net's 686-host Jellyfish comparison (CoNEXT'22, 5.1.1 and 5.4), LP and hop count.

Four fabrics on the same 98 racks of 7 hosts, every switch with 7 network ports (a 14-port
switch, the k = 14 fat tree's; 98 x 7 = 686 = k^3/4 hosts):

- serial 400G: one Jellyfish plane, 400 Gb/s links and host NICs;
- serial 100G: the same graph at 100 Gb/s;
- homogeneous 4 x 100G: that graph four times, each host with a 100 Gb/s uplink into each;
- heterogeneous 4 x 100G: four Jellyfish graphs drawn with the compiler's per-plane seeds.

Each plane switch moves a quarter of a serial 400G switch's bits over the same port count, so
the four planes together have the serial 400G fabric's switching capacity and radix.

Measured: maximum achievable throughput (MAT, Gb/s per host) for a random permutation and for
all-to-all, unconstrained (mcf), ECMP with a hashed plane, K shortest paths over all planes
(`ksp-total`, the paper's K) as K grows, and FatPaths layers per plane; then the mean best-plane
hop count with 0..50% of links failed at random. Serial 400G's MAT is serial 100G's times four:
multiplying every capacity of an LP by four multiplies its optimum by four, so it is not solved
again (`--solve-400g` solves it anyway). Serial 400G and 100G share their hop counts.

    PYTHONPATH=. python benchmarks/pnet_compare.py [--seeds 1] [--figure F] [--json] [--jobs 2]

`--seeds 1,2,3,4,5` repeats everything on newly drawn fabrics (and traffic) per seed, as the
paper does ("at least five times, each time with a newly instantiated topology"), and prints
each figure as mean +- standard deviation over the seeds.

Each fabric's permutation study, all-to-all study and all-to-all MCF run as separate tasks on
`--jobs` worker processes (every HiGHS solver has one thread); the CPU time printed at the end
is the parent's and the workers' together.

Flow completion times and RPC latency (5.1.2, 5.2.1) come from the packet simulator, on the
same four fabrics: `benchmarks/pnet_sim_compare.py`.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.plane_report import PlaneStudy, planes_plot, study_planes
from fatpaths_cfg.analysis.plane_set import PlaneSet, jellyfish_planes
from fatpaths_cfg.analysis.plane_throughput import fatpaths_next_hops

RACKS, HOSTS_PER_RACK, NETWORK_PORTS, PLANES = 98, 7, 7, 4
TARGET_SECONDS = 300.0
# P-Net's reading of its own figures, for the comparison lines (normalised to serial 100G).
PAPER = {
    "permutation ksp K=8, 4 planes": "about 60% of 4x (Fig. 8b)",
    "K to saturate 4 planes": "32 (Fig. 8c: N planes need N times the serial K of 8)",
    "hop count at 40% failed": "serial +22%, homogeneous +3% (Fig. 14)",
}


FABRICS = ("serial-400G", "serial-100G", "homogeneous-4x100G", "heterogeneous-4x100G")


def fabrics(seed: int) -> dict[str, PlaneSet]:
    def jellyfish(name: str, planes: int, heterogeneous: bool, gbps: float) -> PlaneSet:
        return jellyfish_planes(
            name, RACKS, NETWORK_PORTS, HOSTS_PER_RACK, planes, heterogeneous, seed, gbps
        )

    return {
        "serial-400G": jellyfish("serial-400G", 1, False, 400.0),
        "serial-100G": jellyfish("serial-100G", 1, False, 100.0),
        "homogeneous-4x100G": jellyfish("homogeneous-4x100G", PLANES, False, 100.0),
        "heterogeneous-4x100G": jellyfish("heterogeneous-4x100G", PLANES, True, 100.0),
    }


def scaled(result: dict[str, Any], name: str, factor: float) -> dict[str, Any]:
    """Another fabric's result with every MAT multiplied (LP optimum is linear in capacity)."""

    def scale(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scale(v) for k, v in value.items()}
        return round(value * factor, 3)

    out = dict(result)
    out["fabric"] = name
    out["max_achievable_throughput_gbps"] = scale(result["max_achievable_throughput_gbps"])
    out["link_gbps"] = [g * factor for g in result["link_gbps"]]
    out["uplink_gbps"] = [g * factor for g in result["uplink_gbps"]]
    out["scaled_from"] = result["fabric"]
    return out


def summary_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    base = results["serial-100G"]["max_achievable_throughput_gbps"]
    lines = [
        "| fabric | pattern | mcf | ecmp | fatpaths | ksp-total by K |",
        "|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        spread = result.get("max_achievable_throughput_std", {})
        for pattern, row in result["max_achievable_throughput_gbps"].items():
            # Normalised to serial 100G's best: its MCF, or its largest-K KSP without one.
            ref = base[pattern].get("mcf") or max(base[pattern]["ksp-total"].values())
            std = spread.get(pattern, {})

            def rel(scheme: str, ref: float = ref, row: Any = row, std: Any = std) -> str:
                if scheme not in row:
                    return "-"
                v = row[scheme]
                plus = f" +- {std[scheme]:.1f}" if scheme in std else ""
                return f"{v:.1f}{plus} ({v / ref:.2f}x)"

            ksp = row.get("ksp-total", {})
            ksp_std = std.get("ksp-total", {})
            sweep = ", ".join(
                f"{k}: {v / ref:.2f}x" + (f" +- {ksp_std[k] / ref:.2f}" if k in ksp_std else "")
                for k, v in ksp.items()
            )
            lines.append(
                f"| {name} | {pattern} | {rel('mcf')} | {rel('ecmp')} | {rel('fatpaths')} | "
                f"{sweep} |"
            )
    return lines


def hop_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    shares = [p["share"] for p in results["serial-100G"]["hops_under_failures"]]
    lines = [
        "| fabric | " + " | ".join(f"{s:.0%}" for s in shares) + " |",
        "|---|" + "---|" * len(shares),
    ]
    for name, result in results.items():
        if name == "serial-400G":
            continue
        points = result["hops_under_failures"]
        base = points[0]["mean_hops"]
        cells = [
            f"{p['mean_hops']:.3f}"
            + (f" +- {p['mean_hops_std']:.3f}" if "mean_hops_std" in p else "")
            + f" ({p['mean_hops'] / base - 1:+.0%})"
            for p in points
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def studies(args: argparse.Namespace, seed: int) -> dict[str, PlaneStudy]:
    """What one seed runs, by kind: each is a task per fabric."""
    permutation = PlaneStudy(
        patterns=("permutation",),
        schemes=("mcf", "ecmp", "fatpaths", "ksp-total"),
        k_values=tuple(int(k) for k in args.k.split(",")),
        failure_shares=tuple(float(f) for f in args.failures.split(",")),
        trials=args.trials,
        seed=seed,
    )
    all_to_all = PlaneStudy(
        patterns=("all-to-all",),
        schemes=("ecmp", "fatpaths", "ksp-total"),
        k_values=tuple(int(k) for k in args.k_all_to_all.split(",")),
        failure_shares=(),
        trials=1,
        seed=seed,
    )
    kinds = {"permutation": permutation, "all-to-all": all_to_all}
    if args.all_to_all_mcf:
        # All-to-all MCF is a study of its own: the largest single LP, it runs beside the others.
        kinds["all-to-all mcf"] = replace(all_to_all, schemes=("mcf",), k_values=())
    return kinds


def merged(
    solved: dict[tuple[str, PlaneStudy, int], dict[str, Any]],
    kinds: dict[str, PlaneStudy],
    seed: int,
    solve_400g: bool,
) -> dict[str, dict[str, Any]]:
    """One seed's result per fabric: its tasks' results joined."""
    results: dict[str, dict[str, Any]] = {}
    for name in FABRICS:
        if name == "serial-400G" and not solve_400g:
            continue
        result = results[name] = solved[(name, kinds["permutation"], seed)]
        dense: dict[str, Any] = {}
        for kind in ("all-to-all mcf", "all-to-all"):
            if kind not in kinds:
                continue
            part = solved[(name, kinds[kind], seed)]
            dense.update(part["max_achievable_throughput_gbps"]["all-to-all"])
            for key, value in part["cpu_seconds"].items():
                result["cpu_seconds"][key] += value
        result["max_achievable_throughput_gbps"]["all-to-all"] = dense
    if not solve_400g:
        results = {"serial-400G": scaled(results["serial-100G"], "serial-400G", 4.0), **results}
    return results


def mean_over_seeds(per_seed: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Every MAT and hop count as the mean over seeds, with its standard deviation beside it
    (`max_achievable_throughput_std`, `mean_hops_std`); the figure plots the means."""

    def combine(values: list[Any]) -> tuple[Any, Any]:
        if isinstance(values[0], dict):
            pairs = {key: combine([v[key] for v in values]) for key in values[0]}
            return {k: m for k, (m, _) in pairs.items()}, {k: d for k, (_, d) in pairs.items()}
        return round(float(np.mean(values)), 3), round(float(np.std(values)), 3)

    out: dict[str, dict[str, Any]] = {}
    for name, first in per_seed[0].items():
        runs = [seeded[name] for seeded in per_seed]
        mean, std = combine([run["max_achievable_throughput_gbps"] for run in runs])
        points = []
        for index, point in enumerate(first["hops_under_failures"]):
            hops = [run["hops_under_failures"][index]["mean_hops"] for run in runs]
            cut = [run["hops_under_failures"][index]["unreachable"] for run in runs]
            points.append(
                {
                    **point,
                    "mean_hops": round(float(np.mean(hops)), 4),
                    "mean_hops_std": round(float(np.std(hops)), 4),
                    "unreachable": round(float(np.mean(cut)), 4),
                }
            )
        out[name] = {
            **first,
            "seed": [run["seed"] for run in runs],
            "max_achievable_throughput_gbps": mean,
            "max_achievable_throughput_std": std,
            "hops_under_failures": points,
            "cpu_seconds": {
                key: round(sum(run["cpu_seconds"][key] for run in runs), 1)
                for key in first["cpu_seconds"]
            },
        }
    return out


def _study(name: str, study: PlaneStudy, layer_args: tuple[int, float, int]) -> dict[str, Any]:
    """One fabric's study, in a worker process (fabrics and layers are rebuilt there: they are
    seeded, so every worker gets the same ones)."""
    planes = fabrics(study.seed)[name]
    layers = fatpaths_next_hops(planes, *layer_args) if "fatpaths" in study.schemes else None
    return study_planes(planes, study, layers, lambda line: print(line, flush=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", default="1", help="fabric and traffic seeds, comma-separated (mean +- std)"
    )
    parser.add_argument("--k", default="1,2,4,8,16,32", help="K values of ksp-total")
    parser.add_argument(
        "--k-all-to-all",
        default="1,2,4,8",
        help="K values of ksp-total for all-to-all (its LPs are 14x larger)",
    )
    parser.add_argument(
        "--no-all-to-all-mcf",
        dest="all_to_all_mcf",
        action="store_false",
        help="skip all-to-all's unconstrained MCF (the edge LP, minutes on heterogeneous planes)",
    )
    parser.add_argument("--failures", default="0,0.1,0.2,0.3,0.4,0.5")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--layers", type=int, default=4, help="FatPaths layers per plane")
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument(
        "--solve-400g",
        action="store_true",
        help="solve serial 400G's LPs instead of scaling serial 100G's",
    )
    parser.add_argument("--figure", type=Path, default=Path("docs/figures/pnet_compare.png"))
    parser.add_argument("--json", action="store_true", help="print all results as JSON")
    parser.add_argument(
        "--jobs", type=int, default=2, help="worker processes (the machine's 2 cores)"
    )
    args = parser.parse_args(argv)

    wall, cpu = time.perf_counter(), time.process_time()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    kinds = {seed: studies(args, seed) for seed in seeds}
    names = [n for n in FABRICS if n != "serial-400G" or args.solve_400g]
    tasks = [(n, study, seed) for seed in seeds for study in kinds[seed].values() for n in names]
    with ProcessPoolExecutor(args.jobs) as pool:
        # Heterogeneous planes' LPs are the largest: start them first.
        order = sorted(tasks, key=lambda task: "heterogeneous" not in task[0])
        futures = {
            task: pool.submit(_study, task[0], task[1], (args.layers, args.rho, task[2]))
            for task in order
        }
        solved = {task: future.result() for task, future in futures.items()}
    per_seed = [merged(solved, kinds[seed], seed, args.solve_400g) for seed in seeds]
    results = per_seed[0] if len(seeds) == 1 else mean_over_seeds(per_seed)
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = time.perf_counter() - wall
    cpu_seconds = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime - cpu

    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"mean of seeds {args.seeds}"
    title = (
        f"P-Net 686 hosts (98 racks x 7, Jellyfish k'=7), permutation + all-to-all, "
        f"{which}, failures {args.trials} trials"
    )
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    curves = [r for n, r in results.items() if n != "serial-400G" or args.solve_400g]
    args.figure.write_bytes(planes_plot(curves, title))
    if args.json:
        print(json.dumps(results, indent=1))
    print("\n".join(summary_rows(results)))
    print()
    print("\n".join(hop_rows(results)))
    print()
    for what, claim in PAPER.items():
        print(f"paper: {what}: {claim}")
    print(
        f"LP + hop count: {seconds:.1f} s wall, {cpu_seconds:.1f} s CPU "
        f"(target <= {TARGET_SECONDS:.0f} s wall on 2 cores); figure {args.figure}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
