"""Run one simulation: a network, a workload and a configuration in; a `SimResult` out."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.support.scheme_names import SINGLE_PATH, current_name

from .network import SimNetwork
from .results import Invariant, SimResult
from .workloads import Workload

TRANSPORTS = ("ndp", "tcp", "dctcp", "mptcp")
# Multi-plane fabrics: how a single-path flow picks its plane, and MPTCP's subflow paths
# inside a plane (native/src/sim/config.rs).
PLANE_CHOICES = ("hash", "round-robin", "fewest-hops")
PATH_CHOICES = ("kshortest", "layers")
SUBFLOW_TRANSPORTS = ("tcp", "dctcp")
# `single-path` is one fixed minimal path per flow; `ecmp`, `letflow` and `spray` spread over every
# equal-cost minimal path of the full network; `fatpaths` uses the compiled layers.
LOAD_BALANCING = ("single-path", "ecmp", "letflow", "spray", "fatpaths")
# How FatPaths picks layers (native/src/sim/layer_choice.rs): `adaptive` scores layers per flow and
# moves on congestion signals; `uniform` is the memoryless baseline.
LAYER_POLICIES = ("adaptive", "uniform")
ROUTING = ("layers", "min", "inr", "ugal-l", "ugal-l-threshold", "adaptive")
# What a full TCP/DCTCP queue drops (native/src/sim/config.rs, DropPolicy): the arrival, the
# oldest waiting packets, or arrivals at random once `red_min_packets` are queued.
DROP_POLICIES = ("tail", "front", "red")

# Per-transport defaults from the papers (docs/simulator.md, Transports): NDP runs shallow 8-packet
# trimming queues with an 8-packet first window; TCP and DCTCP 100-packet tail-drop queues,
# DCTCP marking above 33 packets.
_DEFAULT_QUEUE = {"ndp": 8, "tcp": 100, "dctcp": 100, "mptcp": 100}
_DEFAULT_ECN = {"ndp": 0, "tcp": 0, "dctcp": 33, "mptcp": 0}
_DEFAULT_WINDOW = {"ndp": 8, "tcp": 10, "dctcp": 10, "mptcp": 10}

# Virtual channels (minimal, indirect) the SC'15 study needs per topology: hop-count channels
# on Slim Fly, and one (two) on MLFM and OFT, whose minimal routes are already cycle-free.
_PAPER_CHANNELS = {"slimfly": (2, 4), "mlfm": (1, 2), "oft": (1, 2)}
# PFC priorities a switch offers.
PRIORITIES = 8
# 100 s: timeouts back off up to 64 times, and simulated time must stay far inside 2^64 ps.
MAX_INITIAL_RTO_US = 1e8

ProgressCallback = Callable[[int, int | None], None]


def virtual_channels(routing: str, topology: str | None, diameter: int) -> int:
    """Hop-count channels a routing scheme needs to be deadlock-free on lossless queues.

    The paper's counts where it gives them; elsewhere one channel per hop of the longest path
    (the diameter for MIN, twice that for the two minimal legs of INR and UGAL-L)."""
    if routing == "layers":
        return 1
    minimal, indirect = _PAPER_CHANNELS.get(topology or "", (diameter, 2 * diameter))
    # Adaptive routing picks among minimal paths, so it needs what MIN needs.
    count = minimal if routing in ("min", "adaptive") else indirect
    return max(1, min(PRIORITIES, count))


@dataclass(frozen=True)
class SimConfig:
    transport: str = "ndp"
    load_balancing: str = "spray"
    mtu: int = 9000
    header: int = 64
    # Bytes of an ACK, NACK or pull on the wire; None: the header's (htsim's TCP: 40 B ACKs
    # beside 1,500 B data packets that count their headers in the MTU).
    ack_bytes: int | None = None
    queue_packets: int | None = None
    ecn_threshold_packets: int | None = None
    initial_window: int | None = None
    # TCP/DCTCP slow-start threshold at flow start, in packets; None: unbounded.
    initial_ssthresh: int | None = None
    min_rto_us: float = 1000.0
    # TCP's (DCTCP's, MPTCP subflows') timeout before a flow's first RTT sample, floored by
    # min_rto_us. 1 ms stands for the RTO a real stack holds after its handshake's sample (this
    # simulator has no SYN); RFC 6298's 1 s (1_000_000.0) made 2-3% of a loaded run's flows
    # wait a second (docs/concepts/simulator.md, TCP). NDP keeps its own 1 ms.
    initial_rto_us: float = 1000.0
    # Period of the timeout scan (timeouts fire up to this late); None: min_rto_us / 4.
    rto_granularity_us: float | None = None
    drop_policy: str = "tail"
    # `red`: arrivals finding at least this many packets queued may be dropped; None: half
    # the queue.
    red_min_packets: int | None = None
    flowlet_gap_us: float = 50.0
    pull_rate: float = 0.99
    # Layers (1-based ids) FatPaths picks from; None = all layers of the network.
    fatpaths_layers: tuple[int, ...] | None = None
    layer_policy: str = "adaptive"
    # TCP/DCTCP: spread each window over one smoothed RTT instead of line-rate bursts.
    tcp_pacing: bool = False
    # Baselines (single-path, ecmp, letflow, spray) route on the full network's minimal paths; when
    # False they use the compiled layer 1 as it is (the behaviour before baselines were fair).
    baselines_on_full_network: bool = True
    # Stop at this simulated time; None runs until every flow is done.
    duration_us: float | None = None
    # Flows starting earlier are simulated but left out of the statistics.
    warmup_us: float = 0.0
    seed: int = 1
    # Switch-side routing: the compiled layers, or an SC'15 scheme over layer 1's minimal paths.
    routing: str = "layers"
    ugal_n_i: int = 4
    ugal_c: float = 1.0
    ugal_threshold: float = 0.1
    # Adaptive routing (Clos): a queue above this many packets notifies the flow's input switch,
    # which re-picks the flow's middle switch once the notification arrives.
    adaptive_threshold_packets: int = 4
    notify_delay_us: float = 1.0
    # Hop-count virtual channels (PFC priorities) of MIN/INR/UGAL-L; None: virtual_channels().
    channels: int | None = None
    # PFC instead of drop-tail or trimming queues; thresholds per ingress and priority.
    lossless: bool = False
    pfc_xoff_packets: int | None = None  # None: the queue size
    pfc_xon_packets: int | None = None  # None: half of xoff
    # Multi-plane fabrics: plane of single-path flows; MPTCP's subflows per plane, their paths
    # (k equal-cost minimal paths, or FatPaths layers) and congestion control.
    plane_choice: str = "hash"
    subflows_per_plane: int = 1
    path_choice: str = "kshortest"
    subflow_transport: str = "tcp"

    def __post_init__(self) -> None:
        # The old name of a scheme is read as the new one, so results carry one name.
        object.__setattr__(self, "load_balancing", current_name(self.load_balancing))
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport {self.transport!r}: expected one of {TRANSPORTS}")
        if self.load_balancing not in LOAD_BALANCING:
            raise ValueError(
                f"load balancing {self.load_balancing!r}: expected one of {LOAD_BALANCING}"
            )
        if self.layer_policy not in LAYER_POLICIES:
            raise ValueError(
                f"layer policy {self.layer_policy!r}: expected one of {LAYER_POLICIES}"
            )
        if self.mtu <= 0 or self.header <= 0:
            raise ValueError("mtu and header must be positive")
        if self.ack_bytes is not None and self.ack_bytes <= 0:
            raise ValueError("ack_bytes must be positive")
        if not 0 < self.pull_rate <= 1:
            raise ValueError("pull_rate must lie in (0, 1]")
        if self.routing not in ROUTING:
            raise ValueError(f"routing {self.routing!r}: expected one of {ROUTING}")
        if self.channels is not None and not 1 <= self.channels <= PRIORITIES:
            raise ValueError(f"channels must lie in 1..{PRIORITIES}")
        if self.plane_choice not in PLANE_CHOICES:
            raise ValueError(f"plane choice {self.plane_choice!r}: expected one of {PLANE_CHOICES}")
        if self.path_choice not in PATH_CHOICES:
            raise ValueError(f"path choice {self.path_choice!r}: expected one of {PATH_CHOICES}")
        if self.subflow_transport not in SUBFLOW_TRANSPORTS:
            raise ValueError(
                f"subflow transport {self.subflow_transport!r}: "
                f"expected one of {SUBFLOW_TRANSPORTS}"
            )
        if not 1 <= self.subflows_per_plane <= 32:
            raise ValueError("subflows per plane must lie in 1..32")
        if self.ugal_n_i < 1 or self.ugal_c <= 0 or not 0 <= self.ugal_threshold <= 1:
            raise ValueError("UGAL-L needs n_I >= 1, c > 0 and a threshold in [0, 1]")
        self._check_loss_options()

    def _check_loss_options(self) -> None:
        if self.drop_policy not in DROP_POLICIES:
            raise ValueError(f"drop policy {self.drop_policy!r}: expected one of {DROP_POLICIES}")
        if self.drop_policy != "tail" and (self.transport == "ndp" or self.lossless):
            # NDP's full queues trim and lossless queues pause: neither drops data.
            raise ValueError(f"drop policy {self.drop_policy!r} needs tcp or dctcp, lossy queues")
        if self.initial_ssthresh is not None and self.initial_ssthresh < 1:
            raise ValueError("initial ssthresh must be at least 1 packet")
        if self.min_rto_us <= 0:
            raise ValueError("the minimum RTO must be positive")
        if not 0 < self.initial_rto_us <= MAX_INITIAL_RTO_US:
            raise ValueError(
                f"the initial RTO must lie in (0, {MAX_INITIAL_RTO_US:,.0f}] us, "
                f"not {self.initial_rto_us}"
            )
        if self.rto_granularity_us is not None and self.rto_granularity_us < 1e-6:
            raise ValueError("the RTO granularity must be at least 1 ps")
        if self.red_min_packets is not None and self.red_min_packets < 0:
            raise ValueError("the RED threshold must not be negative")

    def resolved(self) -> dict[str, object]:
        """Every parameter with per-transport defaults filled in (as recorded in summaries)."""
        d = asdict(self)
        d["queue_packets"] = self.queue_packets or _DEFAULT_QUEUE[self.transport]
        # MPTCP marks as its subflows' congestion control needs.
        congestion = self.subflow_transport if self.transport == "mptcp" else self.transport
        d["ecn_threshold_packets"] = (
            self.ecn_threshold_packets
            if self.ecn_threshold_packets is not None
            else _DEFAULT_ECN[congestion]
        )
        d["initial_window"] = self.initial_window or _DEFAULT_WINDOW[self.transport]
        d["ack_bytes"] = self.ack_bytes or self.header
        d["rto_granularity_us"] = (
            self.rto_granularity_us if self.rto_granularity_us is not None else self.min_rto_us / 4
        )
        d["red_min_packets"] = (
            self.red_min_packets
            if self.red_min_packets is not None
            else int(d["queue_packets"]) // 2
        )
        xoff = self.pfc_xoff_packets or d["queue_packets"]
        d["pfc_xoff_packets"] = xoff
        d["pfc_xon_packets"] = (
            self.pfc_xon_packets if self.pfc_xon_packets is not None else xoff // 2
        )
        return d

    def native_dict(self, network: SimNetwork) -> dict[str, object]:
        r = self.resolved()
        layers = self.fatpaths_layers or tuple(range(1, network.n_layers + 1))
        if not self._on_compiled_layers() or self.routing != "layers":
            layers = (1,)
        bad = [x for x in layers if not 1 <= x <= network.n_layers]
        if bad:
            raise ValueError(f"fatpaths layers {bad} outside 1..{network.n_layers}")
        return {
            "transport": self.transport,
            # `single-path` is ECMP's fixed per-flow path on a network with one next hop per switch.
            # (MPTCP picks its subflows' paths itself.)
            "load_balancing": (
                "ecmp"
                if self.load_balancing == SINGLE_PATH or self.transport == "mptcp"
                else self.load_balancing
            ),
            "layer_policy": self.layer_policy,
            "tcp_pacing": self.tcp_pacing,
            "mtu": self.mtu,
            "header": self.header,
            "ack_bytes": r["ack_bytes"],
            "queue_packets": r["queue_packets"],
            "ecn_threshold_packets": r["ecn_threshold_packets"],
            "initial_window": r["initial_window"],
            "min_rto_ps": round(self.min_rto_us * 1e6),
            "initial_rto_ps": max(1, round(self.initial_rto_us * 1e6)),
            "rto_granularity_ps": max(1, round(float(r["rto_granularity_us"]) * 1e6)),  # type: ignore[arg-type]
            "initial_ssthresh": self.initial_ssthresh or 0,
            "drop_policy": self.drop_policy,
            "red_min_packets": r["red_min_packets"],
            "flowlet_gap_ps": round(self.flowlet_gap_us * 1e6),
            "pull_rate": self.pull_rate,
            "fatpaths_layers": [x - 1 for x in layers],
            "seed": self.seed,
            "plane_choice": self.plane_choice,
            "subflows_per_plane": self.subflows_per_plane,
            "subflow_paths": self.path_choice,
            "dctcp_subflows": self.subflow_transport == "dctcp",
            **self._routing_dict(network, r),
        }

    def _routing_dict(self, network: SimNetwork, r: dict[str, object]) -> dict[str, object]:
        channels = self.channels or virtual_channels(
            self.routing, network.topology, network.diameter()
        )
        packet = self.mtu + self.header
        return {
            "routing": self.routing,
            "ugal_n_i": self.ugal_n_i,
            "ugal_c": self.ugal_c,
            "ugal_threshold": self.ugal_threshold,
            "adaptive_threshold_bytes": self.adaptive_threshold_packets * packet,
            "notify_delay_ps": round(self.notify_delay_us * 1e6),
            "channels": channels,
            # Under layered routing each layer has a priority of its own (the last one shared
            # beyond eight layers): a layer cycle-free on its own stays so on its priority.
            "layer_priority": [min(i, PRIORITIES - 1) for i in range(network.n_layers)],
            "lossless": self.lossless,
            "pfc_xoff_bytes": int(r["pfc_xoff_packets"]) * packet,  # type: ignore[call-overload]
            "pfc_xon_bytes": int(r["pfc_xon_packets"]) * packet,  # type: ignore[call-overload]
        }

    def network_for(self, network: SimNetwork) -> SimNetwork:
        """The network this scheme routes on: the compiled layers for FatPaths, the full
        network's minimal paths for the baselines (unless `baselines_on_full_network` is off)."""
        if self._on_compiled_layers() or not self.baselines_on_full_network:
            return network
        if self.transport == "mptcp":
            # k-shortest subflows pick among every equal-cost minimal path.
            return network.baseline(multipath=True)
        return network.baseline(multipath=self.load_balancing != SINGLE_PATH)

    def _on_compiled_layers(self) -> bool:
        """Whether paths come from the compiled layers (FatPaths, or MPTCP subflows on layers);
        MPTCP's own path choice overrides the load balancing's."""
        if self.transport == "mptcp":
            return self.path_choice == "layers"
        return self.load_balancing == "fatpaths"

    def with_lb(self, load_balancing: str) -> SimConfig:
        return replace(self, load_balancing=load_balancing)


