"""The path metrics as `analyze` shows them: one plain line per result, and one figure."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.disjoint import Graph
from fatpaths_cfg.analysis.path_metrics import LAYER_SETS, RoutedNetwork
from fatpaths_cfg.compiled import LoadedCompiled


def routed_network(compiled: LoadedCompiled) -> RoutedNetwork:
    fabric = compiled.fabric
    return RoutedNetwork(
        Graph(fabric.nr, fabric.edges.astype(np.int64)),
        np.array([h.switch for h in fabric.hosts], dtype=np.int64),
        compiled.next_hop,
    )


def _num(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def _sample_text(dist: dict[str, float], tail: str) -> str:
    extreme = "min" if tail == "p1" else "max"
    return " ".join(f"{k} {_num(dist[k])}" for k in ("mean", tail, extreme))


def cdp_line(layer_set: str, hops: str, entry: dict[str, Any]) -> str:
    head = f"c_l {layer_set} l={hops}:"
    pairs = entry["samples"]
    if layer_set != "topology":
        body = _sample_text(entry["exact"], "p1") if entry["exact"] else "n/a"
        return f"{head} {body} over {pairs} pairs (exact)"
    if entry["greedy"] is None:
        return f"{head} no pairs sampled"
    line = f"{head} greedy {_sample_text(entry['greedy'], 'p1')} over {pairs} pairs"
    gap = entry["gap"]
    if entry["exact"] is None:
        return f"{line}; no exact sample (none asked for, or all over the path cap)"
    return (
        f"{line}; exact mean {_num(entry['exact']['mean'])} min {_num(entry['exact']['min'])} "
        f"on {gap['samples']}, greedy below exact on {gap['samples_greedy_below_exact']} "
        f"(mean gap {_num(gap['mean_exact_minus_greedy'])}, max {gap['max_exact_minus_greedy']}), "
        f"length-bounded cut minus packing at most {gap['max_cut_minus_exact']}"
    )


def interference_line(layer_set: str, hops: str, entry: dict[str, Any]) -> str:
    head = f"interference {layer_set} l={hops}:"
    exact = entry["exact"]
    if layer_set != "topology":
        body = _sample_text(exact, "p99") if exact else "n/a"
        return f"{head} {body} over {entry['samples']} quadruples (exact)"
    exact_text = (
        f"exact mean {_num(exact['mean'])} max {_num(exact['max'])} on "
        f"{entry['exact_samples']} quadruples"
        if exact
        else "no exact sample (none asked for, or all over the path cap)"
    )
    greedy = entry["greedy"]
    greedy_text = (
        f"from greedy counts (not a bound) mean {_num(greedy['mean'])} p99 {_num(greedy['p99'])}"
        if greedy
        else "no greedy estimate"
    )
    return f"{head} {exact_text}; {greedy_text} over {entry['samples']}"


def tnl_line(layer_set: str, entry: dict[str, Any]) -> str:
    return (
        f"TNL {layer_set}: d={entry['mean_path_length']:.3f}, {entry['directed_channels']} "
        f"directed channels -> {entry['tnl_flows']:.1f} conflict-free flows "
        f"({entry['tnl_per_host']:.2f} per host)"
    )


def collision_line(entry: dict[str, Any]) -> str:
    flows = entry["flows_per_pair"]
    most = _num(flows["max"]) if flows else "0"
    return (
        f"collisions: {entry['permutations']} random permutations: "
        f"{entry['share_pairs_colliding']:.1%} of loaded switch pairs carry >= 2 flows, "
        f"{entry['share_pairs_over_3']:.1%} more than 3; at most {most} flows on one pair"
    )


def metric_lines(metrics: dict[str, Any]) -> list[str]:
    lengths = metrics["lengths"]
    lines = [
        f"path metrics: D={metrics['diameter']}, l={lengths[0]}..{lengths[-1]}, "
        f"{metrics['pairs_sampled']} pairs and {metrics['quadruples_sampled']} quadruples "
        f"sampled (seed {metrics['seed']}); exact topology programmes on the first "
        f"{metrics['exact_samples']} of each, at most {metrics['path_cap']} paths"
    ]
    for layer_set in LAYER_SETS:
        for hops, entry in metrics["cdp"][layer_set].items():
            lines.append(cdp_line(layer_set, hops, entry))
    for layer_set in LAYER_SETS:
        for hops, entry in metrics["interference"][layer_set].items():
            lines.append(interference_line(layer_set, hops, entry))
    lines += [tnl_line(ls, entry) for ls, entry in metrics["tnl"].items()]
    lines.append(collision_line(metrics["collisions"]))
    lines.append(radix_invariant_line(metrics["radix_invariant"], metrics["radix"]))
    return lines


def radix_invariant_line(entry: dict[str, Any] | None, radix: float) -> str:
    head = f"as in FatPaths Table IV (shares of k'={_num(radix)}):"
    if entry is None:
        return f"{head} no l up to D+2 has a 1% tail of c_l >= 3"
    pi = (
        f"PI mean {entry['pi_mean']:.0%}, 99.9% tail {entry['pi_p99.9']:.0%} "
        f"(exact, {entry['pi_samples']} quadruples)"
        if entry["pi_mean"] is not None
        else "PI n/a"
    )
    return (
        f"{head} d'={entry['d_prime']}: CDP mean {entry['cdp_mean']:.0%}, 1% tail "
        f"{entry['cdp_p1']:.0%} (greedy); {pi}"
    )


def _plotted(key: str, entry: dict[str, Any]) -> dict[str, float] | None:
    """What a panel shows: c_l as the greedy bound over all pairs unless the exact values
    cover them all; interference always exact, as its greedy estimate is not a bound."""
    if key == "interference" or entry.get("gap", {}).get("samples") == entry["samples"]:
        return dict(entry["exact"]) if entry["exact"] else None
    return dict(entry["greedy"]) if entry["greedy"] else None


def metrics_plot(metrics: dict[str, Any], fabric: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    lengths = [str(h) for h in metrics["lengths"]]
    for panel, key, tail, label in (
        (axes[0], "cdp", "p1", "c_l (edge-disjoint paths <= l hops)"),
        (axes[1], "interference", "p99", "path interference I^l"),
    ):
        for offset, layer_set in enumerate(LAYER_SETS):
            stats = [_plotted(key, metrics[key][layer_set][h]) for h in lengths]
            xs = np.arange(len(lengths)) + (offset - 1) * 0.1
            means = [s["mean"] if s else np.nan for s in stats]
            tails = [s[tail] if s else np.nan for s in stats]
            panel.plot(xs, means, "o-", label=f"{layer_set} mean")
            panel.plot(
                xs, tails, "x--", color=panel.lines[-1].get_color(), label=f"{layer_set} {tail}"
            )
        panel.set_xticks(range(len(lengths)), [f"l={h}" for h in lengths])
        panel.set_ylabel(label)
        panel.legend(fontsize=7)
    axes[0].set_title(f"{metrics['pairs_sampled']} sampled pairs (topology: greedy bound)")
    exact_quads = min(metrics["exact_samples"], metrics["quadruples_sampled"])
    axes[1].set_title(
        f"{metrics['quadruples_sampled']} sampled quadruples (topology: exact on {exact_quads})"
    )
    tnl = metrics["tnl"]
    axes[2].bar(list(tnl), [t["tnl_per_host"] for t in tnl.values()])
    axes[2].axhline(1.0, color="grey", linestyle=":")
    axes[2].set_ylabel("TNL per host (conflict-free flows)")
    axes[2].set_title("total network load")
    collisions = metrics["collisions"]
    hist = collisions["pairs_by_flow_count"]
    axes[3].bar([int(m) for m in hist], list(hist.values()))
    axes[3].set_xticks([int(m) for m in hist])
    axes[3].set_yscale("log")
    axes[3].set_xlabel("flows on one switch pair")
    axes[3].set_ylabel("switch pairs")
    axes[3].set_title(f"collisions, {collisions['permutations']} random permutations")
    figure.suptitle(
        f"{fabric}: FatPaths path metrics, D={metrics['diameter']}, seed {metrics['seed']}; "
        f"minimal and layers exact; {metrics['exact_samples']} exact samples for the topology"
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()
