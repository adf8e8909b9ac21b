"""The comparison view of a sweep: the metric against each swept routing parameter, one line
per scheme, with the spread over seeds.

Rows of one fabric, task and traffic whose task parameters differ only in the scheme (`scheme`
of analyze tasks, `lb` of simulate tasks) are compared. A scheme that ignores the layers (see
`spec.LAYER_INDEPENDENT`) ran once per seed, on one layer: it is drawn as a flat line across
the parameter, with its spread as a band.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from fatpaths_cfg.sweep.spec import LAYER_INDEPENDENT
from fatpaths_cfg.sweep.summary import METRIC_LABEL, TASK_METRIC

# The routing parameters a comparison may be drawn against, in the order they are tried.
SWEPT = ("layers", "rho", "algorithm")


@dataclass(frozen=True)
class Comparison:
    topology: str
    task: str
    traffic: str
    params: str  # the task parameters without the scheme, canonical JSON

    @property
    def metric(self) -> str:
        return TASK_METRIC[self.task][0]

    def slug(self) -> str:
        digest = hashlib.sha256(self.params.encode()).hexdigest()[:6]
        return f"{self.topology}-{self.task}-{self.traffic}-{digest}"


@dataclass(frozen=True)
class Spread:
    """The metric over the seeds that succeeded."""

    mean: float
    low: float
    high: float
    stdev: float
    seeds: int

    def text(self) -> str:
        return f"{self.mean:.4g} ± {self.stdev:.2g} ({self.seeds})"


def _spread(values: list[float]) -> Spread:
    return Spread(
        statistics.fmean(values),
        min(values),
        max(values),
        statistics.stdev(values) if len(values) > 1 else 0.0,
        len(values),
    )


def _without_scheme(task_params: str) -> str:
    params = json.loads(task_params)
    params.pop("scheme", None)
    params.pop("lb", None)
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def comparisons(rows: list[dict[str, Any]]) -> dict[Comparison, list[dict[str, Any]]]:
    groups: dict[Comparison, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        key = Comparison(
            row["topology"], row["task"], row["traffic"], _without_scheme(row["task_params"])
        )
        groups[key].append(row)
    return dict(sorted(groups.items(), key=lambda item: item[0].slug()))


def independent(comparison: Comparison, scheme: str) -> bool:
    return scheme in LAYER_INDEPENDENT[comparison.task]


def swept(comparison: Comparison, rows: list[dict[str, Any]]) -> list[str]:
    """The routing parameters with more than one value among the layer-dependent schemes."""
    mine = [r for r in rows if not independent(comparison, r["scheme"])]
    return [p for p in SWEPT if len({r[p] for r in mine}) > 1]


@dataclass(frozen=True)
class Line:
    scheme: str
    label: str
    flat: bool  # a layer-independent scheme: one value for the whole axis
    points: list[tuple[Any, Spread]]


def lines(comparison: Comparison, rows: list[dict[str, Any]], parameter: str) -> list[Line]:
    """Per scheme (and, for layer-dependent schemes, per value of the other swept
    parameters), the metric's spread over seeds at each value of `parameter`."""
    metric = comparison.metric
    ok = [r for r in rows if r["status"] == "ok" and r[metric] is not None]
    others = [p for p in swept(comparison, rows) if p != parameter]
    buckets: dict[tuple[str, tuple[Any, ...]], dict[Any, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in ok:
        if independent(comparison, row["scheme"]):
            buckets[(row["scheme"], ())][None].append(row[metric])
        else:
            rest = tuple(row[p] for p in others)
            buckets[(row["scheme"], rest)][row[parameter]].append(row[metric])
    result = []
    for (scheme, rest), by_value in sorted(buckets.items(), key=lambda item: str(item[0])):
        flat = independent(comparison, scheme)
        label = scheme
        if rest:
            label += " " + " ".join(
                f"{p}={v:g}" if isinstance(v, float) else f"{p}={v}"
                for p, v in zip(others, rest, strict=True)
            )
        if flat:
            label += " (ignores layers)"
        points = [
            (value, _spread(values))
            for value, values in sorted(
                by_value.items(), key=lambda kv: str(kv[0]) if kv[0] is None else kv[0]
            )
        ]
        result.append(Line(scheme, label, flat, points))
    return result


def comparison_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The comparison section of summary.md: a table per fabric, task and swept parameter."""
    out: list[str] = []
    for comparison, group_rows in comparisons(rows).items():
        for parameter in swept(comparison, group_rows):
            drawn = lines(comparison, group_rows, parameter)
            if len({line.scheme for line in drawn}) < 2 and len(drawn) < 2:
                continue
            values = sorted({v for line in drawn if not line.flat for v, _ in line.points})
            out += [
                "",
                f"### {comparison.topology}: {comparison.task} {comparison.traffic}, "
                f"{METRIC_LABEL[comparison.metric]} against {parameter}",
                "",
                f"Mean ± standard deviation over seeds (seeds). Task parameters: "
                f"`{comparison.params}`.",
                "",
                f"| scheme | {' | '.join(_value(v) for v in values)} |",
                "|---|" + "---:|" * len(values),
            ]
            for line in drawn:
                if line.flat:
                    cells = [line.points[0][1].text()] * len(values)
                else:
                    at = dict(line.points)
                    cells = [at[v].text() if v in at else "-" for v in values]
                out.append(f"| {line.label} | {' | '.join(cells)} |")
    if out:
        out = ["", "## Comparison of schemes", *out]
    return out


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def comparison_plots(name: str, rows: list[dict[str, Any]]) -> dict[str, bytes]:
    from fatpaths_cfg.sweep.plots import _png, _pyplot

    plots: dict[str, bytes] = {}
    for comparison, group_rows in comparisons(rows).items():
        for parameter in swept(comparison, group_rows):
            drawn = lines(comparison, group_rows, parameter)
            if not drawn:
                continue
            plt = _pyplot()
            figure, axis = plt.subplots(figsize=(6.4, 4.2))
            values = sorted({v for line in drawn if not line.flat for v, _ in line.points})
            numeric = all(isinstance(v, int | float) for v in values)
            xs = values if numeric else list(range(len(values)))
            for line in drawn:
                if line.flat:
                    spread = line.points[0][1]
                    drawn_line = axis.axhline(spread.mean, linestyle="--", label=line.label)
                    axis.axhspan(spread.low, spread.high, alpha=0.15, color=drawn_line.get_color())
                    continue
                at = dict(line.points)
                x = [xs[values.index(v)] for v in values if v in at]
                mean = [at[v].mean for v in values if v in at]
                low = [at[v].mean - at[v].low for v in values if v in at]
                high = [at[v].high - at[v].mean for v in values if v in at]
                axis.errorbar(x, mean, yerr=[low, high], marker="o", capsize=3, label=line.label)
            if not numeric:
                axis.set_xticks(xs, [str(v) for v in values])
            axis.set_xlabel(parameter)
            axis.set_ylabel(METRIC_LABEL[comparison.metric])
            axis.grid(alpha=0.3)
            axis.legend(fontsize=7)
            seeds = sorted({r["seed"] for r in group_rows})
            axis.set_title(
                f"{comparison.topology}: {comparison.task} {comparison.traffic}\n"
                f"sweep {name}; mean over seeds {', '.join(map(str, seeds))}, bars min..max",
                fontsize=9,
            )
            figure.tight_layout()
            plots[f"compare-{comparison.slug()}-{parameter}.png"] = _png(figure)
    return plots
