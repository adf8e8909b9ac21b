"""`fatpaths analyze OUT`: path diversity, FatPaths' path metrics (c_l, interference, TNL,
collisions) and maximum achievable throughput, as JSON, a table, result lines and plots."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import typer

from fatpaths_cfg.analysis.path_metrics import MetricsSettings
from fatpaths_cfg.analysis.path_metrics_report import metric_lines, metrics_plot
from fatpaths_cfg.analysis.run import ResultsPlace, analyze, plot
from fatpaths_cfg.analysis.throughput import SCHEMES
from fatpaths_cfg.analysis.traffic import (
    ALIASES,
    PATTERNS,
    PatternError,
)
from fatpaths_cfg.cli.common import refuse, run_or_exit
from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.support.console import make_console, make_progress, make_table
from fatpaths_cfg.support.output import OutputTree
from fatpaths_cfg.support.scheme_names import current_name

if TYPE_CHECKING:
    from fatpaths_cfg.analysis.failure_report import FailureStudy
    from fatpaths_cfg.analysis.plane_set import PlaneSet

console = make_console()


def _place(out: Path, results: Path | None, folder: str, force: bool) -> ResultsPlace:
    return ResultsPlace(results or out / folder, out, force)


OPT_OUT = typer.Argument(..., help="Compiled output directory.")
OPT_TRAFFIC = typer.Option(
    "uniform,permutation,off-diagonal",
    "--traffic",
    help=f"Comma-separated patterns: {', '.join(PATTERNS)}.",
)
OPT_SCHEMES = typer.Option(
    ",".join(SCHEMES),
    "--schemes",
    help=f"Comma-separated routing schemes: {', '.join(SCHEMES)} (single-path's old name, "
    "minimal, is read as it).",
)
OPT_OFFSET = typer.Option(
    None,
    "--offset",
    help="off-diagonal: host h sends to h + OFFSET (default: p_max); skewed-off-diagonal: a "
    "multiple of p (default: the farthest, see docs).",
)
OPT_PAIRS = typer.Option(
    500, "--pairs", min=1, help="Switch pairs sampled for path diversity and c_l."
)
OPT_QUADRUPLES = typer.Option(
    100,
    "--quadruples",
    min=0,
    help="Switch quadruples (a, b, c, d) sampled for path interference.",
)
OPT_EXACT_SAMPLES = typer.Option(
    20,
    "--exact-samples",
    min=0,
    help="Samples on which c_l and interference over all paths are also solved exactly.",
)
OPT_PATH_CAP = typer.Option(
    20_000,
    "--path-cap",
    min=1,
    help="Skip an exact sample with more candidate paths than this.",
)
OPT_COLLISION_PERMUTATIONS = typer.Option(
    20,
    "--collision-permutations",
    min=0,
    help="Random host permutations for the collision histogram.",
)
OPT_SEED = typer.Option(
    1,
    "--seed",
    min=0,
    max=2**63 - 1,
    help="Seed of every random choice (sampled pairs, traffic, failures, permutations).",
)
OPT_RESULTS = typer.Option(
    None,
    "--results",
    help="Where to write analysis.json and analysis.png (default OUT/analysis; "
    "OUT/failures, OUT/planes, OUT/convergence for those).",
)
OPT_CONVERGENCE = typer.Option(
    False,
    "--convergence",
    help="Instead: adaptive-routing convergence of a compiled two-level Clos, model and "
    "simulation against r for p=1 and p=2 (writes OUT/convergence).",
)
OPT_PERMUTATIONS = typer.Option(
    200, "--permutations", help="Random permutations per point (--convergence)."
)
OPT_MAX_ITERATIONS = typer.Option(
    20_000, "--max-iterations", help="Iteration cap per permutation (--convergence)."
)
OPT_PLANES = typer.Option(
    False,
    "--planes",
    help="Instead: parallel dataplanes (P-Net), MAT per scheme and K for permutation and "
    "all-to-all, and hop count under random link failures (writes OUT/planes).",
)
OPT_PLANE_SCHEMES = typer.Option(
    "mcf,ecmp,ksp,ksp-total,fatpaths",
    "--plane-schemes",
    help="Comma-separated (--planes): mcf, ecmp, ksp, ksp-total, fatpaths.",
)
OPT_K_VALUES = typer.Option(
    "1,2,4,8", "--k", help="Comma-separated K values of ksp and ksp-total (--planes)."
)
OPT_FAILURE_SHARES = typer.Option(
    "0,0.1,0.2,0.3,0.4,0.5",
    "--failure-shares",
    help="Comma-separated shares of links failed (--planes).",
)
OPT_TRIALS = typer.Option(5, "--trials", min=1, help="Failure draws per share (--planes).")
OPT_FAILURES = typer.Option(
    False,
    "--failures",
    help="Instead: failure what-if of the static routes: every single cable, switch (and "
    "plane) failed, then k = 2..K random failures; host pairs keeping >= 1 and >= 2 "
    "working layers (writes OUT/failures).",
)
OPT_K_MAX = typer.Option(
    3, "--k-max", min=1, help="Random failures up to k = K at once (--failures)."
)
OPT_SAMPLES = typer.Option(100, "--samples", min=1, help="Random draws per k (--failures).")
OPT_RANDOM_KIND = typer.Option(
    "cables",
    "--random",
    help="What random failures fail (--failures): cables, switches or any.",
)
OPT_WORST = typer.Option(10, "--worst", min=0, help="Worst single failures named (--failures).")
OPT_FORCE = typer.Option(
    False, "--force", help="Replace --results DIR even if fatpaths did not write it."
)


def analyze_command(
    out: Path = OPT_OUT,
    traffic: str = OPT_TRAFFIC,
    schemes: str = OPT_SCHEMES,
    offset: int | None = OPT_OFFSET,
    pairs: int = OPT_PAIRS,
    quadruples: int = OPT_QUADRUPLES,
    exact_samples: int = OPT_EXACT_SAMPLES,
    path_cap: int = OPT_PATH_CAP,
    collision_permutations: int = OPT_COLLISION_PERMUTATIONS,
    seed: int = OPT_SEED,
    results: Path | None = OPT_RESULTS,
    convergence: bool = OPT_CONVERGENCE,
    permutations: int = OPT_PERMUTATIONS,
    max_iterations: int = OPT_MAX_ITERATIONS,
    planes: bool = OPT_PLANES,
    plane_schemes: str = OPT_PLANE_SCHEMES,
    k_values: str = OPT_K_VALUES,
    failure_shares: str = OPT_FAILURE_SHARES,
    trials: int = OPT_TRIALS,
    failures: bool = OPT_FAILURES,
    k_max: int = OPT_K_MAX,
    samples: int = OPT_SAMPLES,
    random_kind: str = OPT_RANDOM_KIND,
    worst: int = OPT_WORST,
    force: bool = OPT_FORCE,
) -> None:
    """Path diversity, c_l, interference, TNL, collisions and maximum achievable throughput."""

    if failures + planes + convergence > 1:
        refuse("--failures/--planes/--convergence", "separate analyses: give one")
    compiled = run_or_exit(lambda: load_compiled(out))
    if failures:
        from fatpaths_cfg.analysis.failure_report import FailureStudy

        study = FailureStudy(k_max, samples, seed, random_kind, worst)
        failures_command(compiled, _place(out, results, "failures", force), study)
        return
    if planes:
        planes_command(
            compiled,
            _place(out, results, "planes", force),
            plane_schemes,
            k_values,
            failure_shares,
            trials,
            seed,
        )
        return
    if convergence:
        convergence_command(
            compiled,
            _place(out, results, "convergence", force),
            permutations,
            seed,
            max_iterations,
        )
        return
    pattern_list, scheme_list = _names(traffic, schemes)
    place = _place(out, results, "analysis", force)
    target = place.target
    run_or_exit(place.check)
    settings = MetricsSettings(
        pairs=pairs,
        quadruples=quadruples,
        exact_samples=exact_samples,
        path_cap=path_cap,
        permutations=collision_permutations,
        seed=seed,
    )
    try:
        with make_progress(console=console) as progress:
            result = analyze(
                compiled, pattern_list, scheme_list, pairs, seed, progress, offset, settings
            )
    except PatternError as exc:  # e.g. an offset that maps every host onto itself
        refuse("--traffic", str(exc))
    tree = OutputTree("analyze")
    tree.add_json("analysis.json", result)
    tree.add_bytes("analysis.png", plot(result))
    tree.add_bytes("path_metrics.png", metrics_plot(result["path_metrics"], result["fabric"]))
    run_or_exit(lambda: place.commit(tree))
    _print_analysis(result, scheme_list, target)


def _names(traffic: str, schemes: str) -> tuple[list[str], list[str]]:
    """--traffic and --schemes as lists of known names; an unknown one exits 2."""
    pattern_list = [ALIASES.get(p.strip(), p.strip()) for p in traffic.split(",") if p.strip()]
    scheme_list = [current_name(s.strip()) for s in schemes.split(",") if s.strip()]
    for value, known, flag in (
        (pattern_list, PATTERNS, "--traffic"),
        (scheme_list, SCHEMES, "--schemes"),
    ):
        _known(value, known, flag)
    return pattern_list, scheme_list


def _known(values: list[str], known: tuple[str, ...], flag: str) -> None:
    unknown = [v for v in values if v not in known]
    if unknown:
        refuse(flag, f"unknown {', '.join(unknown)} (one of {', '.join(known)})")


def _print_analysis(result: dict[str, Any], scheme_list: list[str], target: Path) -> None:
    """The MAT table, the diversity and path-metric lines, and where the files went."""
    table = make_table(f"max achievable throughput, share of line rate: {result['fabric']}")
    table.add_column("traffic")
    for scheme in scheme_list:
        table.add_column(scheme, justify="right")
    for pattern, row in result["max_achievable_throughput"].items():
        table.add_row(pattern, *(f"{row[s]:.3f}" for s in scheme_list))
    console.print(table)
    div = result["diversity"]
    console.print(
        f"path diversity over {result['pairs_sampled']} pairs: "
        f"{div['share_single_shortest_path']:.0%} have one edge-disjoint shortest path; "
        f"layers give {div['mean_distinct_layer_paths']:.2f} distinct and "
        f"{div['mean_disjoint_layer_paths']:.2f} edge-disjoint paths on average"
    )
    for line in metric_lines(result["path_metrics"]):
        console.print(line, markup=False, highlight=False)
    console.print(
        f"wrote {target / 'analysis.json'}, {target / 'analysis.png'} and "
        f"{target / 'path_metrics.png'}",
        markup=False,
    )


def convergence_command(
    compiled: LoadedCompiled, place: ResultsPlace, permutations: int, seed: int, max_iterations: int
) -> None:
    from fatpaths_cfg.analysis.convergence_report import (
        clos_shape_of,
        convergence_plot,
        convergence_sweep,
        point_json,
        point_line,
    )

    fabric_json = str(compiled.directory / "fabric.json")
    n, r, m = run_or_exit(lambda: clos_shape_of(compiled.fabric, fabric_json))
    target = place.target
    run_or_exit(place.check)
    points = convergence_sweep(
        n, r, m, permutations, seed, max_iterations, lambda pt: print(point_line(pt), flush=True)
    )
    tree = OutputTree("analyze")
    tree.add_json(
        "convergence.json",
        {
            "fabric": compiled.fabric.name,
            "n": n,
            "r": r,
            "m": m,
            "seed": seed,
            "max_iterations": max_iterations,
            "points": [point_json(pt) for pt in points],
        },
    )
    tree.add_bytes("convergence.png", convergence_plot(points, compiled.fabric.name))
    run_or_exit(lambda: place.commit(tree))
    if m < n:
        print(f"warning: m={m} < n={n}: full-rate flows (p=1) cannot be routed without a bad link")
    print(f"wrote {target / 'convergence.json'} and {target / 'convergence.png'}")


def _numbers(text: str, flag: str, kind: type[int] | type[float]) -> list[Any]:
    try:
        return [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        refuse(flag, f"not a comma-separated list of numbers: {text}")


def planes_command(
    compiled: LoadedCompiled,
    place: ResultsPlace,
    schemes: str,
    k_values: str,
    failure_shares: str,
    trials: int,
    seed: int,
) -> None:
    from fatpaths_cfg.analysis.plane_report import (
        PLANE_PATTERNS,
        PlaneStudy,
        planes_plot,
        study_planes,
    )
    from fatpaths_cfg.analysis.plane_set import plane_next_hops
    from fatpaths_cfg.analysis.plane_throughput import PLANE_SCHEMES

    scheme_list = [s.strip() for s in schemes.split(",") if s.strip()]
    _known(scheme_list, tuple(PLANE_SCHEMES), "--plane-schemes")
    ks = _numbers(k_values, "--k", int)
    shares = _numbers(failure_shares, "--failure-shares", float)
    if any(k < 1 for k in ks) or any(not 0 <= f <= 1 for f in shares):
        refuse("--k/--failure-shares", "--k values must be >= 1 and --failure-shares in [0, 1]")
    plane_set, members = run_or_exit(lambda: _plane_set(compiled))
    target = place.target
    run_or_exit(place.check)
    study = PlaneStudy(PLANE_PATTERNS, tuple(scheme_list), tuple(ks), tuple(shares), trials, seed)
    result = study_planes(
        plane_set,
        study,
        plane_next_hops(compiled.next_hop, members),
        lambda line: console.print(line, markup=False, highlight=False),
    )
    result.pop("cpu_seconds")  # same inventory and seed give byte-identical files
    tree = OutputTree("analyze")
    tree.add_json("planes.json", result)
    title = f"{plane_set.name}: {plane_set.planes} plane(s), {plane_set.hosts} hosts, seed {seed}"
    tree.add_bytes("planes.png", planes_plot([result], title))
    run_or_exit(lambda: place.commit(tree))
    for point in result["hops_under_failures"]:
        console.print(
            f"{point['share']:.0%} links failed: mean hop count "
            f"{point['mean_hops']:.3f}, unreachable pairs {point['unreachable']:.2%}"
        )
    console.print(f"wrote {target / 'planes.json'} and {target / 'planes.png'}", markup=False)


def _plane_set(compiled: LoadedCompiled) -> tuple[PlaneSet, list[np.ndarray]]:
    """The fabric as planes, or a user error naming what the plane analysis cannot take (a
    plane mixing link speeds, a host without an uplink per plane)."""
    from fatpaths_cfg.analysis.plane_set import plane_set_from_fabric
    from fatpaths_cfg.errors import UserErrors

    try:
        return plane_set_from_fabric(compiled.fabric)
    except ValueError as exc:
        raise UserErrors.single(
            str(compiled.directory / "fabric.json"),
            "",
            str(exc),
            "--planes analyses fabrics whose planes each run one link speed",
        ) from None


def failures_command(compiled: LoadedCompiled, place: ResultsPlace, study: FailureStudy) -> None:
    from fatpaths_cfg.analysis.failure_report import (
        backup_lines,
        failures_plot,
        study_failures,
        summary_lines,
        worst_lines,
    )
    from fatpaths_cfg.analysis.failures import RANDOM_KINDS

    if study.kind not in RANDOM_KINDS:
        refuse("--random", f"unknown {study.kind} (one of {', '.join(RANDOM_KINDS)})")
    fabric = compiled.fabric
    pool = {"cables": len(fabric.links), "switches": fabric.nr}.get(
        study.kind, len(fabric.links) + fabric.nr
    )
    if study.k_max > max(pool, 1):  # k = 1 is every single failure, not a draw
        refuse(f"--k-max {study.k_max}", f"{fabric.name} has {pool} {study.kind} to fail")
    target = place.target
    run_or_exit(place.check)
    with make_progress(console=make_console(stderr=True)) as progress:
        tasks: dict[str, Any] = {}

        def advance(task: str, done: int, total: int) -> None:
            if task not in tasks:
                tasks[task] = progress.add_task(task, total=total)
            progress.update(tasks[task], completed=done)

        result = study_failures(compiled, study, advance)
    tree = OutputTree("analyze")
    tree.add_json_records("failures.json", result)
    tree.add_bytes("failures.png", failures_plot(result))
    run_or_exit(lambda: place.commit(tree))
    for line in [*summary_lines(result), *worst_lines(result), *backup_lines(result)]:
        console.print(line, markup=False, highlight=False)
    console.print(f"wrote {target / 'failures.json'} and {target / 'failures.png'}", markup=False)


def add_commands(app: typer.Typer) -> None:
    app.command("analyze", short_help="Measure path diversity and throughput.")(analyze_command)
