"""`fatpaths simulate`: run the packet simulator on a compiled fabric and write its results."""

# No `from __future__ import annotations`: typer reads simulate's fifty annotations at every
# run, and as strings it would compile and evaluate each of them first.

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.markup import escape

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.compiled import view_of
from fatpaths_cfg.console import make_console, make_progress, make_table
from fatpaths_cfg.output import check_owned_file
from fatpaths_cfg.sim import budget
from fatpaths_cfg.sim.budget import SimWork
from fatpaths_cfg.sim.htsim import MATRIX_SIGNATURE, read_connection_matrix, write_connection_matrix
from fatpaths_cfg.sim.network import (
    NetworkLoadError,
    SimNetwork,
    load_network,
    network_from_topology,
    network_of,
)
from fatpaths_cfg.sim.plots import layers_used, run_title
from fatpaths_cfg.sim.profiles import PROFILES, resolve_profile
from fatpaths_cfg.sim.results import SimResult
from fatpaths_cfg.sim.run import (
    DROP_POLICIES,
    LAYER_POLICIES,
    LOAD_BALANCING,
    PATH_CHOICES,
    PLANE_CHOICES,
    ROUTING,
    SUBFLOW_TRANSPORTS,
    TRANSPORTS,
    SimConfig,
    simulate,
)
from fatpaths_cfg.sim.rundir import (
    Parameters,
    check_run_directory,
    default_run_directory,
    run_name,
    write_run_directory,
)
from fatpaths_cfg.sim.workloads import (
    PATTERNS,
    Workload,
    WorkloadError,
    make_workload,
    parse_bytes,
    parse_duration_ps,
    rpc_workload,
    websearch_mean_bytes,
)
from fatpaths_cfg.topologies.base import SwitchBudget, switch_budget
from fatpaths_cfg.traffic_patterns import ALIASES

# `--workload rpc`: ping-pong rounds (request of one MTU, response of --size) between each host
# and its permutation peer, rather than a traffic pattern of independent flows.
RPC = "rpc"

EXIT_USER_ERROR = 2
# Seeds are unsigned 64-bit in the engine; numpy's SeedSequence takes any of them.
MAX_SEED = 2**63 - 1
# Simulated time is picoseconds in an unsigned 64-bit clock; keep a margin for what follows.
MAX_TIME_PS = 2**62
console = make_console()
err_console = make_console(stderr=True)


def _fail(message: str) -> typer.Exit:
    err_console.print(f"error: {message}", markup=False)
    return typer.Exit(EXIT_USER_ERROR)


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


