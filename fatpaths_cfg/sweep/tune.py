"""`fatpaths tune`: the best (layers, rho, algorithm) of a sweep under hardware limits, written
back as the routing block of a copy of the inventory, with the reasons in its header."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fatpaths_cfg.errors import UserError, UserErrors
from fatpaths_cfg.sweep.summary import (
    METRIC_LABEL,
    TASK_METRIC,
    PointScore,
    TaskGroup,
    best_point,
    point_scores,
    task_groups,
)

# First line of every inventory tune writes: what made it, and what lets a rerun replace it.
TUNED_INVENTORY = "# Written by fatpaths tune:"
METRIC_TASK = {metric: task for task, (metric, _) in TASK_METRIC.items()}
DEFAULT_LAYERS = (1, 2, 4, 8)
DEFAULT_RHO = (0.5, 0.7)
DEFAULT_ALGORITHMS = ("random",)
# The flags of tune's own grid, and the routing field each one sets.
GRID_FLAGS = {"--layers": "layers", "--rho": "rho", "--algorithms": "algorithm"}


@dataclass(frozen=True)
class Limits:
    routes_per_switch: int | None = None
    vlans: int | None = None
    address_bits: int | None = None

    def exceeded(self, score: PointScore) -> list[str]:
        """The limits `score` breaks, each as 'routes per switch 392 > 300'."""
        found = []
        for name, label in (
            ("routes_per_switch", "routes per switch"),
            ("vlans", "VLANs"),
            ("address_bits", "address bits"),
        ):
            limit = getattr(self, name)
            if limit is not None and getattr(score, name) > limit:
                found.append(f"{label} {getattr(score, name)} > {limit}")
        return found

    def describe(self) -> str:
        given = [
            f"{label} <= {value}"
            for label, value in (
                ("routes per switch", self.routes_per_switch),
                ("VLANs", self.vlans),
                ("address bits", self.address_bits),
            )
            if value is not None
        ]
        return ", ".join(given) or "no hardware limits"


@dataclass(frozen=True)
class Choice:
    fabric: str
    metric: str
    best: PointScore
    candidates: list[PointScore]
    excluded: dict[PointScore, list[str]]
    limits: Limits

    def explanation(self) -> list[str]:
        """Why this point: what was compared, what the limits ruled out, what came next."""
        higher = TASK_METRIC[METRIC_TASK[self.metric]][1]
        direction = "highest" if higher else "lowest"
        total = len(self.candidates) + len(self.excluded)
        lines = [
            f"{self.best.label()}: {direction} {METRIC_LABEL[self.metric]} "
            f"({self.best.value:g}) of {len(self.candidates)} routing points within "
            f"{self.limits.describe()} ({total} evaluated)",
            f"costs {self.best.routes_per_switch} routes per switch, "
            f"{self.best.address_bits} address bits, {self.best.vlans} VLANs",
        ]
        runner_up = [s for s in _ranked(self.candidates, higher) if s != self.best][:1]
        if runner_up:
            lines.append(f"next best: {runner_up[0].label()} with {runner_up[0].value:g}")
        better_excluded = [
            s for s in _ranked(list(self.excluded), higher) if _beats(s, self.best, higher)
        ][:2]
        for score in better_excluded:
            lines.append(
                f"ruled out: {score.label()} with {score.value:g} "
                f"({'; '.join(self.excluded[score])})"
            )
        return lines


def _beats(a: PointScore, b: PointScore, higher: bool) -> bool:
    return a.value > b.value if higher else a.value < b.value


def _ranked(scores: list[PointScore], higher: bool) -> list[PointScore]:
    return sorted(scores, key=lambda s: (-s.value if higher else s.value, s.routes_per_switch))


def merged_scores(rows: list[dict[str, Any]], fabric: str, metric: str) -> list[PointScore]:
    """Each routing point's metric averaged over every task group that measured it (several
    traffic patterns, say); points missing from a group are left out."""
    task = METRIC_TASK[metric]
    per_group: list[dict[tuple[int, float, str], PointScore]] = []
    for group, group_rows in task_groups(rows).items():
        if group.topology == fabric and group.task == task:
            scores = point_scores(group, group_rows)
            per_group.append({(s.layers, s.rho, s.algorithm): s for s in scores})
    if not per_group:
        return []
    common = set.intersection(*(set(g) for g in per_group))
    merged = []
    for point in sorted(common):
        scores = [g[point] for g in per_group]
        value = round(sum(s.value for s in scores) / len(scores), 4)
        first = scores[0]
        merged.append(
            PointScore(
                first.layers,
                first.rho,
                first.algorithm,
                value,
                min(s.seeds for s in scores),
                sum(s.failed for s in scores),
                first.routes_per_switch,
                first.address_bits,
                first.vlans,
            )
        )
    return merged


def choose(
    rows: list[dict[str, Any]], fabric: str, metric: str, limits: Limits, source: str
) -> Choice:
    scores = merged_scores(rows, fabric, metric)
    if not scores:
        raise UserErrors.single(
            source,
            "",
            f"no successful {METRIC_TASK[metric]} results for fabric {fabric!r}",
            f"the sweep must run `{METRIC_TASK[metric]}` tasks on this inventory",
        )
    excluded = {s: limits.exceeded(s) for s in scores if limits.exceeded(s)}
    candidates = [s for s in scores if s not in excluded]
    group = TaskGroup(fabric, METRIC_TASK[metric], "", "", "")
    best = best_point(group, candidates)
    if best is None:
        cheapest = min(scores, key=lambda s: (s.routes_per_switch, s.address_bits, s.vlans))
        raise UserErrors.single(
            source,
            "",
            f"none of {len(scores)} routing points fits {limits.describe()}; the cheapest, "
            f"{cheapest.label()}, has {'; '.join(excluded[cheapest])}",
            "raise a limit, or sweep fewer layers",
        )
    return Choice(fabric, metric, best, candidates, excluded, limits)


def default_sweep_yaml(
    inventory: Path,
    folder: Path,
    metric: str,
    layers: tuple[int, ...] = DEFAULT_LAYERS,
    rho: tuple[float, ...] = DEFAULT_RHO,
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS,
) -> str:
    """The small sweep tune runs when given none: the layer counts and densities that matter
    most (RESEARCH.md section 3), one task measuring `metric`, on the inventory's own routing
    seed, so that the tuned inventory compiles to exactly the layers that were measured."""
    from fatpaths_cfg.inventory.load import load_inventory

    task: dict[str, Any] = (
        {"analyze": {"traffic": "permutation", "pairs": 100}}
        if METRIC_TASK[metric] == "analyze"
        else {"simulate": {"workload": "permutation", "size": "64KiB"}}
    )
    spec = load_inventory(inventory).spec
    fabric = spec.fabric
    data = {
        "sweep": f"tune-{fabric}",
        "description": f"written by fatpaths tune for {inventory.name}",
        "topologies": [{"inventory": os.path.relpath(inventory.resolve(), folder.resolve())}],
        "grid": {"layers": list(layers), "rho": list(rho), "algorithm": list(algorithms)},
        "seeds": [spec.routing.seed],
        "tasks": [task],
    }
    return f"{TUNED_INVENTORY} sweep for {inventory.name}\n" + yaml.safe_dump(data, sort_keys=False)


def replace_routing_block(text: str, routing: dict[str, Any]) -> str:
    """`text` with its top-level routing block replaced (or added), every other line, comment
    and key as the user wrote it."""
    block = yaml.safe_dump({"routing": routing}, sort_keys=False)
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("routing:")), None)
    if start is None:
        return text.rstrip("\n") + "\n" + block
    end = start + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\t") or not lines[end].strip()):
        end += 1
    # Blank lines before the next key stay where they were.
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return "".join(lines[:start]) + block + "".join(lines[end:])


def without_tune_header(text: str) -> str:
    """An inventory tune wrote earlier, without the header that earlier run added."""
    lines = text.splitlines(keepends=True)
    if not lines or not lines[0].startswith(TUNED_INVENTORY):
        return text
    end = 1
    while end < len(lines) and lines[end].startswith("#   "):
        end += 1
    return "".join(lines[end:])


def tuned_inventory_text(inventory: Path, choice: Choice) -> str:
    text = without_tune_header(inventory.read_text(encoding="utf-8"))
    written = yaml.safe_load(text) or {}
    routing = dict(written.get("routing") or {})
    routing.update(layers=choice.best.layers, rho=choice.best.rho, algorithm=choice.best.algorithm)
    header = [f"{TUNED_INVENTORY} {inventory.name} with {choice.limits.describe()}\n"]
    header += [f"#   {line}\n" for line in choice.explanation()]
    return "".join(header) + replace_routing_block(text, routing)


def check_grid_flags(inventory: Path, grid: dict[str, tuple[Any, ...]]) -> None:
    """Each value of tune's own grid must make a valid routing block of this inventory, and
    is reported at its flag (tune writes the grid into a sweep file only after this)."""
    from pydantic import ValidationError

    from fatpaths_cfg.inventory.load import load_inventory
    from fatpaths_cfg.inventory.schema import RoutingSpec

    routing = load_inventory(inventory).spec.routing.model_dump()
    errors: list[UserError] = []
    for flag, values in grid.items():
        field = GRID_FLAGS[flag]
        if not values:
            errors.append(UserError(flag, 0, "", "no values given", "comma-separated values"))
        for value in values:
            try:
                RoutingSpec.model_validate({**routing, field: value})
            except ValidationError as exc:
                message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
                errors.append(UserError(flag, 0, "", f"{value!r}: {message}"))
    if errors:
        raise UserErrors(errors)


def check_tuned_target(out: Path, inventory: Path) -> None:
    """Tune writes a new file, or replaces one it wrote itself; never anything else."""
    if out.resolve() == inventory.resolve() and not _written_by_tune(out):
        raise UserErrors.single(
            out, "", "is the inventory being tuned", "write the tuned copy elsewhere with -o"
        )
    if os.path.lexists(out) and not _written_by_tune(out):
        raise UserErrors.single(
            out,
            "",
            "exists and was not written by fatpaths tune",
            "choose another path with -o (tune never overwrites other files)",
        )


def _written_by_tune(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as handle:
            return handle.readline().startswith(TUNED_INVENTORY)
    except (OSError, UnicodeDecodeError):
        return False


def tune_rows(
    inventory: Path,
    metric: str,
    sweep_file: Path | None,
    results: Path | None,
    grid: tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]],
    scheduler: str | None,
    workers: int | None,
) -> tuple[list[dict[str, Any]], str]:
    """The rows tune chooses from, and where they came from: an existing results folder, a
    sweep run (or resumed) now, or tune's own small sweep of this inventory. Without
    --results, the sweep runs in a temporary folder removed afterwards: tune writes nothing
    but the tuned inventory unless asked."""
    import tempfile

    from fatpaths_cfg.sweep.results import ResultsFolder

    if results is not None and sweep_file is None and ResultsFolder(results).dataset.is_dir():
        from fatpaths_cfg.sweep.dataset import read_rows

        return read_rows(ResultsFolder(results).dataset), str(ResultsFolder(results).dataset)
    if results is not None:
        return _tune_sweep(inventory, metric, sweep_file, results, grid, scheduler, workers)
    with tempfile.TemporaryDirectory(prefix="fatpaths-tune-") as scratch:
        rows, _ = _tune_sweep(
            inventory, metric, sweep_file, Path(scratch) / "results", grid, scheduler, workers
        )
    what = f"sweep {sweep_file}" if sweep_file else "tune's own sweep"
    return rows, f"{what} (not kept; --results DIR keeps it)"


def _tune_sweep(
    inventory: Path,
    metric: str,
    sweep_file: Path | None,
    results: Path,
    grid: tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]],
    scheduler: str | None,
    workers: int | None,
) -> tuple[list[dict[str, Any]], str]:
    from fatpaths_cfg.sweep.dataset import read_rows
    from fatpaths_cfg.sweep.results import (
        check_results_folder,
        claim_results_folder,
        record_files,
    )
    from fatpaths_cfg.sweep.run import execute_sweep, write_report
    from fatpaths_cfg.sweep.spec import load_sweep

    if sweep_file is None:
        name = f"tune-{yaml_fabric_name(inventory)}"
        folder = check_results_folder(results, name)
        sweep_file = results / "tune-sweep.yaml"
        claim_results_folder(folder, name, str(sweep_file))
        record_files(folder, [sweep_file])
        sweep_file.write_text(default_sweep_yaml(inventory, results, metric, *grid), "utf-8")
    plan = load_sweep(sweep_file)
    folder = check_results_folder(results, plan.name)
    execute_sweep(plan, folder, scheduler, workers)
    write_report(plan, folder)
    keys = {task.key for task in plan.tasks}
    return [row for row in read_rows(folder.dataset) if row["key"] in keys], str(folder.dataset)


def yaml_fabric_name(inventory: Path) -> str:
    from fatpaths_cfg.inventory.load import load_inventory

    return load_inventory(inventory).spec.fabric


def check_tuned_inventory(text: str, target: Path) -> None:
    """The tuned inventory must load, compile and fit its platforms before it is written."""
    import yaml

    from fatpaths_cfg.api import compile_loaded
    from fatpaths_cfg.inventory.load import validate_inventory
    from fatpaths_cfg.inventory.yaml_source import SourceMap
    from fatpaths_cfg.render import check_platform_limits, plan_render

    loaded = validate_inventory(yaml.safe_load(text), SourceMap(str(target)), target)
    compiled = compile_loaded(loaded)
    check_platform_limits(compiled, compiled.address_plan, plan_render(compiled, None, None))
