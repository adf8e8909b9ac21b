"""PNG plots of simulation results: FCT CDF per scheme and FCT against flow size.

A plot is read away from the command that made it, so its title says what ran (fabric,
workload, transport) and its legend the layers each scheme used; the title is also stored as
the PNG's Title text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .results import SimResult

# Line style and marker per curve, so a curve lying exactly on another still shows.
CURVE_STYLES = (("-", None), ("--", "o"), (":", "s"), ("-.", "^"), ((0, (5, 1)), "v"))


def _figure(**kwargs: Any) -> Any:
    # A bare Figure rather than pyplot: nothing is shown, no figure manager or backend switch
    # is needed, and importing pyplot would double the start-up of a small run. Saving renders
    # with Agg, headless.
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def format_bytes(size: int) -> str:
    """2000000 -> '2MB', 65536 -> '64KiB', 1500 -> '1500B' (how --size is written)."""
    for unit, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000), ("MiB", 2**20)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024}KiB"
    return f"{size}B"


def workload_label(result: SimResult) -> str:
    """`permutation 1MB`, `uniform websearch, 300 flows/s per host`, `matrix flows.cm`."""
    d = result.workload.description
    if "source" in d:
        return f"matrix {Path(str(d['source'])).name}"
    sizes = d.get("sizes")
    text = str(d.get("pattern", "workload"))
    if isinstance(sizes, int):
        text += f" {format_bytes(sizes)}"
    elif sizes is not None:
        text += f" {sizes}"
    if d.get("arrival_rate"):
        text += f", {d['arrival_rate']:g} flows/s per host"
    return text


def run_title(result: SimResult) -> str:
    """`slimfly-q3, 54 hosts: permutation 1MB, ndp, 3 layers`."""
    return (
        f"{result.network_name}, {result.n_hosts} hosts: {workload_label(result)}, "
        f"{result.config.get('transport')}, {result.n_layers} layers"
    )


def layers_used(result: SimResult) -> str:
    """The layers a scheme may use: FatPaths its configured ones, the baselines the full
    network's minimal paths (or the compiled layer 1 with `--compiled-baselines`)."""
    if result.config.get("load_balancing") != "fatpaths":
        return "all links" if result.config.get("baselines_on_full_network", True) else "layer 1"
    chosen = result.config.get("fatpaths_layers")
    if isinstance(chosen, tuple | list):
        return "layers " + ",".join(str(x) for x in chosen)
    return f"layers 1-{result.n_layers}" if result.n_layers > 1 else "layer 1"


def _save(fig: Any, path: str | Path, title: str) -> None:
    # No software/date metadata: the same results give the same bytes.
    fig.savefig(path, dpi=120, metadata={"Title": title, "Software": None})


def fct_cdf_figure(results: Mapping[str, SimResult]) -> Any:
    """One CDF curve of flow completion time per scheme (label), log-scaled time axis.

    The fraction is of all measured flows (warm-up flows left out, as in the summaries), so a
    curve of a run with unfinished flows ends below 1; the legend says how many did not finish.
    A curve equal to an earlier one says so.
    """
    fig = _figure(figsize=(7.2, 4.6))
    ax = fig.subplots()
    drawn: dict[str, np.ndarray] = {}
    for i, (label, result) in enumerate(results.items()):
        fct = result.fct_ps()[result.measured]
        done = np.sort(fct[np.isfinite(fct)]) / 1e6
        n = len(fct)
        text = f"{label} ({layers_used(result)})"
        same = [other for other, curve in drawn.items() if np.array_equal(curve, done)]
        drawn[label] = done
        linestyle, marker = CURVE_STYLES[i % len(CURVE_STYLES)]
        if len(done) == 0:
            ax.plot([], [], linestyle=linestyle, label=f"{text}: none of {n} flows finished")
            continue
        text += f", p99 {np.percentile(done, 99):,.0f} µs"
        if len(done) < n:
            text += f", {n - len(done)} of {n} flows unfinished"
        if same:
            text += f" (same curve as {', '.join(same)})"
        ax.step(
            done,
            np.arange(1, len(done) + 1) / n,
            where="post",
            label=text,
            linestyle=linestyle,
            marker=marker,
            markevery=max(1, len(done) // 8),
            markersize=4,
            fillstyle="none",
        )
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time [µs]")
    ax.set_ylabel("fraction of all flows")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(f"FCT CDF\n{run_title(next(iter(results.values())))}", fontsize="medium")
    fig.tight_layout()
    return fig


def plot_fct_cdf(results: Mapping[str, SimResult], path: str | Path) -> None:
    fig = fct_cdf_figure(results)
    _save(fig, path, fig.axes[0].get_title().replace("\n", ": "))


def has_several_sizes(results: Mapping[str, SimResult]) -> bool:
    sizes = [np.asarray(r.workload.size) for r in results.values()]
    return len(np.unique(np.concatenate(sizes))) > 1 if sizes else False


def fct_vs_size_figure(results: Mapping[str, SimResult]) -> Any:
    """FCT against flow size: one panel per scheme, side by side, shared axes."""
    n = max(1, len(results))
    fig = _figure(figsize=(4.2 * n, 4.4))
    axes = fig.subplots(1, n, sharex=True, sharey=True, squeeze=False)
    for ax, (label, result) in zip(axes[0], results.items(), strict=False):
        measured = result.measured
        fct = result.fct_ps()[measured] / 1e6
        ok = np.isfinite(fct)
        ax.scatter(result.workload.size[measured][ok], fct[ok], s=4, alpha=0.4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        unfinished = int(np.sum(~ok))
        note = f"\n{unfinished} of {len(fct)} flows unfinished" if unfinished else ""
        ax.set_title(f"{label} ({layers_used(result)}){note}", fontsize="medium")
        ax.set_xlabel("flow size [bytes]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("flow completion time [µs]")
    fig.suptitle(f"FCT by flow size: {run_title(next(iter(results.values())))}", fontsize="medium")
    fig.tight_layout()
    return fig


def plot_fct_vs_size(results: Mapping[str, SimResult], path: str | Path) -> bool:
    """Write the plot; False (and no file) when every flow has one size: it would be a
    single column of dots, the CDF says the same better."""
    if not has_several_sizes(results):
        return False
    fig = fct_vs_size_figure(results)
    _save(fig, path, fig.get_suptitle())
    return True
