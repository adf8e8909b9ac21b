"""`fatpaths analyze OUT --failures`: the failure what-if as JSON, result lines and a figure.

Every single cable and switch (and plane) exhaustively, then k = 2..K random failures; the
summary is the share of host pairs keeping >= 1 and >= 2 working layers against k.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fatpaths_cfg.analysis.failures import (
    FailureTable,
    PathIndex,
    ProgressHook,
    RandomPoint,
    elements_of,
    index_paths,
    pairs_losing_all,
    rack_name,
    random_failures,
    single_failures,
    single_point,
    worst,
)
from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.failure_walks import walk_failures

SEMANTICS = (
    "static routes do not reconverge: a (host pair, plane, layer) path works iff the walk of "
    "the layer's next hops uses no failed cable or switch; host pairs are ordered; host pairs "
    "with a host whose every uplink switch failed are left out of the denominator"
)

# Switch pairs named per worst failure (all of them are counted).
NAMED_PAIRS = 20


@dataclass(frozen=True)
class FailureStudy:
    """What to run: random failures for k = 2..k_max, `samples` draws each, of `kind`."""

    k_max: int = 3
    samples: int = 100
    seed: int = 1
    kind: str = "cables"
    worst: int = 10


def study_failures(
    compiled: LoadedCompiled, study: FailureStudy, progress: ProgressHook | None = None
) -> dict[str, Any]:
    """The what-if of one compiled fabric, JSON-ready."""
    index = index_paths(compiled.fabric, compiled.next_hop, progress)
    table = single_failures(index, progress)
    pools = ["cables", "switches"] + (["any"] if study.kind == "any" else [])
    pools += ["planes"] if index.planes > 1 else []
    points = [_baseline(index), *(single_point(table, pool) for pool in pools)]
    ks = list(range(2, study.k_max + 1))
    if ks and study.samples:
        points += random_failures(index, ks, study.samples, study.seed, study.kind, progress)
    rows = table.rows()
    return {
        "fabric": compiled.fabric.name,
        "planes": index.planes,
        "layers": index.layers,
        "racks": index.racks,
        "hosts": int(index.rack_hosts.sum()),
        "host_pairs": int(index.weight.sum()),
        "semantics": SEMANTICS,
        "random": {"kind": study.kind, "samples": study.samples, "seed": study.seed},
        "summary": [asdict(p) for p in points],
        "worst": [_named_losses(index, table, rows[i], i) for i in worst(table, study.worst)],
        "failures": rows,
        # Only with `routing.backup`, so other fabrics' reports keep their bytes.
        **({"backups": backup_study(compiled)} if compiled.backup is not None else {}),
    }


def backup_study(compiled: LoadedCompiled) -> list[dict[str, Any]]:
    """Per layer: the share of routes (switch, destination switch) with a loop-free alternate,
    and over every single cable failure of the layer, the switch-pair walks the cable breaks
    and how many the backups carry on (the rest are dropped; none loops, see `verify`)."""
    assert compiled.backup is not None
    fabric = compiled.fabric
    nr = fabric.nr
    link_of = np.full((nr, nr), -1, dtype=np.int64)
    for link in fabric.links:
        link_of[link.a, link.b] = link_of[link.b, link.a] = link.index
    planes = fabric.plane_of_switch
    routed = ~np.eye(nr, dtype=bool) & (planes[:, None] == planes[None, :])
    rows = []
    for i, mask in enumerate(compiled.layer_masks):
        hop, backup = compiled.next_hop[i], compiled.backup[i]
        hop_link = np.where(hop >= 0, link_of[np.arange(nr)[:, None], hop], -1)
        backup_link = np.where(backup >= 0, link_of[np.arange(nr)[:, None], backup], -1)
        walks = walk_failures(hop, hop_link, backup, backup_link, np.flatnonzero(mask), routed)
        routes = int((hop >= 0).sum())
        saved = walks.walks - walks.dropped - len(walks.loops)
        rows.append(
            {
                "layer": i + 1,
                "routes": routes,
                "backups": int((backup >= 0).sum()),
                "lfa_coverage": round(int((backup >= 0).sum()) / routes, 6) if routes else None,
                "cable_failures": walks.failures,
                "broken_walks": walks.walks,
                "saved_walks": saved,
                "saved_share": round(saved / walks.walks, 6) if walks.walks else None,
                "loops": len(walks.loops),
            }
        )
    return rows


def backup_lines(result: dict[str, Any]) -> list[str]:
    lines = []
    for row in result.get("backups", []):
        lines.append(
            f"layer {row['layer']} backups: LFA coverage {_share(row['lfa_coverage'])} of "
            f"{row['routes']} routes; {row['cable_failures']} single cable failures break "
            f"{row['broken_walks']} switch-pair walks, backups carry "
            f"{_share(row['saved_share'])} on, {row['loops']} loop"
        )
    return lines


def _named_losses(
    index: PathIndex, table: FailureTable, row: dict[str, Any], number: int
) -> dict[str, Any]:
    """A worst failure's row plus the switch pairs (source -> destination) it leaves without
    a working layer, the first `NAMED_PAIRS` of them."""
    lost = pairs_losing_all(index, elements_of(index, table, number))
    names = [f"{rack_name(index, a)} -> {rack_name(index, b)}" for a, b in lost[:NAMED_PAIRS]]
    return {**row, "switch_pairs_losing_all": len(lost), "named_switch_pairs": names}


def _baseline(index: PathIndex) -> RandomPoint:
    """k = 0: what the fabric gives with nothing failed."""
    total = int(index.weight.sum())
    one = float((index.weight * (index.working >= 1)).sum() / total) if total else 1.0
    two = float((index.weight * (index.working >= 2)).sum() / total) if total else 1.0
    return RandomPoint(
        0, "none", 1, round(one, 6), round(one, 6), round(two, 6), round(two, 6), 0.0, 0.0
    )


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One line per k (and kind at k = 1)."""
    lines = []
    for point in result["summary"]:
        what = "no failure" if point["k"] == 0 else f"k={point['k']} {point['kind']}"
        if point["k"] >= 2:
            what += f" ({point['samples']} random draws)"
        elif point["k"] == 1:
            what += f" (all {point['samples']})"
        lines.append(
            f"{what}: host pairs keeping >= 1 layer {_share(point['mean_keep_one'])} "
            f"(worst {_share(point['worst_keep_one'])}), >= 2 layers "
            f"{_share(point['mean_keep_two'])} (worst {_share(point['worst_keep_two'])}), "
            f"losing every layer {_share(point['mean_lost_all'])}"
        )
    return lines


