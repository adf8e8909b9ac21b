"""From settings to a run: the network to simulate, its workload, the engine's configuration
and the run's record, the same for `fatpaths simulate`, a sweep's simulate task and a script.

    run = prepare_run(SimOptions(workload="uniform", queue=16), network, "my fabric")
    results = {scheme: simulate(run.network, run.flows, run.config.with_lb(scheme))
               for scheme in run.schemes}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg.sim import budget
from fatpaths_cfg.sim.budget import SimWork
from fatpaths_cfg.sim.loops import application_loop
from fatpaths_cfg.sim.network import (
    NetworkLoadError,
    SimNetwork,
    load_network,
    network_from_topology,
    network_of,
)
from fatpaths_cfg.sim.options import RPC, SimOptions, plain_error, record, resolved, sim_config
from fatpaths_cfg.sim.run import SimConfig
from fatpaths_cfg.sim.rundir import Parameters
from fatpaths_cfg.sim.workloads import (
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

if TYPE_CHECKING:
    from fatpaths_cfg.compiled import CompiledFabric

# Simulated time is picoseconds in an unsigned 64-bit clock; keep a margin for what follows.
MAX_TIME_PS = 2**62


@dataclass(frozen=True)
class PreparedRun:
    """A run ready to simulate: each scheme runs `config.with_lb(scheme)` on the same flows."""

    options: SimOptions
    schemes: list[str]
    network: SimNetwork
    flows: Workload
    config: SimConfig
    parameters: Parameters


def latency_ps(options: SimOptions) -> int:
    return round(options.latency_us * 1e6)


NetworkSource = Callable[[SimOptions], tuple[SimNetwork, str]]


def prepare_run(
    options: SimOptions, source: NetworkSource, check_budget: bool = True
) -> PreparedRun:
    """Check the settings, then build the run on the network `source` gives (with what it came
    from, as run.json records it: `load_sim_network` reads the fabric the settings name).
    `check_budget` refuses a workload past --max-flows/--max-packets."""
    run, schemes = resolved(options)
    network, compiled = source(run)
    try:
        network = _shaped(network, run)
        duration_ps = duration_flag("--duration", run.duration) if run.duration else None
        warmup_ps = _warmup_ps(run.warmup, duration_ps)
        flows = _workload(run, network, duration_ps, options.size is not None, check_budget)
    except (NetworkLoadError, WorkloadError) as exc:
        raise plain_error(str(exc)) from None
    head: Parameters = {"fabric": network.name, "compiled": compiled, "schemes": schemes}
    parameters = record(run, head, warmup_ps)
    config = sim_config(run, duration_ps, warmup_ps)
    return PreparedRun(run, schemes, network, flows, config, parameters)


def _shaped(network: SimNetwork, run: SimOptions) -> SimNetwork:
    """The network with the run's link speeds and next-hop spreading."""
    if run.link_gbps:
        network = network.with_options(link_gbps=run.link_gbps, host_gbps=run.link_gbps)
    if run.all_equal_cost:
        network = network.with_options(all_equal_cost=True)
    if run.host_gbps is not None:
        network = network.with_options(host_gbps=run.host_gbps)
    return network


def _workload(
    run: SimOptions,
    network: SimNetwork,
    duration_ps: int | None,
    size_given: bool,
    check_budget: bool,
) -> Workload:
    size = run.size
    assert size is not None and run.mtu is not None
    if not run.from_file and check_budget:
        work = expected_work(network.n_hosts, run, size_given)
        work.check(run.max_flows, run.max_packets)
    if run.workload == RPC:
        return rpc_workload(
            network,
            rounds=run.rounds,
            request_bytes=run.mtu,
            response_bytes=parse_bytes(size) if size_given else run.mtu,
            seed=run.seed,
            offset=run.offset,
        )
    if run.from_file:
        # htsim's matrix format, the compiled model (below) and what they import load only for
        # the runs that read them: a generated fabric's small run starts without them.
        from fatpaths_cfg.sim.htsim import MatrixCaps, read_connection_matrix

        # The caps hold while the file is read (a sweep's tasks: the default caps).
        caps = MatrixCaps(run.max_flows, run.max_packets, run.mtu) if check_budget else None
        _, flows = read_connection_matrix(run.workload, network.n_hosts, caps)
        return flows
    sizes: str | int = size if size.startswith("websearch") else parse_bytes(size)
    wave = make_workload(
        network,
        run.workload,
        sizes,
        seed=run.seed,
        arrival_rate=run.arrival_rate,
        duration_ps=duration_ps,
        randomize_mapping=run.randomize_mapping,
        offset=run.offset,
    )
    if run.iterations is None:
        return wave
    compute_ps = parse_duration_ps(run.compute) if run.compute else 0
    return application_loop(wave, run.iterations, compute_ps)


