"""`fatpaths sweep SWEEP.yaml`: a parameter grid on Dask (the run itself: sweep.run).

Dask and pyarrow are imported inside the command only, so `fatpaths --help` and the other
commands do not pay for them.
"""

from __future__ import annotations

from pathlib import Path

import typer

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.sweep.run import check_scheduler, execute_sweep, print_best, say, write_report

# What a shell reports for a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130

SCHEDULER_HELP = "Address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a "
SCHEDULER_HELP += "local cluster sized to this machine)."


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


def add_commands(app: typer.Typer) -> None:
    app.command("sweep", short_help="Run a parameter grid on Dask.")(sweep_command)
