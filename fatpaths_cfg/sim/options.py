"""Every setting of a simulation, declared once.

`SimOptions` is the one model of what `fatpaths simulate` can be told: each field is a setting
and its metadata says everything the rest of the code needs to know about it, so a new setting
is one field here (and, for a new engine knob, the `SimConfig` field it sets):

* the command line's option (flags, help, group, bounds): `cli/simulate.py` generates the
  typer command from these fields;
* the key it is recorded under in a run's `run.json` (`record`, in declaration order; None:
  not recorded) and when it is recorded (`recorded_if`);
* the `SimConfig` field it sets (`config`; `per`: the option's value per unit of the field's,
  100 for a percentage);
* whether a sweep's `simulate:` task may set it (`sweep`): a sweep grid can set every setting
  of a run, and a key that is not one is refused where it stands in the sweep file.

Settings whose default depends on `--profile` (size, mtu, ...) default to None here: "not
given", filled in by `resolved`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim.profiles import PROFILES, resolve_profile
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
)
from fatpaths_cfg.sim.workloads import PATTERNS, WorkloadError, parse_bytes, parse_duration_ps
from fatpaths_cfg.support.scheme_names import current_name
from fatpaths_cfg.traffic_patterns import ALIASES

# The concerns `fatpaths simulate --help` groups its options by, in the order it lists them.
SOURCE = "Fabric"
WORKLOAD = "Workload"
TRANSPORT = "Transport"
BALANCING = "Load balancing"
QUEUES = "Queue"
NETWORK = "Link"
OUTPUT = "Output"
GROUPS = (SOURCE, WORKLOAD, TRANSPORT, BALANCING, QUEUES, NETWORK, OUTPUT)

# `--workload rpc`: ping-pong rounds (request of one MTU, response of --size) between each host
# and its permutation peer, rather than a traffic pattern of independent flows.
RPC = "rpc"
# Seeds are unsigned 64-bit in the engine; numpy's SeedSequence takes any of them.
MAX_SEED = 2**63 - 1


def _always(_: SimOptions) -> bool:
    return True


def setting(
    default: Any,
    *flags: str,
    help: str,
    group: str,
    record: str | None = "",
    recorded_if: Callable[[SimOptions], bool] = _always,
    config: str | None = None,
    per: float = 1.0,
    sweep: bool = True,
    min: float | None = None,
    max: float | None = None,
    finite: str | None = None,
    metavar: str | None = None,
) -> Any:
    """A field of SimOptions: its default and everything said about it (see the module).

    `record=""` records it under its field name; `finite` ("positive" or "non-negative") checks
    a float that range checks would let through as NaN or infinity.
    """
    metadata = {
        "flags": flags,
        "help": help,
        "group": group,
        "record": record,
        "recorded_if": recorded_if,
        "config": config,
        "per": per,
        "sweep": sweep,
        "min": min,
        "max": max,
        "finite": finite,
        "metavar": metavar,
    }
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def _rpc(options: SimOptions) -> bool:
    return options.workload == RPC


def _loop(options: SimOptions) -> bool:
    return options.iterations is not None


def _mptcp(options: SimOptions) -> bool:
    return options.transport == "mptcp"


# Fields are in the order run.json records them (after fabric, compiled and schemes).
@dataclass(frozen=True)
class SimOptions:
    out: Path | None = setting(
        None,
        help="Compiled output directory (from `fatpaths compile`), or an inventory YAML, "
        "compiled in memory.",
        group=SOURCE,
        record=None,
        sweep=False,
    )
    generate: str | None = setting(
        None,
        "--generate",
        help="Simulate a generated topology (e.g. slimfly) instead: layer 1 only, minimal "
        "routing, nothing compiled to disk.",
        group=SOURCE,
        record=None,
        sweep=False,
    )
    param: list[str] = setting(
        [],
        "-p",
        "--param",
        help="--generate: NAME=VALUE, repeatable (e.g. -p q=5).",
        group=SOURCE,
        record=None,
        sweep=False,
    )
    transport: str = setting(
        "ndp", "--transport", help="|".join(TRANSPORTS), group=TRANSPORT, config="transport"
    )
    layer_policy: str = setting(
        "adaptive",
        "--layer-policy",
        help="FatPaths layer choice: adaptive (scores, moves on congestion) | uniform (baseline).",
        group=BALANCING,
        config="layer_policy",
    )
    profile: str | None = setting(
        None,
        "--profile",
        help=f"Preset of paper parameters ({', '.join(PROFILES)}).",
        group=WORKLOAD,
    )
    workload: str = setting(
        "permutation",
        "--workload",
        "-w",
        help=f"Traffic pattern ({', '.join(PATTERNS)}), 'rpc' (ping-pong rounds between "
        "permutation peers: one-MTU requests, --size responses) or htsim connection matrix file.",
        group=WORKLOAD,
    )
    size: str | None = setting(
        None,
        "--size",
        help="Flow size (e.g. 64KiB, 2MB; default 1MB), 'websearch' (pFabric CDF) or "
        "'websearch-sc20' (its 20-point discretisation, mean about 1 MB, as in the paper).",
        group=WORKLOAD,
    )
    offset: int | None = setting(
        None,
        "--offset",
        help="off-diagonal: host h sends to h + OFFSET (default: p_max); skewed-off-diagonal: "
        "a multiple of p (default: the farthest, see docs).",
        group=WORKLOAD,
    )
    arrival_rate: float | None = setting(
        None,
        "--lambda",
        help="Poisson arrivals: flows per second per host (default: one wave).",
        group=WORKLOAD,
        record="lambda",
        finite="positive",
    )
    duration: str | None = setting(
        None,
        "--duration",
        help="Simulated time (e.g. 10ms); with --lambda also the arrival window. "
        "Default: until all flows finish.",
        group=WORKLOAD,
    )
    until_done: bool | None = setting(
        None,
        "--until-done/--stop-at-duration",
        help="With --duration: keep running after it until every flow finished.",
        group=WORKLOAD,
    )
    iterations: int | None = setting(
        None,
        "--iterations",
        help="Application loop (the FatPaths paper's stencil + barrier): N iterations, each "
        "--compute then one wave of the pattern's flows, the next once all have arrived.",
        group=WORKLOAD,
        min=1,
    )
    compute: str | None = setting(
        None,
        "--compute",
        help="--iterations: time each host computes before it sends, per iteration (e.g. "
        "100us; default 0).",
        group=WORKLOAD,
        recorded_if=_loop,
    )
    warmup: str | None = setting(
        None,
        "--warmup",
        help="Leave flows starting before this time (e.g. 1ms, or 'half') out of the statistics.",
        group=WORKLOAD,
        record="warmup_us",
    )
    seed: int = setting(
        1,
        "--seed",
        help="Seed of the workload and the simulation.",
        group=WORKLOAD,
        config="seed",
        sweep=False,
        min=0,
        max=MAX_SEED,
    )
    randomize_mapping: bool = setting(
        False,
        "--randomize-mapping/--no-randomize-mapping",
        help="Random host relabelling.",
        group=WORKLOAD,
    )
    mtu: int | None = setting(
        None,
        "--mtu",
        help="Payload bytes per full packet (9000).",
        group=TRANSPORT,
        config="mtu",
        min=1,
    )
    queue: int | None = setting(
        None,
        "--queue",
        help="Switch queue capacity in packets.",
        group=QUEUES,
        config="queue_packets",
        min=1,
    )
    window: int | None = setting(
        None,
        "--window",
        help="Initial window in packets.",
        group=TRANSPORT,
        config="initial_window",
        min=1,
    )
    ecn: int | None = setting(
        None,
        "--ecn",
        help="ECN marking threshold in packets.",
        group=QUEUES,
        config="ecn_threshold_packets",
        min=0,
    )
    min_rto_us: float | None = setting(
        None,
        "--min-rto-us",
        help="Minimum retransmission timeout in us (1000).",
        group=TRANSPORT,
        config="min_rto_us",
        finite="positive",
    )
    initial_rto_us: float = setting(
        1000.0,
        "--initial-rto-us",
        help="TCP's (DCTCP's, MPTCP subflows') timeout in us before a flow's first RTT sample, "
        "at least the minimum RTO; the simulator has no SYN, so a first window waits this long "
        "(1000; RFC 6298 before any sample: 1000000).",
        group=TRANSPORT,
        config="initial_rto_us",
        min=0.001,
        max=1e8,
        finite="positive",
    )
    rto_granularity_us: float | None = setting(
        None,
        "--rto-granularity-us",
        help="Timeout timer grid in us: timeouts fire up to this late (default: min RTO / 4).",
        group=TRANSPORT,
        config="rto_granularity_us",
        finite="positive",
    )
    ssthresh: int | None = setting(
        None,
        "--ssthresh",
        help="TCP/DCTCP initial slow-start threshold, packets (unbounded).",
        group=TRANSPORT,
        config="initial_ssthresh",
        min=1,
    )
    drop: str = setting(
        "tail",
        "--drop",
        help="TCP/DCTCP full-queue policy: " + "|".join(DROP_POLICIES) + " (tail).",
        group=QUEUES,
        config="drop_policy",
    )
    red_min: int | None = setting(
        None,
        "--red-min",
        help="--drop red: packets queued before early drops (half the queue).",
        group=QUEUES,
        config="red_min_packets",
        min=0,
    )
    header: int = setting(
        64,
        "--header",
        help="Header bytes per data packet and trimmed header (64).",
        group=TRANSPORT,
        config="header",
        min=0,
    )
    ack_bytes: int | None = setting(
        None,
        "--ack-bytes",
        help="Bytes of an ACK, NACK or pull on the wire (the --header size).",
        group=TRANSPORT,
        config="ack_bytes",
    )
    pacing: bool = setting(
        False,
        "--pacing/--no-pacing",
        help="TCP/DCTCP: pace each window over one RTT.",
        group=TRANSPORT,
        config="tcp_pacing",
    )
    flowlet_gap_us: float = setting(
        50.0,
        "--flowlet-gap-us",
        help="Flowlet gap in us.",
        group=BALANCING,
        config="flowlet_gap_us",
        finite="non-negative",
    )
    latency_us: float = setting(
        1.0,
        "--latency-us",
        help="Per-link latency in us.",
        group=NETWORK,
        finite="non-negative",
    )
    link_gbps: float | None = setting(
        None,
        "--link-gbps",
        help="Override every link and host speed (Gb/s).",
        group=NETWORK,
        finite="positive",
    )
    all_equal_cost: bool = setting(
        False,
        "--all-equal-cost",
        help="FatPaths: spread over all equal-cost next hops in every layer.",
        group=BALANCING,
    )
    routing: str = setting(
        "layers",
        "--routing",
        help="Switch-side routing: " + "|".join(ROUTING) + " (min, inr, ugal-l: SC'15's schemes "
        "over layer 1's minimal paths; --lb then sets only the entropy).",
        group=BALANCING,
        config="routing",
    )
    vcs: int | None = setting(
        None,
        "--vcs",
        help="Hop-count virtual channels of min/inr/ugal-l (default: per topology).",
        group=BALANCING,
        config="channels",
        min=1,
    )
    adaptive_threshold: int = setting(
        4,
        "--adaptive-threshold",
        help="adaptive: queue (packets) that notifies the input switch.",
        group=BALANCING,
        config="adaptive_threshold_packets",
        min=0,
    )
    notify_delay_us: float = setting(
        1.0,
        "--notify-delay-us",
        help="adaptive: delay of a congestion notification in us.",
        group=BALANCING,
        config="notify_delay_us",
        finite="non-negative",
    )
    host_gbps: float | None = setting(
        None,
        "--host-gbps",
        help="Shape every host link to this rate (e.g. 1/p of the links).",
        group=NETWORK,
        finite="positive",
    )
    lossless: bool = setting(
        False,
        "--lossless",
        help="PFC per priority instead of dropping or trimming queues.",
        group=QUEUES,
        config="lossless",
    )
    pfc_xoff: int | None = setting(
        None,
        "--pfc-xoff",
        help="PFC pause threshold per ingress priority, in packets.",
        group=QUEUES,
        config="pfc_xoff_packets",
        min=1,
    )
    pfc_xon: int | None = setting(
        None,
        "--pfc-xon",
        help="PFC resume threshold, in packets (default: half of xoff).",
        group=QUEUES,
        config="pfc_xon_packets",
        min=1,
    )
    compiled_baselines: bool = setting(
        False,
        "--compiled-baselines",
        help="Baselines route on the compiled layer 1 instead of the full network's minimal paths.",
        group=BALANCING,
    )
    rounds: int = setting(
        10,
        "--rounds",
        help="rpc: request-response rounds per client.",
        group=WORKLOAD,
        recorded_if=_rpc,
        min=1,
    )
    plane_choice: str = setting(
        "hash",
        "--plane-choice",
        help="Multi-plane fabrics: plane of each single-path flow, "
        + "|".join(PLANE_CHOICES)
        + ".",
        group=BALANCING,
        config="plane_choice",
    )
    subflows_per_plane: int = setting(
        1,
        "--subflows-per-plane",
        help="mptcp: subflows in each plane (1..32).",
        group=TRANSPORT,
        recorded_if=_mptcp,
        config="subflows_per_plane",
    )
    path_choice: str = setting(
        "kshortest",
        "--path-choice",
        help="mptcp: subflow paths in a plane, "
        + "|".join(PATH_CHOICES)
        + " (k equal-cost minimal paths, or one FatPaths layer each).",
        group=TRANSPORT,
        recorded_if=_mptcp,
        config="path_choice",
    )
    subflow_transport: str = setting(
        "tcp",
        "--subflow-transport",
        help="mptcp: subflows' congestion control, " + "|".join(SUBFLOW_TRANSPORTS) + ".",
        group=TRANSPORT,
        recorded_if=_mptcp,
        config="subflow_transport",
    )
    # Not recorded: the schemes are (first in run.json), and these only shape the run.
    lb: str = setting(
        "fatpaths",
        "--lb",
        help="|".join(LOAD_BALANCING)
        + " (single-path: one fixed minimal path per flow; its old name, minimal, is read as it).",
        group=BALANCING,
        record=None,
    )
    compare: str | None = setting(
        None,
        "--compare",
        help="Comma-separated --lb schemes to run on the same workload, or 'all'.",
        group=BALANCING,
        record=None,
        sweep=False,
    )
    ugal_n_i: int = setting(
        4,
        "--ugal-n-i",
        help="UGAL-L: indirect candidates per packet.",
        group=BALANCING,
        record=None,
        config="ugal_n_i",
        min=1,
    )
    ugal_c: float = setting(
        1.0,
        "--ugal-c",
        help="UGAL-L: weight of indirect costs.",
        group=BALANCING,
        record=None,
        config="ugal_c",
        finite="non-negative",
    )
    ugal_threshold: float = setting(
        10.0,
        "--ugal-threshold",
        help="ugal-l-threshold: minimal below this % of the buffer.",
        group=BALANCING,
        record=None,
        config="ugal_threshold",
        per=100,
        finite="non-negative",
    )
    results_dir: Path | None = setting(
        None,
        "-o",
        "--output",
        help="Directory of this run (default: OUT/sim/SCHEMES-TRANSPORT-WORKLOAD-SEED).",
        group=OUTPUT,
        record=None,
        sweep=False,
    )
    save_matrix: Path | None = setting(
        None,
        "--save-matrix",
        help="Also write the workload as an htsim connection matrix.",
        group=OUTPUT,
        record=None,
        sweep=False,
    )
    max_flows: int | None = setting(
        None,
        "--max-flows",
        help="Refuse a workload of more flows (default: what half the available memory holds).",
        group=OUTPUT,
        record=None,
        sweep=False,
        min=1,
    )
    max_packets: int | None = setting(
        None,
        "--max-packets",
        help="Refuse a workload of more data packets (default: about a CPU-day of simulation).",
        group=OUTPUT,
        record=None,
        sweep=False,
        min=1,
    )
    max_switches: int | None = setting(
        None,
        "--max-switches",
        help="--generate: refuse a larger topology (default: what half the available memory "
        "holds of the simulator's switch-pair tables).",
        group=SOURCE,
        record=None,
        sweep=False,
        min=1,
    )
    plot: bool = setting(
        False,
        "--plot",
        help="Also write fct_cdf.png and fct_vs_size.png (matplotlib adds about 1 CPU-s).",
        group=OUTPUT,
        record=None,
        sweep=False,
    )
    force: bool = setting(
        False,
        "--force",
        help="Replace -o DIR and --save-matrix FILE even if fatpaths did not write them.",
        group=OUTPUT,
        record=None,
        sweep=False,
    )

    @property
    def from_file(self) -> bool:
        """--workload names a connection matrix file, not a pattern."""
        return Path(self.workload).is_file()


def setting_fields() -> list[Any]:
    """The fields of SimOptions, each a setting (dataclasses.Field with its metadata)."""
    return list(fields(SimOptions))


def default_of(item: Any) -> Any:
    return item.default_factory() if item.default is MISSING else item.default


SWEEP_SETTINGS = tuple(item.name for item in setting_fields() if item.metadata["sweep"])


def flag_of(name: str) -> str:
    """The long flag of a setting, as errors name it (`--min-rto-us`)."""
    item = next(item for item in setting_fields() if item.name == name)
    flags = item.metadata["flags"]
    return next(f for f in flags if f.startswith("--")).split("/")[0] if flags else name.upper()


def user_error(where: str, message: str) -> UserErrors:
    """A user error printed as `error: WHERE: MESSAGE` (WHERE: the flag and its value)."""
    return UserErrors.single(where, "", message)


def plain_error(message: str) -> UserErrors:
    """A user error whose message names its own flag or file (the engine's, a loader's)."""
    return UserErrors.single("", "", message)


def check_numbers(options: SimOptions) -> None:
    """Each float setting (given) must be finite, and those marked positive > 0: NaN passes
    every range check unnoticed, and infinity reaches the workload generator or the engine."""
    for item in setting_fields():
        kind, value = item.metadata["finite"], getattr(options, item.name)
        if kind is None or value is None:
            continue
        flag = flag_of(item.name)
        if not math.isfinite(value):
            raise user_error(f"{flag} {value}", "expected a finite number")
        positive = kind == "positive"
        if value < 0 or (positive and value == 0):
            raise user_error(
                f"{flag} {value:g}", f"expected a number {'> 0' if positive else '>= 0'}"
            )


def check_choices(options: SimOptions) -> None:
    """The named choices the engine would refuse later, refused by their flag first."""
    choices = (
        ("routing", ROUTING),
        ("transport", TRANSPORTS),
        ("layer_policy", LAYER_POLICIES),
    )
    for name, known in choices:
        value = getattr(options, name)
        if value not in known:
            raise user_error(f"{flag_of(name)} {value!r}", f"expected one of {', '.join(known)}")
    if options.ack_bytes is not None and options.ack_bytes <= 0:
        raise user_error(f"--ack-bytes {options.ack_bytes}", "expected a positive number of bytes")


def resolved(options: SimOptions) -> tuple[SimOptions, list[str]]:
    """The settings a run uses, checked, with the profile's values (or the defaults) filled in
    where a setting was not given; and the load-balancing schemes it runs."""
    check_numbers(options)
    schemes = run_schemes(options)
    check_choices(options)
    try:
        preset = resolve_profile(options.profile, options.transport)
    except ValueError as exc:
        raise plain_error(str(exc)) from None
    if options.iterations is not None:
        # A loop's timing is its own: the profile's Poisson arrivals, window and warm-up
        # describe another experiment (its link, frame, RTO and sizes still apply).
        preset = replace(preset, arrival_rate=None, duration=None, warmup=None)
    size = options.size or preset.size or "1MB"
    arrival_rate = options.arrival_rate
    run = replace(
        options,
        size=size,
        arrival_rate=arrival_rate if arrival_rate is not None else preset.arrival_rate,
        duration=options.duration or preset.duration,
        until_done=preset.until_done if options.until_done is None else options.until_done,
        warmup=options.warmup or preset.warmup,
        link_gbps=options.link_gbps or preset.link_gbps,
        mtu=options.mtu or preset.mtu or 9000,
        min_rto_us=options.min_rto_us or preset.min_rto_us or 1000.0,
    )
    _check_workload(run)
    return run, schemes


def run_schemes(options: SimOptions) -> list[str]:
    """The schemes to run: --compare's list ('all' for every scheme), else --lb; mptcp's
    named for where its subflows' paths come from (--path-choice)."""
    compare = options.compare
    if compare and compare.strip() == "all":
        schemes = list(LOAD_BALANCING)
    else:
        schemes = [s.strip() for s in compare.split(",")] if compare else [options.lb]
        schemes = [current_name(s) for s in schemes]
    for scheme in schemes:
        if scheme not in LOAD_BALANCING:
            raise user_error(
                f"--lb/--compare {scheme!r}", f"expected one of {', '.join(LOAD_BALANCING)}"
            )
    if options.transport == "mptcp":
        if compare:
            raise plain_error("--compare needs a single-path transport; mptcp picks its own paths")
        schemes = ["fatpaths" if options.path_choice == "layers" else "ecmp"]
    return schemes