def simulate_command(
    out: Path | None = typer.Argument(
        None,
        help="Compiled output directory (from `fatpaths compile`), or an inventory YAML, "
        "compiled in memory.",
    ),
    generate: str | None = typer.Option(
        None,
        "--generate",
        help="Simulate a generated topology (e.g. slimfly) instead: layer 1 only, minimal "
        "routing, nothing compiled to disk.",
    ),
    param: list[str] = typer.Option(
        [], "-p", "--param", help="--generate: NAME=VALUE, repeatable (e.g. -p q=5)."
    ),
    workload: str = typer.Option(
        "permutation",
        "--workload",
        "-w",
        help=f"Traffic pattern ({', '.join(PATTERNS)}), 'rpc' (ping-pong rounds between "
        "permutation peers: one-MTU requests, --size responses) or htsim connection matrix file.",
    ),
    rounds: int = typer.Option(
        10, "--rounds", min=1, help="rpc: request-response rounds per client."
    ),
    offset: int | None = typer.Option(
        None, "--offset", help="off-diagonal: host h sends to h + OFFSET (default: p_max)."
    ),
    size: str | None = typer.Option(
        None,
        "--size",
        help="Flow size (e.g. 64KiB, 2MB; default 1MB), 'websearch' (pFabric CDF) or "
        "'websearch-sc20' (its 20-point discretisation, mean about 1 MB, as in the paper).",
    ),
    arrival_rate: float | None = typer.Option(
        None, "--lambda", help="Poisson arrivals: flows per second per host (default: one wave)."
    ),
    transport: str = typer.Option("ndp", "--transport", help="|".join(TRANSPORTS)),
    subflows_per_plane: int = typer.Option(
        1, "--subflows-per-plane", help="mptcp: subflows in each plane (1..32)."
    ),
    path_choice: str = typer.Option(
        "kshortest",
        "--path-choice",
        help="mptcp: subflow paths in a plane, "
        + "|".join(PATH_CHOICES)
        + " (k equal-cost minimal paths, or one FatPaths layer each).",
    ),
    subflow_transport: str = typer.Option(
        "tcp",
        "--subflow-transport",
        help="mptcp: subflows' congestion control, " + "|".join(SUBFLOW_TRANSPORTS) + ".",
    ),
    plane_choice: str = typer.Option(
        "hash",
        "--plane-choice",
        help="Multi-plane fabrics: plane of each single-path flow, "
        + "|".join(PLANE_CHOICES)
        + ".",
    ),
    lb: str = typer.Option("fatpaths", "--lb", help="|".join(LOAD_BALANCING)),
    compare: str | None = typer.Option(
        None,
        "--compare",
        help="Comma-separated --lb schemes to run on the same workload, or 'all'.",
    ),
    layer_policy: str = typer.Option(
        "adaptive",
        "--layer-policy",
        help="FatPaths layer choice: adaptive (scores, moves on congestion) | uniform (baseline).",
    ),
    profile: str | None = typer.Option(
        None, "--profile", help=f"Preset of paper parameters ({', '.join(PROFILES)})."
    ),
    duration: str | None = typer.Option(
        None,
        "--duration",
        help="Simulated time (e.g. 10ms); with --lambda also the arrival window. "
        "Default: until all flows finish.",
    ),
    until_done: bool | None = typer.Option(
        None,
        "--until-done/--stop-at-duration",
        help="With --duration: keep running after it until every flow finished.",
    ),
    warmup: str | None = typer.Option(
        None,
        "--warmup",
        help="Leave flows starting before this time (e.g. 1ms, or 'half') out of the statistics.",
    ),
    seed: int = typer.Option(
        1, "--seed", min=0, max=MAX_SEED, help="Seed of the workload and the simulation."
    ),
    randomize_mapping: bool = typer.Option(
        False, "--randomize-mapping/--no-randomize-mapping", help="Random host relabelling."
    ),
    mtu: int | None = typer.Option(
        None, "--mtu", min=1, help="Payload bytes per full packet (9000)."
    ),
    queue: int | None = typer.Option(
        None, "--queue", min=1, help="Switch queue capacity in packets."
    ),
    window: int | None = typer.Option(None, "--window", min=1, help="Initial window in packets."),
    ecn: int | None = typer.Option(None, "--ecn", min=0, help="ECN marking threshold in packets."),
    min_rto: float | None = typer.Option(
        None, "--min-rto-us", help="Minimum retransmission timeout in us (1000)."
    ),
    rto_granularity: float | None = typer.Option(
        None,
        "--rto-granularity-us",
        help="Timeout timer grid in us: timeouts fire up to this late (default: min RTO / 4).",
    ),
    ssthresh: int | None = typer.Option(
        None,
        "--ssthresh",
        min=1,
        help="TCP/DCTCP initial slow-start threshold, packets (unbounded).",
    ),
    drop: str = typer.Option(
        "tail",
        "--drop",
        help="TCP/DCTCP full-queue policy: " + "|".join(DROP_POLICIES) + " (tail).",
    ),
    red_min: int | None = typer.Option(
        None,
        "--red-min",
        min=0,
        help="--drop red: packets queued before early drops (half the queue).",
    ),
    header: int = typer.Option(
        64, "--header", min=0, help="Header bytes per data packet and trimmed header (64)."
    ),
    ack_bytes: int | None = typer.Option(
        None,
        "--ack-bytes",
        help="Bytes of an ACK, NACK or pull on the wire (the --header size).",
    ),
    pacing: bool = typer.Option(
        False, "--pacing/--no-pacing", help="TCP/DCTCP: pace each window over one RTT."
    ),
    flowlet_gap: float = typer.Option(50.0, "--flowlet-gap-us", help="Flowlet gap in us."),
    latency: float = typer.Option(1.0, "--latency-us", help="Per-link latency in us."),
    link_gbps: float | None = typer.Option(
        None, "--link-gbps", help="Override every link and host speed (Gb/s)."
    ),
    all_equal_cost: bool = typer.Option(
        False,
        "--all-equal-cost",
        help="FatPaths: spread over all equal-cost next hops in every layer.",
    ),
    compiled_baselines: bool = typer.Option(
        False,
        "--compiled-baselines",
        help="Baselines route on the compiled layer 1 instead of the full network's minimal paths.",
    ),
    results_dir: Path | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Directory of this run (default: OUT/sim/SCHEMES-TRANSPORT-WORKLOAD-SEED).",
    ),
    save_matrix: Path | None = typer.Option(
        None, "--save-matrix", help="Also write the workload as an htsim connection matrix."
    ),
    routing: str = typer.Option(
        "layers", "--routing", help="Switch-side routing: " + "|".join(ROUTING) + "."
    ),
    vcs: int | None = typer.Option(
        None,
        "--vcs",
        min=1,
        help="Hop-count virtual channels of min/inr/ugal-l (default: per topology).",
    ),
    ugal_n_i: int = typer.Option(
        4, "--ugal-n-i", min=1, help="UGAL-L: indirect candidates per packet."
    ),
    ugal_c: float = typer.Option(1.0, "--ugal-c", help="UGAL-L: weight of indirect costs."),
    ugal_threshold: float = typer.Option(
        10.0, "--ugal-threshold", help="ugal-l-threshold: minimal below this % of the buffer."
    ),
    adaptive_threshold: int = typer.Option(
        4,
        "--adaptive-threshold",
        min=0,
        help="adaptive: queue (packets) that notifies the input switch.",
    ),
    notify_delay: float = typer.Option(
        1.0, "--notify-delay-us", help="adaptive: delay of a congestion notification in us."
    ),
    host_gbps: float | None = typer.Option(
        None, "--host-gbps", help="Shape every host link to this rate (e.g. 1/p of the links)."
    ),
    lossless: bool = typer.Option(
        False, "--lossless", help="PFC per priority instead of dropping or trimming queues."
    ),
    pfc_xoff: int | None = typer.Option(
        None, "--pfc-xoff", min=1, help="PFC pause threshold per ingress priority, in packets."
    ),
    pfc_xon: int | None = typer.Option(
        None, "--pfc-xon", min=1, help="PFC resume threshold, in packets (default: half of xoff)."
    ),
    max_flows: int | None = typer.Option(
        None,
        "--max-flows",
        min=1,
        help="Refuse a workload of more flows (default: what half the available memory holds).",
    ),
    max_packets: int | None = typer.Option(
        None,
        "--max-packets",
        min=1,
        help="Refuse a workload of more data packets (default: about a CPU-day of simulation).",
    ),
    max_switches: int | None = typer.Option(
        None,
        "--max-switches",
        min=1,
        help="--generate: refuse a larger topology (default: what half the available memory "
        "holds of the simulator's switch-pair tables).",
    ),
    plot: bool = typer.Option(
        False,
        "--plot",
        help="Also write fct_cdf.png and fct_vs_size.png (matplotlib adds about 1 CPU-s).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace -o DIR and --save-matrix FILE even if fatpaths did not write them.",
    ),
) -> None:
    """Simulate flows on the compiled fabric; write flows.csv, summary.json and, with --plot,
    plots.

    Each run writes into a directory of its own: -o DIR, or one under OUT/sim named by it."""
    _check_numbers(
        {
            "--lambda": (arrival_rate, True),
            "--link-gbps": (link_gbps, True),
            "--host-gbps": (host_gbps, True),
            "--latency-us": (latency, False),
            "--flowlet-gap-us": (flowlet_gap, False),
            "--min-rto-us": (min_rto, True),
            "--rto-granularity-us": (rto_granularity, True),
            "--ugal-c": (ugal_c, False),
            "--ugal-threshold": (ugal_threshold, False),
            "--notify-delay-us": (notify_delay, False),
        }
    )
    schemes = _schemes(compare, lb)
    if transport == "mptcp":
        if compare:
            raise _fail("--compare needs a single-path transport; mptcp picks its own paths")
        # Named for where the subflows' paths come from (--path-choice), not --lb.
        schemes = ["fatpaths" if path_choice == "layers" else "ecmp"]
    if routing not in ROUTING:
        raise _fail(f"--routing {routing!r}: expected one of {', '.join(ROUTING)}")
    if transport not in TRANSPORTS:
        raise _fail(f"--transport {transport!r}: expected one of {', '.join(TRANSPORTS)}")
    if layer_policy not in LAYER_POLICIES:
        raise _fail(f"--layer-policy {layer_policy!r}: expected one of {', '.join(LAYER_POLICIES)}")
    if ack_bytes is not None and ack_bytes <= 0:
        raise _fail(f"--ack-bytes {ack_bytes}: expected a positive number of bytes")
    try:
        preset = resolve_profile(profile, transport)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    size_given = size is not None
    size = size or preset.size or "1MB"
    arrival_rate = arrival_rate if arrival_rate is not None else preset.arrival_rate
    duration = duration or preset.duration
    until_done = preset.until_done if until_done is None else until_done
    warmup = warmup or preset.warmup
    link_gbps = link_gbps or preset.link_gbps
    mtu = mtu or preset.mtu or 9000
    min_rto = min_rto or preset.min_rto_us or 1000.0
    from_file = Path(workload).is_file()
    if not from_file and workload != RPC and ALIASES.get(workload, workload) not in PATTERNS:
        raise _fail(
            f"--workload {workload}: not a traffic pattern ({', '.join(PATTERNS)}), "
            f"'{RPC}' or a connection matrix file"
        )
    if arrival_rate is not None and not duration:
        raise _fail(
            f"--lambda {arrival_rate:g}: Poisson arrivals need --duration (their arrival window)"
        )
    if not from_file and not size.startswith("websearch"):
        try:
            parse_bytes(size)
        except WorkloadError as exc:
            raise _fail(f"--size {size}: {exc}") from None
    try:
        network, compiled = _network(out, generate, param, round(latency * 1e6), seed, max_switches)
        if link_gbps:
            network = network.with_options(link_gbps=link_gbps, host_gbps=link_gbps)
        if all_equal_cost:
            network = network.with_options(all_equal_cost=True)
        if host_gbps is not None:
            network = network.with_options(host_gbps=host_gbps)
        duration_ps = _duration_flag("--duration", duration) if duration else None
        warmup_ps = _warmup_ps(warmup, duration_ps)
        if not from_file:
            work = _expected_work(
                network.n_hosts, workload, size, size_given, arrival_rate, duration, rounds, mtu
            )
            run_or_exit(lambda: work.check(max_flows, max_packets))
        if workload == RPC:
            flows = rpc_workload(
                network,
                rounds=rounds,
                request_bytes=mtu,
                response_bytes=parse_bytes(size) if size_given else mtu,
                seed=seed,
                offset=offset,
            )
        elif from_file:
            _, flows = read_connection_matrix(workload, network.n_hosts)
            packets = float(np.sum(np.ceil(flows.size / mtu))) if flows.n_flows else 0.0
            matrix = SimWork(
                flows.n_flows, packets, f"{flows.n_flows} flows in {workload}", workload
            )
            run_or_exit(lambda: matrix.check(max_flows, max_packets))
        else:
            sizes: str | int = size if size.startswith("websearch") else parse_bytes(size)
            flows = make_workload(
                network,
                workload,
                sizes,
                seed=seed,
                arrival_rate=arrival_rate,
                duration_ps=duration_ps,
                randomize_mapping=randomize_mapping,
                offset=offset,
            )
    except (NetworkLoadError, WorkloadError) as exc:
        raise _fail(str(exc)) from None
    parameters: Parameters = {
        "fabric": network.name,
        "compiled": compiled,
        "schemes": schemes,
        "transport": transport,
        "layer_policy": layer_policy,
        "profile": profile,
        "workload": str(Path(workload).resolve()) if from_file else workload,
        "size": None if from_file else size,
        "offset": offset,
        "lambda": arrival_rate,
        "duration": duration,
        "until_done": until_done,
        "warmup_us": warmup_ps / 1e6,
        "seed": seed,
        "randomize_mapping": randomize_mapping,
        "mtu": mtu,
        "queue": queue,
        "window": window,
        "ecn": ecn,
        "min_rto_us": min_rto,
        "rto_granularity_us": rto_granularity,
        "ssthresh": ssthresh,
        "drop": drop,
        "red_min": red_min,
        "header": header,
        "ack_bytes": ack_bytes,
        "pacing": pacing,
        "flowlet_gap_us": flowlet_gap,
        "latency_us": latency,
        "link_gbps": link_gbps,
        "all_equal_cost": all_equal_cost,
        "routing": routing,
        "vcs": vcs,
        "adaptive_threshold": adaptive_threshold,
        "notify_delay_us": notify_delay,
        "host_gbps": host_gbps,
        "lossless": lossless,
        "pfc_xoff": pfc_xoff,
        "pfc_xon": pfc_xon,
        "compiled_baselines": compiled_baselines,
        "rounds": rounds if workload == RPC else None,
        "plane_choice": plane_choice,
        "subflows_per_plane": subflows_per_plane if transport == "mptcp" else None,
        "path_choice": path_choice if transport == "mptcp" else None,
        "subflow_transport": subflow_transport if transport == "mptcp" else None,
    }
    label = Path(workload).stem if from_file else workload
    name = run_name(schemes, transport, label, None if from_file else size, arrival_rate, seed)
    protected = [p for p in (out, Path(workload) if from_file else None) if p is not None]
    target = _run_directory(
        _sim_root(out, network), results_dir, name, parameters, protected, force
    )
    if save_matrix:
        # Checked now, written with the results: a refused file or a bad option found below
        # leaves it as it was.
        run_or_exit(lambda: check_owned_file(save_matrix, MATRIX_SIGNATURE, force))
    try:
        switch_side = SimConfig(
            routing=routing,
            channels=vcs,
            ugal_n_i=ugal_n_i,
            ugal_c=ugal_c,
            ugal_threshold=ugal_threshold / 100,
            adaptive_threshold_packets=adaptive_threshold,
            notify_delay_us=notify_delay,
            lossless=lossless,
            pfc_xoff_packets=pfc_xoff,
            pfc_xon_packets=pfc_xon,
            plane_choice=plane_choice,
            subflows_per_plane=subflows_per_plane,
            path_choice=path_choice,
            subflow_transport=subflow_transport,
        )
        base = replace(
            switch_side,
            transport=transport,
            mtu=mtu,
            header=header,
            ack_bytes=ack_bytes,
            queue_packets=queue,
            initial_window=window,
            initial_ssthresh=ssthresh,
            ecn_threshold_packets=ecn,
            min_rto_us=min_rto,
            rto_granularity_us=rto_granularity,
            drop_policy=drop,
            red_min_packets=red_min,
            tcp_pacing=pacing,
            flowlet_gap_us=flowlet_gap,
            duration_us=duration_ps / 1e6 if duration_ps and not until_done else None,
            warmup_us=warmup_ps / 1e6,
            layer_policy=layer_policy,
            baselines_on_full_network=not compiled_baselines,
            seed=seed,
        )
    except ValueError as exc:
        raise _fail(str(exc)) from None
    results: dict[str, SimResult] = {}
    for scheme in schemes:
        try:
            results[scheme] = _run_with_progress(scheme, base.with_lb(scheme), network, flows)
        except ValueError as exc:  # inconsistent workload or parameters, found natively
            raise _fail(str(exc)) from None
    by_size = run_or_exit(
        lambda: write_run_directory(
            target, parameters, results, network.host_names, plot, protected, force
        )
    )
    if save_matrix:
        run_or_exit(lambda: write_connection_matrix(flows, network.n_hosts, save_matrix, force))
    _print_table(results)
    for scheme, result in results.items():
        for warning in result.warnings(network.host_names):
            console.print(f"warning: {scheme}: {warning}", markup=False)
        if result.deadlock is not None:
            console.print(f"{scheme}: {deadlock_line(result.deadlock)}", markup=False)
    if not by_size:
        console.print("no fct_vs_size.png: every flow has the same size")
    console.print(f"results in {target}", markup=False)


