"""Running a sweep: the tasks the dataset does not hold yet go to Dask, rows stream into the
dataset as they finish, and summary.md and the plots are written from this sweep's rows.

Dask and pyarrow are imported inside the functions only, so the commands that do not run a
sweep do not pay for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
