"""The analysis stage: path diversity and maximum achievable throughput of a compiled fabric,
as the result dict `fatpaths analyze` writes (analysis.json) and sweep tasks read, and its
plot. Plain functions: sweep workers call them without the command line."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fatpaths_cfg.analysis.diversity import pair_diversity
from fatpaths_cfg.analysis.path_metrics import MetricsSettings, path_metrics
from fatpaths_cfg.analysis.path_metrics_report import routed_network
from fatpaths_cfg.analysis.path_sampling import sample_pairs
from fatpaths_cfg.analysis.throughput import max_achievable_throughput
from fatpaths_cfg.analysis.traffic import canonical, host_pairs, switch_demand
from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.support.output import OutputTree, check_output_target
from fatpaths_cfg.support.stable_hash import stream

if TYPE_CHECKING:
    from rich.progress import Progress


# The named random streams of `analyze` (see `fatpaths_cfg.support.stable_hash.stream`).
DIVERSITY_PAIRS = "analyze.diversity.pairs"


def traffic_stream(pattern: str) -> str:
    """The stream a traffic pattern's random choices draw from: one per pattern, so adding a
    pattern to --traffic changes no other pattern's hosts."""
    return f"analyze.traffic.{canonical(pattern)}"


@dataclass(frozen=True)
class ResultsPlace:
    """Where an analysis writes (--results, or a folder of the compiled directory), under the
    output rule of every fatpaths command: refused unless empty, new or an earlier analysis."""

    target: Path
    compiled: Path
    force: bool = False

    def check(self) -> None:
        check_output_target(self.target, "analyze", [self.compiled], self.force)

    def commit(self, tree: OutputTree) -> tuple[int, int]:
        return tree.commit(self.target, [self.compiled], self.force)


def analyze(
    compiled: LoadedCompiled,
    patterns: list[str],
    schemes: list[str],
    pairs: int,
    seed: int,
    progress: Progress | None = None,
    offset: int | None = None,
    metrics: MetricsSettings | None = None,
) -> dict[str, Any]:
    # Every random choice has a stream of its own (named below), so --pairs changes the
    # sampled pairs and nothing else: the MAT of a pattern depends on the fabric and the seed.
    fabric = compiled.fabric
    sampled = sample_pairs(np.arange(fabric.nr), pairs, stream(seed, DIVERSITY_PAIRS))
    diversity = pair_diversity(fabric, compiled.next_hop, compiled.dist[0], sampled)
    throughput: dict[str, dict[str, float]] = {}
    task = (
        progress.add_task("throughput LPs", total=len(patterns) * len(schemes))
        if progress
        else None
    )
    for pattern in patterns:
        rng = stream(seed, traffic_stream(pattern))
        demand = switch_demand(fabric, host_pairs(fabric, pattern, rng, offset))
        throughput[pattern] = {}
        for scheme in schemes:
            solved = max_achievable_throughput(
                fabric, compiled.next_hop, compiled.dist, demand, scheme
            )
            throughput[pattern][scheme] = round(solved.throughput, 4)
            if progress and task is not None:
                progress.advance(task)
    result: dict[str, Any] = {
        "fabric": fabric.name,
        "layers": int(compiled.next_hop.shape[0]),
        "pairs_sampled": len(sampled),
        "diversity": {
            "mean_minimal_length": round(float(np.mean([d.minimal_length for d in diversity])), 4),
            "mean_disjoint_shortest_paths": round(
                float(np.mean([d.disjoint_shortest_paths for d in diversity])), 4
            ),
            "share_single_shortest_path": round(
                float(np.mean([d.disjoint_shortest_paths == 1 for d in diversity])), 4
            ),
            "mean_distinct_layer_paths": round(
                float(np.mean([d.distinct_layer_paths for d in diversity])), 4
            ),
            "mean_disjoint_layer_paths": round(
                float(np.mean([d.disjoint_layer_paths for d in diversity])), 4
            ),
            "disjoint_shortest_paths_histogram": _histogram(
                [d.disjoint_shortest_paths for d in diversity]
            ),
            "disjoint_layer_paths_histogram": _histogram(
                [d.disjoint_layer_paths for d in diversity]
            ),
        },
        "max_achievable_throughput": throughput,
    }
    # Only when asked: sweeps call this per task and need the throughput, not c_l.
    if metrics is not None:
        result["path_metrics"] = path_metrics(routed_network(compiled), metrics)
    return result


def _histogram(values: list[int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(values).items())}


def plot(result: dict[str, Any]) -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    div = result["diversity"]
    for key, label in (
        ("disjoint_shortest_paths_histogram", "edge-disjoint shortest paths"),
        ("disjoint_layer_paths_histogram", "edge-disjoint layer paths"),
    ):
        hist = div[key]
        xs = [int(k) for k in hist]
        total = sum(hist.values())
        left.bar(
            np.array(xs) + (0.2 if "layer" in key else -0.2),
            [v / total for v in hist.values()],
            width=0.4,
            label=label,
        )
    ticks = sorted(
        {
            int(k)
            for key in ("disjoint_shortest_paths_histogram", "disjoint_layer_paths_histogram")
            for k in div[key]
        }
    )
    left.set_xticks(ticks)
    left.set_xlabel("paths per switch pair")
    left.set_ylabel("share of sampled pairs")
    left.set_title(f"{result['fabric']}: path diversity")
    left.legend()
    mat = result["max_achievable_throughput"]
    patterns = list(mat)
    schemes = list(next(iter(mat.values()))) if mat else []
    width = 0.8 / max(len(schemes), 1)
    for i, scheme in enumerate(schemes):
        right.bar(
            np.arange(len(patterns)) + i * width,
            [mat[p][scheme] for p in patterns],
            width=width,
            label=scheme,
        )
    right.set_xticks(np.arange(len(patterns)) + width * (len(schemes) - 1) / 2, patterns)
    right.set_ylabel("max achievable throughput (share of NIC rate)")
    right.set_ylim(0, 1.05)
    right.set_title("MAT per traffic pattern")
    right.legend()
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()