def _network(
    source: Path | None,
    generate: str | None,
    param: list[str],
    latency_ps: int,
    seed: int,
    max_switches: int | None = None,
) -> tuple[SimNetwork, str]:
    """The fabric to simulate and what it came from: a compiled directory, an inventory
    compiled in memory, or a generated topology (`--generate`)."""
    if (source is None) == (generate is None):
        raise NetworkLoadError("give a compiled directory or inventory, or --generate KIND")
    if generate is not None:
        params = _generator_params(param)
        cap = budget.switch_cap(max_switches)
        limit = SwitchBudget(cap, budget.switch_memory, f"--max-switches {cap} to try anyway")
        try:
            # The generator checks its size before it builds an edge: a Slim Fly q=199
            # (79,202 switches) aborted in the native allocator, 6.3 GB at once.
            with switch_budget(limit):
                network = network_from_topology(generate, params, seed, link_latency_ps=latency_ps)
        except (ValueError, KeyError) as exc:
            raise NetworkLoadError(f"--generate {generate}: {exc}") from None
        return network, f"generated {generate} " + " ".join(param)
    assert source is not None
    if source.is_file():
        from fatpaths_cfg import api

        compiled = run_or_exit(lambda: api.compile_fabric(source, seed))
        network = network_of(view_of(compiled), link_latency_ps=latency_ps, source=str(source))
        return network, f"inventory {source.resolve()}"
    network = run_or_exit(lambda: load_network(source, link_latency_ps=latency_ps))
    return network, str(source.resolve())


