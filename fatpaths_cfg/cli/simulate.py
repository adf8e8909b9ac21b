"""`fatpaths simulate`: run the packet simulator on a compiled fabric and write its results.

The command's options are generated from `fatpaths_cfg.sim.options.SimOptions`, the one model
of a simulation's settings that sweeps and scripts use too; the run is built by
`fatpaths_cfg.sim.prepare`.
"""

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

import typer
from rich.markup import escape

from fatpaths_cfg.cli.common import PanelledCommand, run_or_exit
from fatpaths_cfg.sim.network import SimNetwork
from fatpaths_cfg.sim.options import GROUPS, SimOptions, default_of, plain_error, setting_fields
from fatpaths_cfg.sim.plots import layers_used, run_title
from fatpaths_cfg.sim.prepare import PreparedRun, load_sim_network, prepare_run, sim_root
from fatpaths_cfg.sim.results import SimResult
from fatpaths_cfg.sim.run import SimConfig, simulate
from fatpaths_cfg.sim.rundir import (
    check_run_directory,
    default_run_directory,
    run_name,
    write_run_directory,
)
from fatpaths_cfg.sim.workloads import Workload
from fatpaths_cfg.support.console import make_console, make_progress, make_table
from fatpaths_cfg.support.output import check_owned_file

if TYPE_CHECKING:
    from fatpaths_cfg.compiled import CompiledFabric

console = make_console()
err_console = make_console(stderr=True)


def _run_with_progress(
    label: str, run: SimConfig, network: SimNetwork, workload: Workload
) -> SimResult:
    if not err_console.is_terminal:
        # The display would draw nothing (see make_progress): neither built nor imported.
        return simulate(network, workload, run)
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    with make_progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        TextColumn("{task.fields[simulated]}"),
        TimeElapsedColumn(),
        console=err_console,
    ) as bar:
        task = bar.add_task(label, total=None, simulated="0 µs")

        def progress(now_ps: int, end_ps: int | None) -> None:
            bar.update(
                task,
                completed=now_ps,
                total=end_ps,
                simulated=f"{now_ps / 1e6:,.0f} µs simulated",
            )

        return simulate(network, workload, run, progress)


def simulate_command(**settings: Any) -> None:
    """Simulate flows on the compiled fabric; write flows.csv, summary.json and, with --plot,
    plots.

    Each run writes into a directory of its own: -o DIR, or one under OUT/sim named by it."""
    prepared = run_or_exit(lambda: prepare_run(SimOptions(**settings), _fabric))
    run = prepared.options
    from_file = run.from_file
    label = Path(run.workload).stem if from_file else run.workload
    size = None if from_file else run.size
    name = run_name(prepared.schemes, run.transport, label, size, run.arrival_rate, run.seed)
    protected = [p for p in (run.out, Path(run.workload) if from_file else None) if p is not None]
    target = _run_directory(
        sim_root(run.out, prepared.network), run.results_dir, name, prepared, protected
    )
    if run.save_matrix:
        # htsim's format loads only for the runs that write it.
        from fatpaths_cfg.sim.htsim import MATRIX_SIGNATURE, write_connection_matrix

        # Checked now, written with the results: a refused file or a bad option found below
        # leaves it as it was.
        matrix = run.save_matrix
        run_or_exit(lambda: check_owned_file(matrix, MATRIX_SIGNATURE, run.force))
    results = {scheme: _run_scheme(prepared, scheme) for scheme in prepared.schemes}
    by_size = run_or_exit(
        lambda: write_run_directory(
            target,
            prepared.parameters,
            results,
            prepared.network.host_names,
            run.plot,
            protected,
            run.force,
        )
    )
    if run.save_matrix:
        n_hosts, matrix = prepared.network.n_hosts, run.save_matrix
        run_or_exit(lambda: write_connection_matrix(prepared.flows, n_hosts, matrix, run.force))
    _print_results(results, prepared.network)
    if not by_size:
        console.print("no fct_vs_size.png: every flow has the same size")
    console.print(f"results in {target}", markup=False)


