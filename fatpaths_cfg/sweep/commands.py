"""`fatpaths sweep SWEEP.yaml` and `fatpaths tune INVENTORY`.

Dask and pyarrow are imported inside the commands only, so `fatpaths --help` and the other
commands do not pay for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

if TYPE_CHECKING:
    from fatpaths_cfg.sweep.results import ResultsFolder
    from fatpaths_cfg.sweep.spec import SweepPlan

console = Console()
RowHook = Callable[[dict[str, Any]], None]


def say(text: str) -> None:
    """A plain message: no markup (names and paths may hold [brackets]), never wrapped."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


# What a shell reports for a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130

SCHEDULER_HELP = "Address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a "
SCHEDULER_HELP += "local cluster sized to this machine)."
# What Dask's Client accepts from a user: [SCHEME://]HOST:PORT, an IPv6 host in brackets.
_SCHEDULER_ADDRESS = re.compile(
    r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})/?"
)


def check_scheduler(address: str | None) -> None:
    """Refuse a --scheduler that is not an address before anything is loaded or written
    (Dask's Client raised a bare ValueError on `junk`)."""
    from fatpaths_cfg.errors import UserErrors

    if address is None:
        return
    match = _SCHEDULER_ADDRESS.fullmatch(address)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise UserErrors.single(
            "--scheduler",
            "",
            f"{address!r} is not a Dask scheduler address",
            "[tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786; leave it out for a local cluster",
        )


@dataclass(frozen=True)
class SweepRun:
    total: int
    already_done: int
    computed: int
    failed: int
    where: str


def result_line(row: dict[str, Any]) -> str:
    """One finished task, as printed when stdout is not a terminal (logs, CI)."""
    point = (
        f"{row['topology']} n={row['layers']} rho={row['rho']:g} {row['algorithm']} "
        f"seed={row['seed']} {row['task']} {row['traffic']}/{row['scheme']}"
    )
    if row["status"] != "ok":
        return f"error {point}: {str(row['error']).splitlines()[0]}"
    metric = "mat" if row["task"] == "analyze" else "fct_p99_us"
    return f"ok {point}: {metric}={row[metric]} ({row['seconds']:.2f} s)"