def _generator_params(param: list[str]) -> dict[str, int | float]:
    params: dict[str, int | float] = {}
    for item in param:
        key, sep, value = item.partition("=")
        try:
            params[key.strip()] = float(value) if "." in value else int(value)
        except ValueError:
            sep = ""
        if not sep:
            raise NetworkLoadError(f"--param {item!r}: expected NAME=NUMBER")
    return params


def _expected_work(
    n_hosts: int,
    pattern: str,
    size: str,
    size_given: bool,
    arrival_rate: float | None,
    duration: str | None,
    rounds: int,
    mtu: int,
) -> SimWork:
    """The flows and packets a generated workload will have, from its flags alone."""
    mean_size = websearch_mean_bytes() if size.startswith("websearch") else float(parse_bytes(size))
    if pattern == RPC:
        flows = 2.0 * n_hosts * rounds
        source = f"--rounds {rounds} x {n_hosts} hosts"
        mean_size = (mean_size if size_given else mtu + mtu) / 2
        flag = "--rounds"
    elif arrival_rate is not None and duration:
        seconds = parse_duration_ps(duration) / 1e12
        flows = arrival_rate * seconds * n_hosts
        source = f"--lambda {arrival_rate:g} x --duration {duration} x {n_hosts} hosts"
        flag = "--lambda"
    else:
        all_pairs = ALIASES.get(pattern, pattern) == "all-to-all"
        flows = float(n_hosts * (n_hosts - 1) if all_pairs else n_hosts)
        source = f"{pattern} on {n_hosts} hosts"
        flag = "--workload"
    packets = flows * max(1.0, np.ceil(mean_size / mtu))
    return SimWork(flows, packets, f"{source}, {mean_size:,.0f} bytes each", flag)


