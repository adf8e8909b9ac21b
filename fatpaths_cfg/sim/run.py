"""Run one simulation: a network, a workload and a configuration in; a `SimResult` out."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from .network import SimNetwork
from .results import SimResult
from .workloads import Workload

TRANSPORTS = ("ndp", "tcp", "dctcp")
# `minimal` is single-path minimal routing; `ecmp`, `letflow` and `spray` spread over every
# equal-cost minimal path of the full network; `fatpaths` uses the compiled layers.
LOAD_BALANCING = ("minimal", "ecmp", "letflow", "spray", "fatpaths")
# How FatPaths picks layers (native/src/sim/layers.rs): `adaptive` scores layers per flow and
# moves on congestion signals; `uniform` is the memoryless baseline.
LAYER_POLICIES = ("adaptive", "uniform")

# Per-transport defaults from the papers (docs/simulator.md, Transports): NDP runs shallow 8-packet
# trimming queues with an 8-packet first window; TCP and DCTCP 100-packet tail-drop queues,
# DCTCP marking above 33 packets.
_DEFAULT_QUEUE = {"ndp": 8, "tcp": 100, "dctcp": 100}
_DEFAULT_ECN = {"ndp": 0, "tcp": 0, "dctcp": 33}
_DEFAULT_WINDOW = {"ndp": 8, "tcp": 10, "dctcp": 10}

ProgressCallback = Callable[[int, int | None], None]


@dataclass(frozen=True)
class SimConfig:
    transport: str = "ndp"
    load_balancing: str = "spray"
    mtu: int = 9000
    header: int = 64
    queue_packets: int | None = None
    ecn_threshold_packets: int | None = None
    initial_window: int | None = None
    min_rto_us: float = 1000.0
    flowlet_gap_us: float = 50.0
    pull_rate: float = 0.99
    # Layers (1-based ids) FatPaths picks from; None = all layers of the network.
    fatpaths_layers: tuple[int, ...] | None = None
    layer_policy: str = "adaptive"
    # TCP/DCTCP: spread each window over one smoothed RTT instead of line-rate bursts.
    tcp_pacing: bool = False
    # Baselines (minimal, ecmp, letflow, spray) route on the full network's minimal paths; when
    # False they use the compiled layer 1 as it is (the behaviour before baselines were fair).
    baselines_on_full_network: bool = True
    # Stop at this simulated time; None runs until every flow is done.
    duration_us: float | None = None
    # Flows starting earlier are simulated but left out of the statistics.
    warmup_us: float = 0.0
    seed: int = 1

    def __post_init__(self) -> None:
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
        if not 0 < self.pull_rate <= 1:
            raise ValueError("pull_rate must lie in (0, 1]")

    def resolved(self) -> dict[str, object]:
        """Every parameter with per-transport defaults filled in (as recorded in summaries)."""
        d = asdict(self)
        d["queue_packets"] = self.queue_packets or _DEFAULT_QUEUE[self.transport]
        d["ecn_threshold_packets"] = (
            self.ecn_threshold_packets
            if self.ecn_threshold_packets is not None
            else _DEFAULT_ECN[self.transport]
        )
        d["initial_window"] = self.initial_window or _DEFAULT_WINDOW[self.transport]
        return d

    def native_dict(self, network: SimNetwork) -> dict[str, object]:
        r = self.resolved()
        layers = self.fatpaths_layers or tuple(range(1, network.n_layers + 1))
        if self.load_balancing != "fatpaths":
            layers = (1,)
        bad = [x for x in layers if not 1 <= x <= network.n_layers]
        if bad:
            raise ValueError(f"fatpaths layers {bad} outside 1..{network.n_layers}")
        return {
            "transport": self.transport,
            # `minimal` is ECMP's fixed per-flow path on a network with one next hop per switch.
            "load_balancing": "ecmp" if self.load_balancing == "minimal" else self.load_balancing,
            "layer_policy": self.layer_policy,
            "tcp_pacing": self.tcp_pacing,
            "mtu": self.mtu,
            "header": self.header,
            "queue_packets": r["queue_packets"],
            "ecn_threshold_packets": r["ecn_threshold_packets"],
            "initial_window": r["initial_window"],
            "min_rto_ps": round(self.min_rto_us * 1e6),
            "flowlet_gap_ps": round(self.flowlet_gap_us * 1e6),
            "pull_rate": self.pull_rate,
            "fatpaths_layers": [x - 1 for x in layers],
            "seed": self.seed,
        }

    def network_for(self, network: SimNetwork) -> SimNetwork:
        """The network this scheme routes on: the compiled layers for FatPaths, the full
        network's minimal paths for the baselines (unless `baselines_on_full_network` is off)."""
        if self.load_balancing == "fatpaths" or not self.baselines_on_full_network:
            return network
        return network.baseline(multipath=self.load_balancing != "minimal")

    def with_lb(self, load_balancing: str) -> SimConfig:
        return replace(self, load_balancing=load_balancing)


class NativeEngine(Protocol):
    """What `fatpaths_cfg._native.PacketSimulator` offers (see native/src/sim/python.rs)."""

    def run_until(self, horizon_ps: int) -> bool: ...
    @property
    def now_ps(self) -> int: ...
    def flow_results(self) -> dict[str, npt.NDArray[Any]]: ...
    def counters(self) -> dict[str, int]: ...


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


@dataclass
class _Clock:
    wall: float = field(default_factory=time.perf_counter)
    cpu: float = field(default_factory=time.process_time)

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


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
    if end_ps is not None:
        step = max(1, end_ps // slices)
        t = 0
        while t < end_ps:
            t = min(end_ps, t + step)
            more = engine.run_until(t)
            if progress:
                progress(t, end_ps)
            if not more:
                break
    else:
        # Unknown end: advance in 10 us of simulated time so the progress display stays live.
        step = 10_000_000
        t = 0
        while engine.run_until(t):
            if progress:
                progress(engine.now_ps, None)
            t += step
    wall, cpu = clock.elapsed()
    flows = {k: np.asarray(v) for k, v in engine.flow_results().items()}
    return SimResult(
        network_name=network.name,
        n_hosts=network.n_hosts,
        workload=workload,
        config=config.resolved(),
        flows=flows,
        counters=dict(engine.counters()),
        wall_seconds=wall,
        cpu_seconds=cpu,
        peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        n_layers=network.n_layers,
        warmup_ps=round(config.warmup_us * 1e6),
    )
