"""PNG plots of simulation results: FCT CDF per scheme and FCT against flow size."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .results import SimResult


def _pyplot():  # type: ignore[no-untyped-def]
    # A headless backend: plots are written to files, often on machines without a display.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_fct_cdf(results: Mapping[str, SimResult], path: str | Path) -> None:
    """One CDF curve of flow completion time per scheme (label), log-scaled time axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, result in results.items():
        fct = result.fct_ps()
        fct = np.sort(fct[np.isfinite(fct)]) / 1e6
        if len(fct) == 0:
            continue
        frac = np.arange(1, len(fct) + 1) / result.workload.n_flows
        p99 = np.percentile(fct, 99)
        ax.step(fct, frac, where="post", label=f"{label} (p99 {p99:.0f} us)")
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time [us]")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title("FCT CDF")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_fct_vs_size(results: Mapping[str, SimResult], path: str | Path) -> None:
    """FCT against flow size: one panel per scheme, side by side, shared axes."""
    plt = _pyplot()
    n = max(1, len(results))
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 4.0), sharex=True, sharey=True, squeeze=False)
    for ax, (label, result) in zip(axes[0], results.items(), strict=False):
        fct = result.fct_ps() / 1e6
        ok = np.isfinite(fct)
        ax.scatter(result.workload.size[ok], fct[ok], s=4, alpha=0.4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(label)
        ax.set_xlabel("flow size [bytes]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("flow completion time [us]")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