def _fabric(options: SimOptions) -> tuple[SimNetwork, str]:
    """The fabric OUT or --generate names; an inventory is compiled in memory."""
    return load_sim_network(options, _compile_inventory)


def _compile_inventory(inventory: Path, seed: int, max_switches: int | None) -> "CompiledFabric":
    # Imported only for an inventory: the compiler's modules (pydantic's inventory schema
    # among them) are most of a small simulation's start-up.
    from fatpaths_cfg import api

    return api.compile_fabric(inventory, seed, max_switches=max_switches)


def _run_scheme(prepared: PreparedRun, scheme: str) -> SimResult:
    def run() -> SimResult:
        try:
            config = prepared.config.with_lb(scheme)
            return _run_with_progress(scheme, config, prepared.network, prepared.flows)
        except ValueError as exc:  # inconsistent workload or parameters, found natively
            raise plain_error(str(exc)) from None

    return run_or_exit(run)


def _print_results(results: dict[str, SimResult], network: SimNetwork) -> None:
    _print_table(results)
    for scheme, result in results.items():
        for warning in result.warnings(network.host_names):
            console.print(f"warning: {scheme}: {warning}", markup=False)
        if result.deadlock is not None:
            console.print(f"{scheme}: {deadlock_line(result.deadlock)}", markup=False)


def _run_directory(
    root: Path, explicit: Path | None, name: str, prepared: PreparedRun, protected: list[Path]
) -> Path:
    """-o DIR as given, else a directory of its own under OUT/sim (see rundir)."""
    if explicit is None:
        return default_run_directory(root, name, prepared.parameters)
    force = prepared.options.force
    run_or_exit(lambda: check_run_directory(explicit, protected, force))
    return explicit


def _typer_parameter(item: Any, annotation: Any) -> inspect.Parameter:
    """The typer argument or option of one setting: its flags, help and bounds, listed under
    its group."""
    meta = item.metadata
    if not meta["flags"]:
        info = typer.Argument(default_of(item), help=meta["help"])
    else:
        info = typer.Option(
            default_of(item),
            *meta["flags"],
            help=meta["help"],
            min=meta["min"],
            max=meta["max"],
            metavar=meta["metavar"],
            rich_help_panel=meta["group"],
        )
    return inspect.Parameter(
        item.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation
    )


def _with_settings_as_options(command: Any) -> Any:
    """`command(**settings)` with one typer parameter per SimOptions field, group by group."""
    hints = get_type_hints(SimOptions)
    items = sorted(setting_fields(), key=lambda item: GROUPS.index(item.metadata["group"]))
    parameters = [_typer_parameter(item, hints[item.name]) for item in items]
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)
    command.__annotations__ = {item.name: hints[item.name] for item in items} | {"return": None}
    return command


def _print_table(results: dict[str, SimResult]) -> None:
    first = next(iter(results.values()))
    summaries = {scheme: result.summary() for scheme, result in results.items()}
    table = make_table(escape(f"flow completion time (FCT): {run_title(first)}"))
    columns = (
        "scheme",
        "layers",
        "flows done",
        "unfinished",
        "mean FCT µs",
        "median FCT µs",
        "p99 FCT µs",
        "median Gb/s",
        "rtx (spurious)",
        "events",
        "CPU s",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("scheme", "layers") else "right")
    for scheme, result in results.items():
        s = summaries[scheme]
        fct, rate = s["fct_with_unfinished"], s["throughput_gbps"]
        assert isinstance(fct, dict) and isinstance(rate, dict)
        # Unfinished flows count at their elapsed time, so the figures are lower bounds.
        bound = "≥" if fct["lower_bound"] else ""
        table.add_row(
            scheme,
            layers_used(result),
            f"{s['flows_finished']}/{s['flows_measured']}",
            f"{s['flows_unfinished']}",
            bound + _figure(fct["mean_us"]),
            bound + _figure(fct["median_us"]),
            bound + _figure(fct["p99_us"]),
            _figure(rate["median"], 2),
            f"{s['retransmissions']:,} ({s['spurious_retransmissions']:,})",
            f"{s['events']:,}",
            f"{result.cpu_seconds:.2f}",
        )
    console.print(table)
    console.print(_throughput_table(summaries))
    for scheme, summary in summaries.items():
        rounds = summary.get("round_time")
        if isinstance(rounds, dict) and rounds["count"]:
            console.print(
                f"{scheme}: {rounds['count']} rpc rounds, completion time median "
                f"{_figure(rounds['median_us'], 2)} µs, p99 {_figure(rounds['p99_us'], 2)} µs, "
                f"max {_figure(rounds['max_us'], 2)} µs",
                markup=False,
            )
        _print_loop(console, scheme, summary)
    if any(summary["flows_unfinished"] for summary in summaries.values()):
        console.print("≥: unfinished flows counted at their elapsed time (lower bounds)")
    warm = int(next(iter(summaries.values()))["flows_warmup"])  # type: ignore[call-overload]
    if warm:
        console.print(f"{warm} warm-up flows left out of the statistics")