@contextmanager
def result_display(total: int) -> Iterator[RowHook]:
    """A progress bar on a terminal; otherwise one line per result."""
    count = 0
    if not console.is_terminal:

        def line(row: dict[str, Any]) -> None:
            nonlocal count
            count += 1
            print(f"[{count}/{total}] {result_line(row)}", flush=True)

        yield line
        return
    columns = (
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("sweep", total=total, failed=0)
        failed = 0

        def advance(row: dict[str, Any]) -> None:
            nonlocal failed
            if row["status"] != "ok":
                failed += 1
                bar.console.print(result_line(row), markup=False, highlight=False)
            bar.update(task, advance=1, failed=failed)

        yield advance


def execute_sweep(
    plan: SweepPlan,
    folder: ResultsFolder,
    scheduler: str | None,
    workers: int | None,
    retry_failed: bool = False,
    on_row: RowHook | None = None,
) -> SweepRun:
    """Run the tasks the dataset does not hold yet; rows stream into it as they finish."""
    from fatpaths_cfg.sweep.dataset import DatasetWriter, finished_keys
    from fatpaths_cfg.sweep.engine import connect, run_tasks
    from fatpaths_cfg.sweep.results import claim_results_folder, record_files

    done = finished_keys(folder.dataset, include_failed=not retry_failed)
    pending = [task for task in plan.tasks if task.key not in done]
    already = len(plan.tasks) - len(pending)
    if not pending:
        return SweepRun(len(plan.tasks), already, 0, 0, "nothing to run")
    writer = DatasetWriter(folder.dataset, on_part=lambda part: record_files(folder, [part]))
    failed = 0
    with connect(scheduler, workers) as (client, where):
        claim_results_folder(folder, plan.name, str(plan.file))
        say(
            f"{plan.name}: {len(plan.tasks)} tasks, {already} already in {folder.dataset}, "
            f"running {len(pending)} on {where}"
        )
        with result_display(len(pending)) as show:

            def record(row: dict[str, Any]) -> None:
                nonlocal failed
                writer.add(row)
                failed += row["status"] != "ok"
                show(row)
                if on_row is not None:
                    on_row(row)

            try:
                run_tasks(client, pending, record)
            finally:
                writer.flush()
    return SweepRun(len(plan.tasks), already, len(pending), failed, where)


def write_report(plan: SweepPlan, folder: ResultsFolder) -> list[Path]:
    """summary.md and the plots, from this sweep's rows of the dataset."""
    from fatpaths_cfg.sweep.dataset import read_rows
    from fatpaths_cfg.sweep.plots import sweep_plots
    from fatpaths_cfg.sweep.results import record_files, write_if_changed
    from fatpaths_cfg.sweep.summary import summary_markdown

    keys = {task.key for task in plan.tasks}
    rows = [row for row in read_rows(folder.dataset) if row["key"] in keys]
    files = {"summary.md": summary_markdown(plan.name, rows).encode()}
    files.update(sweep_plots(plan.name, rows))
    for name, content in files.items():
        record_files(folder, [folder.directory / name])
        write_if_changed(folder.directory / name, content)
    return [folder.directory / name for name in files]


def print_best(plan: SweepPlan, folder: ResultsFolder) -> None:
    from fatpaths_cfg.sweep.dataset import read_rows
    from fatpaths_cfg.sweep.summary import best_point, point_scores, task_groups

    keys = {task.key for task in plan.tasks}
    rows = [row for row in read_rows(folder.dataset) if row["key"] in keys]
    table = Table(title=f"sweep {plan.name}: best routing point per fabric and task")
    for column in ("fabric", "task", "best point", "metric", "routes"):
        table.add_column(column)
    for group, group_rows in task_groups(rows).items():
        best = best_point(group, point_scores(group, group_rows))
        if best is not None:
            table.add_row(
                group.topology,
                f"{group.task} {group.traffic}/{group.scheme}",
                best.label(),
                f"{group.metric} {best.value:g}",
                str(best.routes_per_switch),
            )
    console.print(table)


def sweep_command(
    sweep_file: Path = typer.Argument(..., help="Sweep YAML (fabrics, routing grid, tasks)."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Results folder (default: out/sweeps/<sweep name>)."
    ),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Local worker processes (default: one per core)."
    ),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Run again the tasks the dataset holds as failed."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write into -o DIR even if it holds files fatpaths did not write (they are kept).",
    ),
    max_tasks: int | None = typer.Option(
        None,
        "--max-tasks",
        min=1,
        help="Refuse a sweep of more tasks (default: what half the available memory can plan).",
    ),
) -> None:
    """Run a sweep on Dask: results stream into a Parquet dataset; a rerun resumes."""
    from fatpaths_cfg.commands import run_or_exit
    from fatpaths_cfg.sweep.results import check_results_folder, default_results
    from fatpaths_cfg.sweep.spec import load_sweep

    run_or_exit(lambda: check_scheduler(scheduler))
    plan = run_or_exit(lambda: load_sweep(sweep_file, max_tasks))
    target = out or default_results(plan.name)
    folder = run_or_exit(lambda: check_results_folder(target, plan.name, [sweep_file], force))
    try:
        run = run_or_exit(lambda: execute_sweep(plan, folder, scheduler, workers, retry_failed))
    except KeyboardInterrupt:
        say(
            f"interrupted: finished rows are kept in {folder.dataset}; run the same command "
            "to resume"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if run.computed == 0:
        say(f"{plan.name}: all {run.total} tasks already in {folder.dataset}")
    else:
        say(
            f"{plan.name}: ran {run.computed} tasks on {run.where} ({run.failed} failed); "
            f"{run.total} rows in {folder.dataset}"
        )
    written = write_report(plan, folder)
    print_best(plan, folder)
    say(f"summary and {len(written) - 1} plots in {folder.directory}")


def _numbers(text: str, kind: type, flag: str) -> tuple[Any, ...]:
    from fatpaths_cfg.errors import UserErrors

    try:
        return tuple(kind(item) for item in text.split(",") if item.strip())
    except ValueError:
        raise UserErrors.single(
            flag, "", f"cannot read {text!r}", "comma-separated numbers"
        ) from None


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
    from fatpaths_cfg.sweep.spec import load_sweep
    from fatpaths_cfg.sweep.tune import default_sweep_yaml

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


def tune_command(
    inventory: Path = typer.Argument(..., help="Inventory YAML to tune."),
    max_routes: int | None = typer.Option(
        None, "--max-routes", min=1, help="Routes a switch can hold (FIB entries)."
    ),
    max_vlans: int | None = typer.Option(
        None, "--max-vlans", min=0, help="VLAN ids a switch can give the layers."
    ),
    max_address_bits: int | None = typer.Option(
        None, "--max-address-bits", min=1, help="Bits of the host pool for layer+switch+host."
    ),
    metric: str = typer.Option(
        "mat", "--metric", help="mat (analyze, higher is better) or fct_p99_us (simulate)."
    ),
    sweep_file: Path | None = typer.Option(
        None, "--sweep", help="Sweep YAML to run (or resume) and choose from."
    ),
    results: Path | None = typer.Option(
        None,
        "--results",
        help="Results folder to choose from; without --sweep, one that holds results is read "
        "as is, and tune's own sweep runs into one that does not.",
    ),
    layers: str = typer.Option("1,2,4,8", "--layers", help="Layer counts of tune's own sweep."),
    rho: str = typer.Option("0.5,0.7", "--rho", help="rho values of tune's own sweep."),
    algorithms: str = typer.Option("random", "--algorithms", help="Layer algorithms to try."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Tuned inventory to write (default: INVENTORY-tuned.yaml)."
    ),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Local worker processes."),
) -> None:
    """Pick the best (layers, rho, algorithm) under hardware limits; write a tuned inventory."""
    from fatpaths_cfg.commands import run_or_exit
    from fatpaths_cfg.errors import UserErrors
    from fatpaths_cfg.output import write_owned_file
    from fatpaths_cfg.sweep.results import ResultsFolder
    from fatpaths_cfg.sweep.tune import (
        GRID_FLAGS,
        METRIC_TASK,
        TUNED_INVENTORY,
        Limits,
        check_grid_flags,
        check_tuned_target,
        choose,
        tuned_inventory_text,
    )

    run_or_exit(lambda: check_scheduler(scheduler))
    if metric not in METRIC_TASK:
        error = UserErrors.single("--metric", "", f"unknown metric {metric!r}", "mat or fct_p99_us")
        run_or_exit(lambda: _raise(error))
    fabric = run_or_exit(lambda: yaml_fabric_name(inventory))
    target = out or inventory.with_name(f"{inventory.stem}-tuned.yaml")
    run_or_exit(lambda: check_tuned_target(target, inventory))
    grid = run_or_exit(
        lambda: (
            _numbers(layers, int, "--layers"),
            _numbers(rho, float, "--rho"),
            tuple(a.strip() for a in algorithms.split(",") if a.strip()),
        )
    )
    if sweep_file is None and not (results and ResultsFolder(results).dataset.is_dir()):
        flags = dict(zip(GRID_FLAGS, grid, strict=True))
        run_or_exit(lambda: check_grid_flags(inventory, flags))
    rows, source = run_or_exit(
        lambda: tune_rows(inventory, metric, sweep_file, results, grid, scheduler, workers)
    )
    limits = Limits(max_routes, max_vlans, max_address_bits)
    choice = run_or_exit(lambda: choose(rows, fabric, metric, limits, source))
    text = tuned_inventory_text(inventory, choice)
    run_or_exit(lambda: check_tuned_inventory(text, target))
    run_or_exit(lambda: write_owned_file(target, text, TUNED_INVENTORY))
    say(f"tuned {fabric} from {source}:")
    for line in choice.explanation():
        say(f"  {line}")
    say(f"wrote {target} (compiles; routing block replaced)")


def _raise(error: Exception) -> None:
    raise error


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


def add_commands(app: typer.Typer) -> None:
    app.command("sweep", short_help="Run a parameter grid on Dask.")(sweep_command)
    app.command("tune", short_help="Pick layers within hardware limits.")(tune_command)
