"""`fatpaths analyze OUT --planes`: MAT per routing scheme over parallel dataplanes (K swept
for KSP) and hop count under random link failures, as JSON and one figure."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.plane_failures import hops_under_failures
from fatpaths_cfg.analysis.plane_set import PlaneSet
from fatpaths_cfg.analysis.plane_throughput import (
    PathCatalogue,
    host_pattern,
    plane_throughput,
)

PLANE_PATTERNS = ("permutation", "all-to-all")
KSP_SCHEMES = ("ksp", "ksp-total")


@dataclass(frozen=True)
class PlaneStudy:
    """What to run: schemes per pattern, K values for the KSP schemes, failure shares."""

    patterns: tuple[str, ...]
    schemes: tuple[str, ...]
    k_values: tuple[int, ...]
    failure_shares: tuple[float, ...]
    trials: int
    seed: int


def study_planes(
    planes: PlaneSet,
    study: PlaneStudy,
    layer_next_hops: list[np.ndarray] | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """MAT (Gb/s per host) per pattern and scheme, and hop count per failure share."""
    started = time.process_time()
    sweeps_k = any(scheme in KSP_SCHEMES for scheme in study.schemes)
    catalogue = PathCatalogue(planes, study.seed, max(study.k_values) if sweeps_k else 0)
    if layer_next_hops is not None:
        catalogue.set_layers(layer_next_hops)
    mat: dict[str, dict[str, Any]] = {}
    for pattern in study.patterns:
        pairs = host_pattern(planes, pattern, study.seed)
        row: dict[str, Any] = {}
        for scheme in study.schemes:
            if scheme == "fatpaths" and layer_next_hops is None:
                continue
            ks: Sequence[int | None] = study.k_values if scheme in KSP_SCHEMES else (None,)
            values = {}
            for k in ks:
                lp_started = time.process_time()
                solved = plane_throughput(catalogue, pairs, scheme, k)
                lp_cpu = time.process_time() - lp_started
                values[str(k) if k is not None else "-"] = round(solved.throughput_gbps, 3)
                if say:
                    label = f"{scheme} K={k}" if k is not None else scheme
                    say(
                        f"{planes.name}: {pattern} {label}: {solved.throughput_gbps:.2f} Gb/s "
                        f"({lp_cpu:.1f} CPU-s)"
                    )
            row[scheme] = values if scheme in KSP_SCHEMES else values["-"]
        mat[pattern] = row
    lp_seconds = time.process_time() - started
    points = hops_under_failures(planes, study.failure_shares, study.trials, study.seed)
    return {
        "fabric": planes.name,
        "planes": planes.planes,
        "racks": planes.racks,
        "hosts": planes.hosts,
        "link_gbps": list(planes.link_gbps),
        "uplink_gbps": list(planes.uplink_gbps),
        "seed": study.seed,
        "max_achievable_throughput_gbps": mat,
        "hops_under_failures": [
            {
                "share": p.share,
                "mean_hops": round(p.mean_hops, 4),
                "unreachable": round(p.unreachable, 4),
                "trials": p.trials,
            }
            for p in points
        ],
        "cpu_seconds": {
            "lp": round(lp_seconds, 1),
            "failures": round(time.process_time() - started - lp_seconds, 1),
        },
    }


def planes_plot(results: Sequence[dict[str, Any]], title: str) -> bytes:
    """Left: MAT against K per pattern (KSP schemes); right: hop count against failed share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    patterns = [
        p for p in PLANE_PATTERNS if any(p in r["max_achievable_throughput_gbps"] for r in results)
    ]
    figure, axes = plt.subplots(1, len(patterns) + 1, figsize=(5.2 * (len(patterns) + 1), 4.2))
    for ax, pattern in zip(axes, patterns, strict=False):
        for result in results:
            row = result["max_achievable_throughput_gbps"].get(pattern, {})
            for scheme in KSP_SCHEMES:
                if scheme in row:
                    ks = [int(k) for k in row[scheme]]
                    style = "-o" if scheme == "ksp-total" else "--x"
                    ax.plot(
                        ks, list(row[scheme].values()), style, label=f"{result['fabric']} {scheme}"
                    )
            if "mcf" in row:
                ax.axhline(row["mcf"], linestyle=":", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K (paths)")
        ax.set_ylabel("MAT per host (Gb/s)")
        ax.set_title(f"{pattern}: MAT vs K (dotted: unconstrained)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    ax = axes[-1]
    for result in results:
        points = result["hops_under_failures"]
        ax.plot(
            [100 * p["share"] for p in points],
            [p["mean_hops"] for p in points],
            "-o",
            label=result["fabric"],
        )
    ax.set_xlabel("links failed (%)")
    ax.set_ylabel("mean best-plane hop count")
    trials = results[0]["hops_under_failures"][0]["trials"] if results else 0
    ax.set_title(f"hop count under random link failures ({trials} trials)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    figure.suptitle(title)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()
