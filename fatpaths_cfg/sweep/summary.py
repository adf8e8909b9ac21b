"""From rows to choices: each routing point's performance (mean over seeds) and costs, the
Pareto front of cost against performance, and the markdown summary of a sweep."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

# The metric each task kind is judged by, and whether more is better.
TASK_METRIC = {"analyze": ("mat", True), "simulate": ("fct_p99_us", False)}
METRIC_LABEL = {
    "mat": "max achievable throughput (share of NIC rate)",
    "fct_p99_us": "p99 flow completion time [us]",
}
COSTS = {
    "routes_per_switch": "routes per switch",
    "address_bits": "host address bits (layer + switch + host)",
    "vlans": "VLAN ids",
}


@dataclass(frozen=True)
class TaskGroup:
    """Rows of one fabric that ran the same task with the same parameters."""

    topology: str
    task: str
    traffic: str
    scheme: str
    task_params: str

    @property
    def metric(self) -> str:
        return TASK_METRIC[self.task][0]

    @property
    def higher_is_better(self) -> bool:
        return TASK_METRIC[self.task][1]

    def describe(self) -> str:
        what = "traffic" if self.task == "analyze" else "workload"
        how = "scheme" if self.task == "analyze" else "load balancing"
        return f"{self.task}, {self.traffic} {what}, {self.scheme} {how}"

    def slug(self) -> str:
        digest = hashlib.sha256(self.task_params.encode()).hexdigest()[:6]
        return f"{self.topology}-{self.task}-{self.traffic}-{self.scheme}-{digest}"


@dataclass(frozen=True)
class PointScore:
    """One routing point of a task group: its costs and its metric over the seeds."""

    layers: int
    rho: float
    algorithm: str
    value: float
    seeds: int
    failed: int
    routes_per_switch: int
    address_bits: int
    vlans: int

    def label(self) -> str:
        return f"n={self.layers} rho={self.rho:g} {self.algorithm}"


def task_groups(rows: list[dict[str, Any]]) -> dict[TaskGroup, list[dict[str, Any]]]:
    groups: dict[TaskGroup, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        group = TaskGroup(
            row["topology"], row["task"], row["traffic"], row["scheme"], row["task_params"]
        )
        groups[group].append(row)
    return dict(sorted(groups.items(), key=lambda item: item[0].slug()))


def point_scores(group: TaskGroup, rows: list[dict[str, Any]]) -> list[PointScore]:
    """Per (layers, rho, algorithm): the mean metric over the seeds that succeeded."""
    by_point: dict[tuple[int, float, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_point[(row["layers"], row["rho"], row["algorithm"])].append(row)
    scores = []
    for (layers, rho, algorithm), point_rows in sorted(by_point.items()):
        ok = [r for r in point_rows if r["status"] == "ok" and r[group.metric] is not None]
        if not ok:
            continue
        scores.append(
            PointScore(
                layers,
                rho,
                algorithm,
                round(sum(r[group.metric] for r in ok) / len(ok), 4),
                len(ok),
                len(point_rows) - len(ok),
                max(r["routes_per_switch"] for r in ok),
                max(r["address_bits"] for r in ok),
                max(r["vlans"] for r in ok),
            )
        )
    return scores


def better(group: TaskGroup, a: float, b: float) -> bool:
    return a > b if group.higher_is_better else a < b


def pareto_front(group: TaskGroup, scores: list[PointScore], cost: str) -> list[PointScore]:
    """Points no other point beats on both `cost` (fewer) and the metric, cheapest first."""
    ordered = sorted(
        scores,
        key=lambda s: (getattr(s, cost), -s.value if group.higher_is_better else s.value),
    )
    front: list[PointScore] = []
    for score in ordered:
        if not front or better(group, score.value, front[-1].value):
            front.append(score)
    return front


def best_point(group: TaskGroup, scores: list[PointScore]) -> PointScore | None:
    """The best metric; among equals, the cheapest tables, then the fewest layers."""
    sign = -1 if group.higher_is_better else 1
    return min(
        scores,
        key=lambda s: (sign * s.value, s.routes_per_switch, s.address_bits, s.layers),
        default=None,
    )


def summary_markdown(name: str, rows: list[dict[str, Any]]) -> str:
    ok = sum(row["status"] == "ok" for row in rows)
    lines = [
        f"# Sweep {name}",
        "",
        f"{len(rows)} tasks: {ok} succeeded, {len(rows) - ok} failed.",
        "Values are means over the seeds that succeeded; costs are per switch.",
    ]
    from fatpaths_cfg.sweep.compare import comparison_markdown

    lines += comparison_markdown(rows)
    for group, group_rows in task_groups(rows).items():
        lines += _group_section(group, group_rows)
    failed = [row for row in rows if row["status"] != "ok"]
    if failed:
        lines += ["", "## Failed tasks", ""]
        lines += [
            f"- {r['topology']} n={r['layers']} rho={r['rho']:g} {r['algorithm']} "
            f"seed={r['seed']} {r['task']} {r['traffic']}: {r['error']}"
            for r in failed
        ]
    return "\n".join(lines) + "\n"


def _group_section(group: TaskGroup, rows: list[dict[str, Any]]) -> list[str]:
    scores = point_scores(group, rows)
    best = best_point(group, scores)
    direction = "higher" if group.higher_is_better else "lower"
    lines = [
        "",
        f"## {group.topology}: {group.describe()}",
        "",
        f"Metric: {METRIC_LABEL[group.metric]} ({direction} is better). "
        f"Task parameters: `{group.task_params}`.",
    ]
    if best is not None:
        lines.append(f"Best: **{best.label()}** with {best.value:g}.")
    lines += [
        "",
        f"| layers | rho | algorithm | {group.metric} | seeds | failed | routes/switch "
        "| address bits | VLANs |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {s.layers} | {s.rho:g} | {s.algorithm} | {s.value:g} | {s.seeds} | {s.failed} "
        f"| {s.routes_per_switch} | {s.address_bits} | {s.vlans} |"
        for s in scores
    ]
    return lines