def _sim_root(source: Path | None, network: SimNetwork) -> Path:
    """Where runs go without -o: under the compiled directory, else out/sim/FABRIC."""
    if source is not None and source.is_dir():
        return source / "sim"
    return Path("out") / "sim" / network.name


def _schemes(compare: str | None, lb: str) -> list[str]:
    """The schemes to run: --compare's list ('all' for every scheme), else --lb."""
    if compare and compare.strip() == "all":
        return list(LOAD_BALANCING)
    schemes = [s.strip() for s in compare.split(",")] if compare else [lb]
    for scheme in schemes:
        if scheme not in LOAD_BALANCING:
            raise _fail(f"--lb/--compare {scheme!r}: expected one of {', '.join(LOAD_BALANCING)}")
    return schemes


def _warmup_ps(warmup: str | None, duration_ps: int | None) -> int:
    """--warmup as picoseconds: a time, or 'half' of --duration (the paper's choice)."""
    if not warmup:
        return 0
    if warmup == "half":
        if duration_ps is None:
            raise WorkloadError("--warmup half needs --duration")
        return duration_ps // 2
    return _duration_flag("--warmup", warmup, zero=True)


def _duration_flag(flag: str, text: str, zero: bool = False) -> int:
    """A time option in picoseconds: readable, finite and > 0 (>= 0 with `zero`); a 0 that
    silently meant 'no limit' hid a typo."""
    try:
        value = parse_duration_ps(text)
    except (WorkloadError, ValueError, OverflowError):
        raise WorkloadError(f"{flag} {text}: expected a time such as 500us, 10ms or 1s") from None
    if value < 0 or (value == 0 and not zero):
        raise WorkloadError(f"{flag} {text}: expected a time {'>= 0' if zero else '> 0'}")
    if value >= MAX_TIME_PS:
        raise WorkloadError(
            f"{flag} {text}: beyond the simulator's clock ({MAX_TIME_PS / 1e12:,.0f} s)"
        )
    return value