def _print_loop(console: Any, scheme: str, summary: dict[str, object]) -> None:
    """An application loop's line: its completion time and its iterations' times."""
    times, total = summary.get("iteration_time"), summary.get("completion_us")
    if not isinstance(times, dict):
        return
    done = f"{summary['iterations_finished']}/{summary['iterations']} iterations"
    completion = _figure(total) if isinstance(total, float) else "unfinished"
    console.print(
        f"{scheme}: {done}, completion time {completion} µs; per iteration median "
        f"{_figure(times['median_us'], 2)} µs, max {_figure(times['max_us'], 2)} µs",
        markup=False,
    )


def _throughput_table(summaries: dict[str, dict[str, object]]) -> Any:
    """Throughput per flow by flow size (mean, median, 1% tail; the FatPaths paper's Figure 2)
    and latency (the FCT of one-packet flows), one row per scheme and size bucket."""
    table = make_table("throughput per flow by size (Gb/s) and latency (one-packet FCT)")
    for column in ("scheme", "flow size", "flows", "mean", "median", "1% tail"):
        table.add_column(column, justify="left" if column in ("scheme", "flow size") else "right")
    for scheme, s in summaries.items():
        buckets = s["throughput_by_size_gbps"]
        assert isinstance(buckets, dict)
        for bucket, figures in buckets.items():
            table.add_row(
                scheme,
                bucket,
                f"{figures['count']:,}",
                _figure(figures["mean"], 2),
                _figure(figures["median"], 2),
                _figure(figures["p1"], 2),
            )
        latency = s["latency"]
        assert isinstance(latency, dict)
        table.add_row(
            scheme,
            f"latency µs (<= {latency['mtu']} B)",
            f"{latency['count']:,}",
            _figure(latency["mean_us"], 1),
            _figure(latency["median_us"], 1),
            "p99 " + _figure(latency["p99_us"], 1),
        )
    return table


def _figure(value: object, decimals: int = 1) -> str:
    """A table cell: the number, or '-' where no flow finished."""
    return f"{value:,.{decimals}f}" if isinstance(value, float) else "-"


def add_commands(app: typer.Typer) -> None:
    app.command("simulate", cls=PanelledCommand, short_help="Simulate flows on a compiled fabric.")(
        _with_settings_as_options(simulate_command)
    )


def deadlock_line(deadlock: dict[str, object]) -> str:
    """'deadlock at 570.0 us: paused cycle a -> b -> c -> a (priority 0)'."""
    cycle = deadlock["cycle"]
    assert isinstance(cycle, list)
    names = [str(link["from"]) for link in cycle] + [str(cycle[0]["from"])]
    priorities = sorted({int(link["priority"]) for link in cycle})
    return (
        f"deadlock at {deadlock['at_us']} us: paused cycle {' -> '.join(names)} "
        f"(priority {', '.join(map(str, priorities))})"
    )
