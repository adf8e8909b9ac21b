"""How long `fatpaths analyze OUT --failures` takes for every single cable and switch failure of
a Slim Fly, against a networkx baseline timed in the same run.

Targets: Slim Fly q=19 with 9 layers (722 switches, 10,469 cables) <= 60 s; q=7 <= 5 s.

    python benchmarks/failures.py [--q 19] [--layers 9] [--naive-failures 40]

Ours: one walk of every (switch pair, layer) path indexes the cables and switches on it, and all
single failures are counted from one sort of that index (fatpaths_cfg.analysis.failures).
Two networkx baselines, both on per (layer, destination) in-trees of the next hops (DiGraphs,
built with what each source reaches unfailed; that part is counted in both):
- in-tree: the same idea in networkx: a cable into tree node u, or u itself, cuts off u and
  its `nx.ancestors`; run on every failure, and it must give our counts on every one;
- naive: per failure, `nx.ancestors` of each destination in a view without the failed cable
  or switch. It takes hours on q=19, so it is timed on a sample of the failures (spread over
  cables and switches) and scaled to all of them; on that sample it must give our counts.
The compile is not part of any figure.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from array import array
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from fatpaths_cfg import api
from fatpaths_cfg.analysis.failures import index_paths, single_failures
from fatpaths_cfg.compiled import LoadedCompiled, view_of


def compile_slimfly(q: int, layers: int) -> LoadedCompiled:
    with tempfile.TemporaryDirectory() as scratch:
        inventory = Path(scratch) / f"slimfly-q{q}.yaml"
        inventory.write_text(
            f"fabric: slimfly-q{q}\n"
            f"generate: {{kind: slimfly, q: {q}}}\n"
            f"routing: {{layers: {layers}, rho: 0.6, algorithm: random, seed: 1}}\n",
            encoding="utf-8",
        )
        return view_of(api.compile_fabric(inventory))


def layer_trees(table: np.ndarray) -> list[nx.DiGraph]:
    """[destination]: one layer's in-tree of next hops towards the destination."""
    nr = len(table)
    trees = []
    for d in range(nr):
        tree = nx.DiGraph()
        tree.add_nodes_from(range(nr))
        tree.add_edges_from((s, int(table[s, d])) for s in range(nr) if table[s, d] >= 0)
        trees.append(tree)
    return trees


@dataclass
class Baseline:
    """Both baselines' counts and seconds (`build`: the trees and their unfailed reach)."""

    naive: list[dict[str, int]]
    in_tree: list[dict[str, int]]
    build_seconds: float
    naive_seconds: float
    in_tree_seconds: float


def baselines(compiled: LoadedCompiled, sample: list[tuple[str, int]]) -> Baseline:
    """Host pairs keeping >= 1 / >= 2 layers, and losing every layer: every failure by the
    in-tree baseline, the sample (`cable` or `switch`, index) by the naive one. One plane, so a
    switch takes its hosts with it. One layer's trees at a time (all of q=19's take 3 GB)."""
    fabric = compiled.fabric
    nr, layers, cables = fabric.nr, compiled.next_hop.shape[0], len(fabric.links)
    before = np.zeros((nr, nr), dtype=np.int64)
    after = np.zeros((len(sample), nr, nr), dtype=np.int64)
    cut_element, cut_pair = array("q"), array("q")  # per element, the (s, d) it cuts off
    build = naive = in_tree = 0.0
    for layer in range(layers):
        started = time.perf_counter()
        trees = layer_trees(compiled.next_hop[layer])
        reach = [nx.ancestors(tree, d) for d, tree in enumerate(trees)]
        for d, sources in enumerate(reach):
            before[list(sources), d] += 1
        build += time.perf_counter() - started

        started = time.perf_counter()
        for i, (kind, element) in enumerate(sample):
            nodes, edges = [element] if kind == "switch" else [], []
            if kind == "cable":
                link = fabric.links[element]
                edges = [(link.a, link.b), (link.b, link.a)]
            for d, tree in enumerate(trees):
                if d not in nodes:
                    view = nx.restricted_view(tree, nodes, edges)
                    after[i, list(nx.ancestors(view, d)), d] += 1
        naive += time.perf_counter() - started

        started = time.perf_counter()
        for d, tree in enumerate(trees):
            for u in reach[d]:
                (v,) = tree.successors(u)
                below = nx.ancestors(tree, u)
                below.add(u)
                pairs = [s * nr + d for s in below]
                cut_element.extend([fabric.link_between[(u, v)]] * len(pairs))
                cut_pair.extend(pairs)
                if v != d:  # v is on these paths too
                    cut_element.extend([cables + v] * len(pairs))
                    cut_pair.extend(pairs)
        in_tree += time.perf_counter() - started
        del trees, reach
    before[np.diag_indices(nr)] = layers
    after[:, np.arange(nr), np.arange(nr)] = layers
    hosts = np.array([len(h) for h in fabric.hosts_of_switch], dtype=np.int64)
    weight = np.outer(hosts, hosts) - np.diag(hosts)
    naive_counts = [
        _counts(weight, before, after[i], element if kind == "switch" else None)
        for i, (kind, element) in enumerate(sample)
    ]
    started = time.perf_counter()
    elements = np.frombuffer(cut_element, dtype=np.int64)
    pairs = np.frombuffer(cut_pair, dtype=np.int64)
    order = np.argsort(elements, kind="stable")
    bounds = np.searchsorted(elements[order], np.arange(cables + nr + 1))
    in_tree_counts = []
    for element in range(cables + nr):
        cut = np.bincount(pairs[order[bounds[element] : bounds[element + 1]]], minlength=nr * nr)
        switch = element - cables if element >= cables else None
        in_tree_counts.append(_counts(weight, before, before - cut.reshape(nr, nr), switch))
    in_tree += time.perf_counter() - started
    return Baseline(naive_counts, in_tree_counts, build, naive, in_tree)