def _check_workload(run: SimOptions) -> None:
    workload, size = run.workload, run.size
    assert size is not None
    if not run.from_file and workload != RPC and ALIASES.get(workload, workload) not in PATTERNS:
        raise user_error(
            f"--workload {workload}",
            f"not a traffic pattern ({', '.join(PATTERNS)}), '{RPC}' or a connection matrix file",
        )
    if run.arrival_rate is not None and not run.duration:
        raise user_error(
            f"--lambda {run.arrival_rate:g}",
            "Poisson arrivals need --duration (their arrival window)",
        )
    _check_loop(run)
    if not run.from_file and not size.startswith("websearch"):
        try:
            parse_bytes(size)
        except WorkloadError as exc:
            raise user_error(f"--size {size}", str(exc)) from None


def _check_loop(run: SimOptions) -> None:
    """--iterations repeats one wave of a pattern's flows: not Poisson arrivals, rpc rounds
    or a matrix file; --compute belongs to it."""
    if run.iterations is None:
        if run.compute is not None:
            raise user_error(f"--compute {run.compute}", "needs --iterations (an application loop)")
        return
    where = f"--iterations {run.iterations}"
    if run.workload == RPC or run.from_file:
        raise user_error(where, "loops a traffic pattern, not rpc rounds or a connection matrix")
    if run.arrival_rate is not None:
        raise user_error(where, "loops one wave of flows; drop --lambda (Poisson arrivals)")
    if run.compute is not None:
        try:
            compute_ps = parse_duration_ps(run.compute)
        except (WorkloadError, ValueError):
            compute_ps = -1
        if compute_ps < 0:
            raise user_error(f"--compute {run.compute}", "expected a duration such as 100us")


