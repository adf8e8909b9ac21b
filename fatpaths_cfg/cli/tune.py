"""`fatpaths tune INVENTORY`: the best (layers, rho, algorithm) of a sweep under hardware limits.

Dask and pyarrow are imported inside the command only, so `fatpaths --help` and the other
commands do not pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.cli.sweep import SCHEDULER_HELP


def _numbers(text: str, kind: type, flag: str) -> tuple[Any, ...]:
    from fatpaths_cfg.errors import UserErrors

    try:
        return tuple(kind(item) for item in text.split(",") if item.strip())
    except ValueError:
        raise UserErrors.single(
            flag, "", f"cannot read {text!r}", "comma-separated numbers"
        ) from None


OPT_INVENTORY = typer.Argument(..., help="Inventory YAML to tune.")
OPT_MAX_ROUTES = typer.Option(
    None, "--max-routes", min=1, help="Routes a switch can hold (FIB entries)."
)
OPT_MAX_VLANS = typer.Option(
    None, "--max-vlans", min=0, help="VLAN ids a switch can give the layers."
)
OPT_MAX_ADDRESS_BITS = typer.Option(
    None, "--max-address-bits", min=1, help="Bits of the host pool for layer+switch+host."
)
OPT_METRIC = typer.Option(
    "mat", "--metric", help="mat (analyze, higher is better) or fct_p99_us (simulate)."
)
OPT_SWEEP_FILE = typer.Option(
    None, "--sweep", help="Sweep YAML to run (or resume) and choose from."
)
OPT_RESULTS = typer.Option(
    None,
    "--results",
    help="Results folder to choose from; without --sweep, one that holds results is read "
    "as is, and tune's own sweep runs into one that does not.",
)
OPT_LAYERS = typer.Option("1,2,4,8", "--layers", help="Layer counts of tune's own sweep.")
OPT_RHO = typer.Option("0.5,0.7", "--rho", help="rho values of tune's own sweep.")
OPT_ALGORITHMS = typer.Option("random", "--algorithms", help="Layer algorithms to try.")
OPT_OUT = typer.Option(
    None, "-o", "--out", help="Tuned inventory to write (default: INVENTORY-tuned.yaml)."
)
OPT_SCHEDULER = typer.Option(None, "--scheduler", help=SCHEDULER_HELP)
OPT_WORKERS = typer.Option(None, "--workers", min=1, help="Local worker processes.")


def tune_command(
    inventory: Path = OPT_INVENTORY,
    max_routes: int | None = OPT_MAX_ROUTES,
    max_vlans: int | None = OPT_MAX_VLANS,
    max_address_bits: int | None = OPT_MAX_ADDRESS_BITS,
    metric: str = OPT_METRIC,
    sweep_file: Path | None = OPT_SWEEP_FILE,
    results: Path | None = OPT_RESULTS,
    layers: str = OPT_LAYERS,
    rho: str = OPT_RHO,
    algorithms: str = OPT_ALGORITHMS,
    out: Path | None = OPT_OUT,
    scheduler: str | None = OPT_SCHEDULER,
    workers: int | None = OPT_WORKERS,
) -> None:
    """Pick the best (layers, rho, algorithm) under hardware limits; write a tuned inventory."""
    from fatpaths_cfg.errors import UserErrors
    from fatpaths_cfg.support.output import write_owned_file
    from fatpaths_cfg.sweep.results import ResultsFolder
    from fatpaths_cfg.sweep.run import check_scheduler, say
    from fatpaths_cfg.sweep.tune import (
        GRID_FLAGS,
        METRIC_TASK,
        TUNED_INVENTORY,
        Limits,
        check_grid_flags,
        check_tuned_inventory,
        check_tuned_target,
        choose,
        tune_rows,
        tuned_inventory_text,
        yaml_fabric_name,
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


def add_commands(app: typer.Typer) -> None:
    app.command("tune", short_help="Pick layers within hardware limits.")(tune_command)
