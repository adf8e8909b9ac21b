"""Workloads: who sends to whom (a traffic pattern), how much (flow sizes) and when (arrivals).

Patterns follow FatPaths' evaluation (docs/simulator.md, Workloads). A pattern maps every source
host to the destinations it talks to; with Poisson arrivals each new flow of a host picks one of
them at random, otherwise each (source, destination) pair carries one flow starting at time zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.support.stable_hash import mix64, salt, stream, unit_draws
from fatpaths_cfg.traffic_patterns import PATTERNS, PatternError, PatternSite, canonical
from fatpaths_cfg.traffic_patterns import pattern_peers as shared_pattern_peers

from .network import SimNetwork

__all__ = [
    "PATTERNS",
    "Workload",
    "WorkloadError",
    "make_workload",
    "pattern_peers",
    "rpc_workload",
]

# pFabric's web-search flow-size CDF (from the DCTCP paper's measurements), in 1460-byte
# packets: (size, cumulative probability). Sizes in between are interpolated linearly.
WEBSEARCH_CDF_PACKETS = (
    (6, 0.0),
    (6, 0.15),
    (13, 0.2),
    (19, 0.3),
    (33, 0.4),
    (53, 0.53),
    (133, 0.6),
    (667, 0.7),
    (1333, 0.8),
    (3333, 0.9),
    (6667, 0.97),
    (20000, 1.0),
)
WEBSEARCH_PACKET_BYTES = 1460

IntArray = npt.NDArray[np.int64]


class WorkloadError(ValueError):
    """A workload that cannot be built for this network (pattern, sizes or arrivals)."""


@dataclass(frozen=True)
class Workload:
    src: npt.NDArray[np.int32]
    dst: npt.NDArray[np.int32]
    size: npt.NDArray[np.int64]
    start_ps: npt.NDArray[np.int64]
    description: dict[str, object] = field(default_factory=dict)
    # Chained flows: flow i starts start_ps[i] after flow after[i] finished at its receiver
    # (-1: at start_ps[i]); None when no flow waits for another.
    after: npt.NDArray[np.int32] | None = None
    # Application loops: flow i's iteration; iteration k starts start_ps after the last flow
    # of iteration k - 1 finished (a barrier; see `loops`). None: no loop.
    phase: npt.NDArray[np.int32] | None = None

    def __post_init__(self) -> None:
        n = len(self.src)
        if not (len(self.dst) == len(self.size) == len(self.start_ps) == n):
            raise WorkloadError("src, dst, size and start_ps differ in length")
        if self.after is not None and len(self.after) != n:
            raise WorkloadError("after needs one entry per flow")
        if self.phase is not None and len(self.phase) != n:
            raise WorkloadError("phase needs one entry per flow")

    def rounds(self) -> npt.NDArray[np.int64] | None:
        """RPC workloads: [round, (request, response)] flow indices, else None."""
        pairs = self.description.get("rpc_rounds")
        if not isinstance(pairs, int) or self.after is None:
            return None
        return np.arange(self.n_flows, dtype=np.int64).reshape(-1, 2)

    @property
    def n_flows(self) -> int:
        return len(self.src)

    def native_dict(self) -> dict[str, npt.NDArray[np.int32] | npt.NDArray[np.int64]]:
        d: dict[str, npt.NDArray[np.int32] | npt.NDArray[np.int64]] = {
            "src": np.ascontiguousarray(self.src, dtype=np.int32),
            "dst": np.ascontiguousarray(self.dst, dtype=np.int32),
            "size": np.ascontiguousarray(self.size, dtype=np.int64),
            "start_ps": np.ascontiguousarray(self.start_ps, dtype=np.int64),
        }
        if self.after is not None:
            d["after"] = np.ascontiguousarray(self.after, dtype=np.int32)
        if self.phase is not None:
            d["phase"] = np.ascontiguousarray(self.phase, dtype=np.int32)
        return d


# ---- patterns ----------------------------------------------------------------------------------


def pattern_site(network: SimNetwork) -> PatternSite:
    generator = network.meta.get("generator")
    return PatternSite(
        host_switch=network.host_switch.astype(np.int64),
        dist=network.dist[0],
        generator=generator if isinstance(generator, dict) else None,
    )


def pattern_peers(
    network: SimNetwork,
    pattern: str,
    rng: np.random.Generator,
    *,
    offset: int | None = None,
) -> list[IntArray]:
    """For every host, the hosts it sends to under `pattern` (empty: the host stays idle)."""
    try:
        return shared_pattern_peers(pattern_site(network), pattern, rng, offset=offset)
    except PatternError as exc:
        raise WorkloadError(str(exc)) from None


# ---- sizes and arrivals ------------------------------------------------------------------------


def websearch_sizes(count: int, rng: np.random.Generator) -> IntArray:
    """Flow sizes in bytes drawn from the pFabric web-search CDF (inverse transform)."""
    return websearch_sizes_at(rng.random(count))


def websearch_sizes_at(u: npt.NDArray[np.float64]) -> IntArray:
    """The web-search sizes at uniform draws `u` in [0, 1) (inverse transform)."""
    sizes = np.array([s for s, _ in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    probs = np.array([p for _, p in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    packets = np.interp(u, probs, sizes)
    return np.maximum(1, np.round(packets * WEBSEARCH_PACKET_BYTES)).astype(np.int64)


def websearch_mean_bytes() -> float:
    """Mean of the interpolated web-search distribution (about 1.7 MB)."""
    sizes = np.array([s for s, _ in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    probs = np.array([p for _, p in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    mids = (sizes[1:] + sizes[:-1]) / 2
    return float(np.sum(mids * np.diff(probs)) * WEBSEARCH_PACKET_BYTES)


# The FatPaths paper's web-search sizes: the pFabric CDF "discretized to 20" sizes with "an
# average flow size of 1MB" (Section VII-A). The paper gives no table, so this reconstruction
# takes the 20 equiprobable quantile midpoints of the interpolated CDF and clips them at 5 MB,
# the cap that brings the mean to about 1 MB (1.07 MB; unclipped, the 20 points average 1.55 MB).
SC20_POINTS = 20
SC20_CLIP_BYTES = 5_000_000


def websearch_sc20_table() -> IntArray:
    """The 20 equally likely flow sizes of the paper's discretised web-search distribution."""
    sizes = np.array([s for s, _ in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    probs = np.array([p for _, p in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    quantiles = (np.arange(SC20_POINTS) + 0.5) / SC20_POINTS
    table = np.round(np.interp(quantiles, probs, sizes) * WEBSEARCH_PACKET_BYTES)
    return np.minimum(table, SC20_CLIP_BYTES).astype(np.int64)


def flow_sizes(spec: str | int, count: int, rng: np.random.Generator) -> IntArray:
    return flow_sizes_at(spec, rng.random(count))


# Flow-size distributions by name; any other size is a byte count (1500, 64KiB, 2MB).
SIZE_DISTRIBUTIONS = ("websearch", "websearch-sc20")


def flow_sizes_at(spec: str | int, u: npt.NDArray[np.float64]) -> IntArray:
    """The sizes `spec` gives at uniform draws `u` in [0, 1), one flow per draw."""
    if isinstance(spec, int):
        if spec <= 0:
            raise WorkloadError(f"flow size {spec} must be positive")
        return np.full(len(u), spec, dtype=np.int64)
    if spec == "websearch":
        return websearch_sizes_at(u)
    if spec == "websearch-sc20":
        table = websearch_sc20_table()
        return table[np.minimum((u * len(table)).astype(np.int64), len(table) - 1)]
    return np.full(len(u), parse_bytes(spec), dtype=np.int64)


_UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


def parse_bytes(text: str) -> int:
    """'2MB' -> 2000000, '64KiB' -> 65536, '1500' -> 1500."""
    s = text.strip().lower().replace(" ", "")
    number = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = s[len(number) :] or "b"
    if unit not in _UNITS or not number:
        raise WorkloadError(f"cannot read size {text!r}; use e.g. 1500, 64KiB, 2MB or websearch")
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise WorkloadError(
            f"cannot read size {text!r}; use e.g. 1500, 64KiB, 2MB or websearch"
        ) from None
    if not math.isfinite(value) or value < 1:
        raise WorkloadError(f"size {text!r} must be at least one byte")
    if value > MAX_FLOW_BYTES:
        raise WorkloadError(f"size {text!r} is above {MAX_FLOW_BYTES:,} bytes (2^53)")
    return round(value)


# A flow's bytes must stay exact as a float (the statistics divide them).
MAX_FLOW_BYTES = 2**53


_TIME_UNITS = {"ps": 1, "ns": 1000, "us": 1000**2, "ms": 1000**3, "s": 1000**4}


def parse_duration_ps(text: str) -> int:
    """'10ms' -> 10_000_000_000 (picoseconds); a bare number is microseconds."""
    s = text.strip().lower().replace(" ", "")
    number = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = s[len(number) :] or "us"
    if unit not in _TIME_UNITS or not number:
        raise WorkloadError(f"cannot read duration {text!r}; use e.g. 500us, 10ms or 1s")
    return round(float(number) * _TIME_UNITS[unit])


# The named random streams of a workload (see `fatpaths_cfg.support.stable_hash`): each knob
# changes only what it names. The pattern's peers and the host relabelling are streams of
# their own; the destination and size of the k-th flow of source h are draws keyed by (h, k),
# so a different arrival rate, duration or set of active hosts adds or removes flows at the end
# of a source's sequence but never moves the destination or size of the flows both runs share.
PATTERN_STREAM = "simulate.workload.pattern"
MAPPING_STREAM = "simulate.workload.mapping"
ARRIVALS_STREAM = "simulate.workload.arrivals"
DESTINATIONS_STREAM = "simulate.workload.destinations"
SIZES_STREAM = "simulate.workload.sizes"


def flow_draws(seed: int, name: str, sources: IntArray, ranks: IntArray) -> npt.NDArray[np.float64]:
    """A uniform draw in [0, 1) for the `ranks[i]`-th flow of source `sources[i]` in stream
    `name`: the same for that flow whatever other flows the workload holds."""
    keys = (sources.astype(np.uint64) << np.uint64(32)) | ranks.astype(np.uint64)
    return unit_draws(mix64(keys), salt(name, seed))


def source_ranks(counts: IntArray) -> IntArray:
    """0, 1, ... c-1 for each count c in turn: each flow's rank among its source's flows."""
    total = int(counts.sum())
    firsts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - firsts


def make_workload(
    network: SimNetwork,
    pattern: str,
    sizes: str | int,
    *,
    seed: int,
    arrival_rate: float | None = None,
    duration_ps: int | None = None,
    randomize_mapping: bool = False,
    offset: int | None = None,
    active_hosts: Sequence[int] | None = None,
) -> Workload:
    """Build a workload.

    Without `arrival_rate`, every (source, peer) pair of the pattern carries one flow at t=0.
    With it, each source starts flows as a Poisson process of `arrival_rate` flows per second
    over `duration_ps`, each to a random peer. `randomize_mapping` relabels hosts by a random
    permutation first (the pattern is then applied to logical ranks). Every random choice has a
    stream of its own (`PATTERN_STREAM` and below), so the arrival rate changes when flows
    start and how many there are, never where the k-th flow of a source goes or its size.
    """
    n = network.n_hosts
    try:
        pattern = canonical(pattern)
    except PatternError as exc:
        raise WorkloadError(str(exc)) from None
    if pattern == "uniform" and n < 2:
        raise WorkloadError(f"pattern 'uniform' needs at least 2 hosts, not {n}")
    peers = pattern_peers(network, pattern, stream(seed, PATTERN_STREAM), offset=offset)
    mapping = (
        stream(seed, MAPPING_STREAM).permutation(n).astype(np.int64)
        if randomize_mapping
        else np.arange(n)
    )
    sources = np.arange(n) if active_hosts is None else np.asarray(active_hosts, dtype=np.int64)
    if arrival_rate is None:
        # One flow per (source, peer) at t=0; `uniform` gives each source one random peer.
        counts = np.array(
            [1 if pattern == "uniform" else len(peers[h]) for h in sources], dtype=np.int64
        )
        start = np.zeros(int(counts.sum()), dtype=np.int64)
    else:
        if duration_ps is None or duration_ps <= 0:
            raise WorkloadError("Poisson arrivals need a positive duration")
        if arrival_rate <= 0:
            raise WorkloadError(f"arrival rate {arrival_rate} must be positive")
        arrivals = stream(seed, ARRIVALS_STREAM)
        counts = arrivals.poisson(arrival_rate * duration_ps / 1e12, size=len(sources))
        if pattern != "uniform":
            # A host the pattern leaves idle starts nothing.
            counts = np.where([len(peers[h]) > 0 for h in sources], counts, 0).astype(np.int64)
        start = np.concatenate(
            [np.sort(arrivals.integers(0, duration_ps, size=c)) for c in counts]
            or [np.zeros(0, dtype=np.int64)]
        ).astype(np.int64)
    src_logical = np.repeat(sources.astype(np.int64), counts)
    if len(src_logical) == 0:
        raise WorkloadError(f"pattern {pattern!r} produced no flows on {n} hosts")
    ranks = source_ranks(counts)
    u = flow_draws(seed, DESTINATIONS_STREAM, src_logical, ranks)
    if pattern == "uniform":
        pick = (u * (n - 1)).astype(np.int64)
        dst_logical = pick + (pick >= src_logical)
    elif arrival_rate is None:
        # Every peer once, in the pattern's order.
        dst_logical = np.concatenate([peers[h] for h in sources if len(peers[h])]).astype(np.int64)
    else:
        lengths = np.array([len(p) for p in peers], dtype=np.int64)
        flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in peers])
        first = np.cumsum(lengths) - lengths
        per_flow = lengths[src_logical]
        index = np.minimum((u * per_flow).astype(np.int64), per_flow - 1)
        dst_logical = flat[first[src_logical] + index]
    size = flow_sizes_at(sizes, flow_draws(seed, SIZES_STREAM, src_logical, ranks))
    order = np.argsort(start, kind="stable")
    src, dst = mapping[src_logical][order], mapping[dst_logical][order]
    return Workload(
        src=src.astype(np.int32),
        dst=dst.astype(np.int32),
        size=size[order],
        start_ps=start[order],
        description={
            "pattern": pattern,
            "sizes": sizes,
            "arrival_rate": arrival_rate,
            "duration_ps": duration_ps,
            "randomize_mapping": randomize_mapping,
            "seed": seed,
        },
    )


def rpc_workload(
    network: SimNetwork,
    *,
    rounds: int,
    request_bytes: int,
    response_bytes: int,
    seed: int,
    pattern: str = "permutation",
    offset: int | None = None,
    active_hosts: Sequence[int] | None = None,
) -> Workload:
    """Ping-pong RPCs: every host is the client of its first peer under `pattern` and runs
    `rounds` rounds, each a request to the server and, once the server holds it, a response
    back; the next request leaves once the response arrived. Flows 2k and 2k + 1 are a round's
    request and response (`Workload.rounds`)."""
    if rounds < 1:
        raise WorkloadError(f"rpc rounds {rounds} must be at least 1")
    if request_bytes <= 0 or response_bytes <= 0:
        raise WorkloadError("rpc request and response sizes must be positive")
    try:
        pattern = canonical(pattern)
    except PatternError as exc:
        raise WorkloadError(str(exc)) from None
    # The same peers as `make_workload` draws for this pattern and seed.
    peers = pattern_peers(network, pattern, stream(seed, PATTERN_STREAM), offset=offset)
    clients = range(network.n_hosts) if active_hosts is None else active_hosts
    pairs = [(int(h), int(peers[h][0])) for h in clients if len(peers[h])]
    if not pairs:
        raise WorkloadError(f"pattern {pattern!r} gives no rpc client a server")
    src: list[int] = []
    dst: list[int] = []
    size: list[int] = []
    after: list[int] = []
    for client, server in pairs:
        for r in range(rounds):
            i = len(src)
            src += [client, server]
            dst += [server, client]
            size += [request_bytes, response_bytes]
            after += [i - 1 if r else -1, i]
    n = len(src)
    return Workload(
        src=np.asarray(src, dtype=np.int32),
        dst=np.asarray(dst, dtype=np.int32),
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.zeros(n, dtype=np.int64),
        after=np.asarray(after, dtype=np.int32),
        description={
            "pattern": pattern,
            "rpc_rounds": rounds,
            "request_bytes": request_bytes,
            "response_bytes": response_bytes,
            "seed": seed,
        },
    )