def _run_directory(
    sim_root: Path,
    explicit: Path | None,
    name: str,
    parameters: Parameters,
    protected: list[Path],
    force: bool,
) -> Path:
    """-o DIR as given, else a directory of its own under OUT/sim (see rundir)."""
    if explicit is None:
        return default_run_directory(sim_root, name, parameters)
    run_or_exit(lambda: check_run_directory(explicit, protected, force))
    return explicit


def _check_numbers(values: dict[str, tuple[float | None, bool]]) -> None:
    """Each float option (given) must be finite, and those marked True positive: NaN passes
    every range check unnoticed, and infinity reaches the workload generator or the engine."""
    for flag, (value, positive) in values.items():
        if value is None:
            continue
        if not math.isfinite(value):
            raise _fail(f"{flag} {value}: expected a finite number")
        if value < 0 or (positive and value == 0):
            raise _fail(f"{flag} {value:g}: expected a number {'> 0' if positive else '>= 0'}")


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
    if any(summary["flows_unfinished"] for summary in summaries.values()):
        console.print("≥: unfinished flows counted at their elapsed time (lower bounds)")
    warm = int(next(iter(summaries.values()))["flows_warmup"])  # type: ignore[call-overload]
    if warm:
        console.print(f"{warm} warm-up flows left out of the statistics")


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
    app.command("simulate", short_help="Simulate flows on a compiled fabric.")(simulate_command)


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