def worst_lines(result: dict[str, Any]) -> list[str]:
    lines = []
    for row in result["worst"]:
        lost = f", {row['lost_hosts']} hosts cut off" if row["lost_hosts"] else ""
        lines.append(
            f"worst: {row['kind']} {row['failure']}: {row['lost_all']} host pairs lose every "
            f"layer, {row['host_pairs'] - row['keep_two']} keep fewer than 2, "
            f"{row['broken_paths']} (host pair, layer) paths broken{lost}"
        )
    return lines


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4%}"


def failures_plot(result: dict[str, Any]) -> bytes:
    """Share of host pairs keeping >= 1 and >= 2 layers against k: mean (line) and worst draw
    (dashed); single switch (and plane) failures as separate markers at k = 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.4, 4.2))
    summary = result["summary"]
    kind = result["random"]["kind"]
    series = [p for p in summary if p["k"] == 0 or p["kind"] == kind]
    ks = [p["k"] for p in series]
    for column, label, colour in (
        ("keep_one", ">= 1 layer", "tab:blue"),
        ("keep_two", ">= 2 layers", "tab:orange"),
    ):
        ax.plot(
            ks,
            [_nan(p[f"mean_{column}"]) for p in series],
            "-o",
            color=colour,
            label=f"{label}, mean",
        )
        ax.plot(
            ks,
            [_nan(p[f"worst_{column}"]) for p in series],
            "--",
            color=colour,
            label=f"{label}, worst draw",
        )
        for point, marker in zip(
            [p for p in summary if p["k"] == 1 and p["kind"] != kind], "s^v", strict=False
        ):
            ax.plot(
                [1],
                [_nan(point[f"mean_{column}"])],
                marker,
                color=colour,
                fillstyle="none",
                label=f"{label}, one of the {point['kind']}",
            )
    ax.set_xticks(ks)
    ax.set_xlabel(f"k failed {kind}")
    ax.set_ylabel("share of host pairs")
    ax.set_title(f"{result['fabric']}: static routes under failures")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def _nan(value: float | None) -> float:
    return float("nan") if value is None else value