def expected_work(n_hosts: int, run: SimOptions, size_given: bool) -> SimWork:
    """The flows and packets a generated workload will have, from its settings alone."""
    size, mtu, pattern = run.size, run.mtu, run.workload
    assert size is not None and mtu is not None
    mean_size = websearch_mean_bytes() if size.startswith("websearch") else float(parse_bytes(size))
    if pattern == RPC:
        flows = 2.0 * n_hosts * run.rounds
        source = f"--rounds {run.rounds} x {n_hosts} hosts"
        mean_size = (mean_size if size_given else mtu + mtu) / 2
        flag = "--rounds"
    elif run.arrival_rate is not None and run.duration:
        seconds = parse_duration_ps(run.duration) / 1e12
        flows = run.arrival_rate * seconds * n_hosts
        source = f"--lambda {run.arrival_rate:g} x --duration {run.duration} x {n_hosts} hosts"
        flag = "--lambda"
    else:
        all_pairs = ALIASES.get(pattern, pattern) == "all-to-all"
        flows = float(n_hosts * (n_hosts - 1) if all_pairs else n_hosts)
        source = f"{pattern} on {n_hosts} hosts"
        flag = "--workload"
        if run.iterations is not None:
            flows *= run.iterations
            source += f" x --iterations {run.iterations}"
            flag = "--iterations"
    packets = flows * max(1.0, np.ceil(mean_size / mtu))
    return SimWork(flows, packets, f"{source}, {mean_size:,.0f} bytes each", flag)


def _warmup_ps(warmup: str | None, duration_ps: int | None) -> int:
    """--warmup as picoseconds: a time, or 'half' of --duration (the paper's choice)."""
    if not warmup:
        return 0
    if warmup == "half":
        if duration_ps is None:
            raise WorkloadError("--warmup half needs --duration")
        return duration_ps // 2
    return duration_flag("--warmup", warmup, zero=True)


def duration_flag(flag: str, text: str, zero: bool = False) -> int:
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


# Compiles an inventory file in memory (api.compile_fabric: the API sits above the simulator).
# Its memory is estimated first, as `compile` does; --max-switches replaces the estimate.
CompileInventory = Callable[[Path, int, int | None], "CompiledFabric"]


def load_sim_network(
    options: SimOptions, compile_inventory: CompileInventory
) -> tuple[SimNetwork, str]:
    """The fabric to simulate and what it came from: a compiled directory, an inventory
    compiled in memory, or a generated topology (`--generate`)."""
    try:
        return _network(options, compile_inventory)
    except NetworkLoadError as exc:
        raise plain_error(str(exc)) from None


def _network(options: SimOptions, compile_inventory: CompileInventory) -> tuple[SimNetwork, str]:
    source, generate, param = options.out, options.generate, options.param
    latency = latency_ps(options)
    if (source is None) == (generate is None):
        raise NetworkLoadError("give a compiled directory or inventory, or --generate KIND")
    if generate is not None:
        params = _generator_params(param)
        cap = budget.switch_cap(options.max_switches)
        limit = SwitchBudget(cap, budget.switch_memory, f"--max-switches {cap} to try anyway")
        try:
            # The generator checks its size before it builds an edge: a Slim Fly q=199
            # (79,202 switches) aborted in the native allocator, 6.3 GB at once.
            with switch_budget(limit):
                network = network_from_topology(
                    generate, params, options.seed, link_latency_ps=latency
                )
        except (ValueError, KeyError) as exc:
            raise NetworkLoadError(f"--generate {generate}: {exc}") from None
        return network, f"generated {generate} " + " ".join(param)
    assert source is not None
    if source.is_file():
        from fatpaths_cfg.compiled import view_of

        compiled = compile_inventory(source, options.seed, options.max_switches)
        network = network_of(view_of(compiled), link_latency_ps=latency, source=str(source))
        return network, f"inventory {source.resolve()}"
    return load_network(source, link_latency_ps=latency), str(source.resolve())


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


def sim_root(source: Path | None, network: SimNetwork) -> Path:
    """Where runs go without -o: under the compiled directory, else out/sim/FABRIC."""
    if source is not None and source.is_dir():
        return source / "sim"
    return Path("out") / "sim" / network.name