def sim_config(run: SimOptions, duration_ps: int | None, warmup_ps: int) -> SimConfig:
    """The engine's configuration of a resolved run (before each scheme's --lb)."""
    values: dict[str, Any] = {}
    for item in setting_fields():
        target = item.metadata["config"]
        if target is not None:
            value = getattr(run, item.name)
            per = item.metadata["per"]
            values[target] = value / per if per != 1.0 and value is not None else value
    values["duration_us"] = duration_ps / 1e6 if duration_ps and not run.until_done else None
    values["warmup_us"] = warmup_ps / 1e6
    values["baselines_on_full_network"] = not run.compiled_baselines
    try:
        return SimConfig(**values)
    except ValueError as exc:
        raise plain_error(str(exc)) from None


def record(run: SimOptions, head: dict[str, Any], warmup_ps: int) -> dict[str, Any]:
    """The run's record (run.json): `head` (fabric, compiled, schemes), then every recorded
    setting under its key, in declaration order."""
    parameters = dict(head)
    for item in setting_fields():
        key = item.metadata["record"]
        if key is None:
            continue
        value = getattr(run, item.name)
        parameters[key or item.name] = value if item.metadata["recorded_if"](run) else None
    # Recorded as the run read them: the matrix file by its full path, no size beside it, and
    # the warm-up as the microseconds it came to.
    if run.from_file:
        parameters["workload"] = str(Path(run.workload).resolve())
        parameters["size"] = None
    parameters["warmup_us"] = warmup_ps / 1e6
    return parameters


def check_run(options: SimOptions) -> None:
    """Refuse settings `fatpaths simulate` would refuse before it simulates (a sweep checks
    each of its runs so when it loads)."""
    run, _ = resolved(options)
    sim_config(run, None, 0)