def _counts(
    weight: np.ndarray, before: np.ndarray, after: np.ndarray, switch: int | None
) -> dict[str, int]:
    if switch is not None:  # its hosts are cut off: their pairs leave the denominator
        weight = weight.copy()
        weight[switch, :] = weight[:, switch] = 0
    return {
        "host_pairs": int(weight.sum()),
        "lost_all": int((weight * ((before >= 1) & (after == 0))).sum()),
        "keep_one": int((weight * (after >= 1)).sum()),
        "keep_two": int((weight * (after >= 2)).sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, default=19)
    parser.add_argument("--layers", type=int, default=9)
    parser.add_argument(
        "--naive-failures",
        type=int,
        default=None,
        help="Failures the naive baseline is timed on (default 40 for q <= 7, 2 above).",
    )
    args = parser.parse_args()
    naive_failures = args.naive_failures or (40 if args.q <= 7 else 2)
    started = time.perf_counter()
    compiled = compile_slimfly(args.q, args.layers)
    fabric = compiled.fabric
    print(
        f"slimfly q={args.q}, {args.layers} layers: {fabric.nr} switches, "
        f"{len(fabric.links)} cables, {len(fabric.hosts)} hosts "
        f"(compile {time.perf_counter() - started:.1f} s, not timed below)"
    )

    started = time.perf_counter()
    index = index_paths(fabric, compiled.next_hop)
    table = single_failures(index)
    ours = time.perf_counter() - started
    failures = len(table)
    print(
        f"fatpaths: all {failures} single failures ({index.cables} cables, {fabric.nr} switches)"
        f" in {ours:.2f} s ({index.broken.size:,} (path, element) entries)"
    )

    rng = np.random.default_rng(args.q)
    cable_share = index.cables / failures
    cables = rng.choice(index.cables, max(1, round(naive_failures * cable_share)), False)
    switches = rng.choice(fabric.nr, max(1, naive_failures - len(cables)), False)
    sample = [("cable", int(c)) for c in cables] + [("switch", int(s)) for s in switches]
    measured = baselines(compiled, sample)
    rows = table.rows()
    same_naive = all(
        rows[element + (index.cables if kind == "switch" else 0)][column] == value
        for (kind, element), got in zip(sample, measured.naive, strict=True)
        for column, value in got.items()
    )
    same_in_tree = all(
        row[column] == value
        for row, got in zip(rows, measured.in_tree, strict=True)
        for column, value in got.items()
    )
    build = measured.build_seconds
    in_tree = build + measured.in_tree_seconds
    print(
        f"networkx in-tree baseline: all {failures} single failures in {in_tree:.1f} s "
        f"(trees and unfailed reach {build:.1f} s), {in_tree / ours:.0f}x ours; "
        f"same counts on every failure: {'yes' if same_in_tree else 'NO'}"
    )
    per_failure = measured.naive_seconds / len(sample)
    estimate = build + per_failure * failures
    print(
        f"networkx naive baseline: {len(sample)} failures timed at {per_failure:.3f} s each "
        f"-> {estimate:.0f} s for all {failures} (scaled), {estimate / ours:.0f}x ours; "
        f"same counts on the sample: {'yes' if same_naive else 'NO'}"
    )


if __name__ == "__main__":
    main()