class NativeEngine(Protocol):
    """What `fatpaths_cfg._native.PacketSimulator` offers (see native/src/sim/python.rs)."""

    def run_until(self, horizon_ps: int) -> bool: ...
    @property
    def now_ps(self) -> int: ...
    @property
    def events_processed(self) -> int: ...
    def flow_results(self) -> dict[str, npt.NDArray[Any]]: ...
    def counters(self) -> dict[str, int]: ...
    def check_deadlock(self) -> list[tuple[int, int]] | None: ...
    def invariants(self) -> list[tuple[str, bool, str]]: ...


def native_engine(network: SimNetwork, workload: Workload, config: SimConfig) -> NativeEngine:
    from fatpaths_cfg import _native

    # Looked up by name: the extension's type stub is maintained with the crate's other entry
    # points, and this keeps the simulator's Python side typed through the protocol above.
    factory: Callable[..., NativeEngine] = vars(_native)["PacketSimulator"]
    return factory(
        config.network_for(network).native_dict(),
        workload.native_dict(),
        config.native_dict(network),
    )


class _Clock:
    """Wall and CPU time since it was made."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


# Simulated time's representation ends near 1.8e19 ps; a doubled slice stays well inside it.
_MAX_SLICE_PS = 1 << 60


def simulate(
    network: SimNetwork,
    workload: Workload,
    config: SimConfig,
    progress: ProgressCallback | None = None,
    *,
    slices: int = 200,
) -> SimResult:
    """Simulate `workload` on `network`; `progress(now_ps, end_ps or None)` is called per slice."""
    if workload.n_flows and int(max(workload.src.max(), workload.dst.max())) >= network.n_hosts:
        raise ValueError(f"workload names hosts beyond the network's {network.n_hosts}")
    clock = _Clock()
    engine = native_engine(network, workload, config)
    end_ps = None if config.duration_us is None else round(config.duration_us * 1e6)
    deadlock: dict[str, object] | None = None
    # Unknown end: advance in 10 us of simulated time so the progress display stays live. The
    # slices are also the deadlock checks of lossless runs.
    step = max(1, end_ps // slices) if end_ps is not None else 10_000_000
    t = 0
    # A slice in which nothing happened (the next flow starts much later) doubles the next
    # one: the engine jumps from event to event anyway, and idle simulated time must not cost
    # a slice per 10 us (a flow starting at 9e18 ps took 10^11 of them).
    idle_step, events = step, -1
    while end_ps is None or t < end_ps:
        t = t + idle_step if end_ps is None else min(end_ps, t + idle_step)
        more = engine.run_until(t)
        done = engine.events_processed
        idle_step = step if done != events else min(idle_step * 2, _MAX_SLICE_PS)
        events = done
        if progress:
            progress(engine.now_ps if end_ps is None else t, end_ps)
        if config.lossless:
            deadlock = _deadlock(engine, network)
        if not more or deadlock is not None:
            break
    wall, cpu = clock.elapsed()
    flows = {k: np.asarray(v) for k, v in engine.flow_results().items()}
    if workload.after is not None or workload.phase is not None:
        # Chained flows started when their predecessor finished, a loop's at their barrier:
        # statistics count from then.
        started = flows["start_ps"]
        workload = replace(workload, start_ps=np.where(started >= 0, started, workload.start_ps))
    return SimResult(
        network_name=network.name,
        n_hosts=network.n_hosts,
        workload=workload,
        # With the virtual channels the run resolved for this network.
        config={**config.resolved(), "channels": config.native_dict(network)["channels"]},
        flows=flows,
        counters=dict(engine.counters()),
        wall_seconds=wall,
        cpu_seconds=cpu,
        peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        n_layers=network.n_layers,
        deadlock=deadlock,
        warmup_ps=round(config.warmup_us * 1e6),
        invariants=[Invariant(name, holds, detail) for name, holds, detail in engine.invariants()],
    )


def _deadlock(engine: NativeEngine, network: SimNetwork) -> dict[str, object] | None:
    """The engine's confirmed deadlock as the cycle of paused links, by switch name."""
    cycle = engine.check_deadlock()
    if not cycle:
        return None
    links = []
    for port, priority in cycle:
        a, b = network.port_ends(port)
        links.append({"from": a, "to": b, "priority": priority})
    return {"at_us": engine.now_ps / 1e6, "cycle": links}
