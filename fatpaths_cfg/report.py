"""Layer statistics for report.json / report.md: what the layers buy and what they cost."""

from __future__ import annotations

from typing import Any

import numpy as np

from fatpaths_cfg.analysis.path_sampling import sample_pairs
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.routing import UNREACHABLE, hop_distances, layer_route_counts

# Counting distinct paths walks every pair in every layer; above this many pairs a seeded
# sample gives the same share to within a fraction of a percent at a fraction of the cost.
MAX_PATH_PAIRS = 250_000
DIVERSITY_THRESHOLD = 3


def _sample_pairs(nr: int, seed: int) -> tuple[np.ndarray, np.ndarray, bool]:
    pairs = sample_pairs(np.arange(nr), MAX_PATH_PAIRS, np.random.default_rng([seed, 0xD1CE]))
    s, t = (np.ascontiguousarray(pairs[:, i]) for i in (0, 1))
    return s, t, nr * (nr - 1) > MAX_PATH_PAIRS


def _sample_plane_pairs(plane_of: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Switch pairs within one plane (pairs across planes have no route to walk)."""
    nr = len(plane_of)
    if len(np.unique(plane_of)) == 1:
        return _sample_pairs(nr, seed)
    same = (plane_of[:, None] == plane_of[None, :]) & ~np.eye(nr, dtype=bool)
    if int(same.sum()) <= MAX_PATH_PAIRS:
        s, t = np.nonzero(same)
        return s, t, False
    rng = np.random.default_rng([seed, 0xD1CE])
    order = np.argsort(plane_of, kind="stable")
    sizes = np.bincount(plane_of)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.empty(nr, dtype=np.int64)
    position[order] = np.arange(nr) - starts[plane_of[order]]
    candidates = np.flatnonzero(sizes[plane_of] > 1)
    s = candidates[rng.integers(len(candidates), size=MAX_PATH_PAIRS)]
    size = sizes[plane_of[s]]
    offset = rng.integers(1, size)
    t = order[starts[plane_of[s]] + (position[s] + offset) % size]
    return s, t, True


def distinct_paths(next_hop: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Number of different switch paths the layers give each (s, t) pair."""
    layers = next_hop.shape[0]
    hashes = np.zeros((len(s), layers), dtype=np.uint64)
    multiplier = np.uint64(0x9E3779B97F4A7C15)
    for i in range(layers):
        table = next_hop[i]
        current = s.copy()
        h = np.zeros(len(s), dtype=np.uint64)
        active = current != t
        while active.any():
            current[active] = table[current[active], t[active]]
            h[active] = (h[active] * multiplier) ^ (current[active].astype(np.uint64) + 1)
            active &= current != t
        hashes[:, i] = h
    hashes.sort(axis=1)
    return 1 + (np.diff(hashes, axis=1) != 0).sum(axis=1)


def _minimal_distances(compiled: CompiledFabric) -> np.ndarray:
    """Shortest distances in the whole fabric (layer 1 is not minimal in acyclic mode)."""
    if compiled.layers[0].rank is None:
        return compiled.routing.dist[0]
    return hop_distances(compiled.fabric.nr, compiled.fabric.edges)


def build_report(compiled: CompiledFabric) -> dict[str, Any]:
    fabric, routing = compiled.fabric, compiled.routing
    nr = fabric.nr
    plane_of = fabric.plane_of_switch
    # Routes join switches of one plane; with one plane, every pair.
    off_diagonal = ~np.eye(nr, dtype=bool) & (plane_of[:, None] == plane_of[None, :])
    minimal = _minimal_distances(compiled)[off_diagonal].astype(np.float64)
    layers = []
    per_layer_routes = layer_route_counts(
        compiled.fabric.nr, compiled.fabric.edges, compiled.layers, compiled.routing
    )
    for i, layer in enumerate(compiled.layers):
        d = routing.dist[i][off_diagonal]
        histogram = np.bincount(d[d != UNREACHABLE], minlength=1)
        layers.append(
            {
                "layer": layer.number,
                "algorithm": layer.algorithm,
                "links": layer.link_count,
                "links_share": round(layer.link_count / max(len(fabric.links), 1), 4),
                "samples": layer.attempts,
                "completed_links": layer.completed_links,
                "path_length_histogram": {str(k): int(v) for k, v in enumerate(histogram) if v},
                "mean_path_length": round(float(d.mean()), 4) if len(d) else 0.0,
                "max_path_length": int(d.max()) if len(d) else 0,
                "stretch": round(float((d / minimal).mean()), 4) if len(d) else 1.0,
                "extra_hops_mean": round(float((d - minimal).mean()), 4) if len(d) else 0.0,
                "deadlock_free": compiled.deadlock_free[i] if compiled.deadlock_free else None,
                "up_down": layer.rank is not None,
                "forwarding_entries_per_switch": {
                    "min": int(per_layer_routes[i].min()),
                    "max": int(per_layer_routes[i].max()),
                },
            }
        )
    s, t, sampled = _sample_plane_pairs(plane_of, compiled.seed)
    distinct = distinct_paths(routing.next_hop, s, t) if len(s) else np.zeros(0, np.int64)
    counts = compiled.route_counts or [0]
    planes = {"planes": fabric.planes} if fabric.planes > 1 else {}
    return {
        "fabric": fabric.name,
        "switches": nr,
        "hosts": len(fabric.hosts),
        "links": len(fabric.links),
        **planes,
        "layers": layers,
        "forwarding_entries_per_switch": {
            "min": int(min(counts)),
            "max": int(max(counts)),
            "layer_routes_formula": "layers * (plane switches - 1)"
            if planes
            else "layers * (switches - 1)",
        },
        "path_diversity": {
            "pairs_examined": len(s),
            "sampled": sampled,
            "mean_distinct_paths": round(float(distinct.mean()), 4) if len(s) else 0.0,
            f"share_pairs_with_at_least_{DIVERSITY_THRESHOLD}_paths": round(
                float((distinct >= DIVERSITY_THRESHOLD).mean()), 4
            )
            if len(s)
            else 0.0,
            "histogram": {str(k): int(v) for k, v in enumerate(np.bincount(distinct)) if v}
            if len(s)
            else {},
        },
    }


def report_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# FatPaths layers of `{report['fabric']}`",
        "",
        f"{report['switches']} switches, {report['hosts']} hosts, {report['links']} links.",
        "",
        "| layer | algorithm | links | share | mean path | max path | stretch | routes/switch "
        "| deadlock-free |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for layer in report["layers"]:
        free = {True: "yes", False: "no", None: "n/a"}[layer["deadlock_free"]]
        entries = layer["forwarding_entries_per_switch"]
        routes = (
            str(entries["min"])
            if entries["min"] == entries["max"]
            else f"{entries['min']}..{entries['max']}"
        )
        lines.append(
            f"| {layer['layer']} | {layer['algorithm']} | {layer['links']} | "
            f"{layer['links_share']:.2f} | {layer['mean_path_length']:.3f} | "
            f"{layer['max_path_length']} | {layer['stretch']:.3f} | {routes} | {free} |"
        )
    diversity = report["path_diversity"]
    share_key = f"share_pairs_with_at_least_{DIVERSITY_THRESHOLD}_paths"
    entries = report["forwarding_entries_per_switch"]
    lines += [
        "",
        "## Path diversity",
        "",
        f"Pairs examined: {diversity['pairs_examined']}"
        f"{' (sampled)' if diversity['sampled'] else ''}; mean distinct paths across layers: "
        f"{diversity['mean_distinct_paths']:.2f}; pairs with at least {DIVERSITY_THRESHOLD} "
        f"distinct paths: {100 * diversity[share_key]:.1f}%.",
        "",
        "## Forwarding entries",
        "",
        f"Layer routes per switch: {entries['min']}..{entries['max']}.",
        "",
        "## Path-length histograms",
        "",
    ]
    for layer in report["layers"]:
        histogram = ", ".join(f"{k} hops: {v}" for k, v in layer["path_length_histogram"].items())
        lines.append(f"- layer {layer['layer']}: {histogram}")
    return "\n".join(lines) + "\n"


def report_title(report: dict[str, Any]) -> str:
    """What the plot shows, for a reader who has only the image: fabric and layers."""
    return (
        f"FatPaths layers of {report['fabric']}: {report['switches']} switches, "
        f"{report['hosts']} hosts, {len(report['layers'])} layers"
    )


def report_plot(report: dict[str, Any]) -> bytes:
    """report.png: path-length distribution per layer and distinct paths per switch pair."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (lengths, diversity) = plt.subplots(1, 2, figsize=(11, 4))
    layers = report["layers"]
    width = 0.8 / max(len(layers), 1)
    for i, layer in enumerate(layers):
        histogram = {int(k): v for k, v in layer["path_length_histogram"].items()}
        total = sum(histogram.values()) or 1
        hops = sorted(histogram)
        lengths.bar(
            [h + (i - (len(layers) - 1) / 2) * width for h in hops],
            [histogram[h] / total for h in hops],
            width=width,
            label=f"layer {layer['layer']} ({layer['algorithm']})",
        )
    lengths.set_xlabel("path length [hops]")
    lengths.set_ylabel("share of switch pairs")
    lengths.set_title("path length per layer")
    # A fixed corner: "best" tries every placement against every bar.
    lengths.legend(fontsize="small", loc="upper right")
    spread = {int(k): v for k, v in report["path_diversity"]["histogram"].items()}
    total = sum(spread.values()) or 1
    diversity.bar(sorted(spread), [spread[k] / total for k in sorted(spread)], color="tab:green")
    diversity.axvline(DIVERSITY_THRESHOLD - 0.5, color="grey", linestyle="--")
    diversity.set_xticks(sorted(spread))
    diversity.set_xlabel("distinct paths across the layers")
    diversity.set_ylabel("share of switch pairs")
    diversity.set_title("path diversity")
    title = report_title(report)
    figure.suptitle(title)
    # Fixed margins that fit these labels: tight_layout draws the figure once more to find
    # them, a third of the plot's time.
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.85, wspace=0.22)
    buffer = io.BytesIO()
    # No software/date metadata: the same report must give the same bytes.
    figure.savefig(buffer, format="png", dpi=100, metadata={"Title": title, "Software": None})
    plt.close(figure)
    return buffer.getvalue()
