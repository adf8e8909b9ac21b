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

    def __post_init__(self) -> None:
        n = len(self.src)
        if not (len(self.dst) == len(self.size) == len(self.start_ps) == n):
            raise WorkloadError("src, dst, size and start_ps differ in length")
        if self.after is not None and len(self.after) != n:
            raise WorkloadError("after needs one entry per flow")

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
    sizes = np.array([s for s, _ in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    probs = np.array([p for _, p in WEBSEARCH_CDF_PACKETS], dtype=np.float64)
    u = rng.random(count)
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
    if isinstance(spec, int):
        if spec <= 0:
            raise WorkloadError(f"flow size {spec} must be positive")
        return np.full(count, spec, dtype=np.int64)
    if spec == "websearch":
        return websearch_sizes(count, rng)
    if spec == "websearch-sc20":
        table = websearch_sc20_table()
        return table[rng.integers(0, len(table), size=count)]
    return np.full(count, parse_bytes(spec), dtype=np.int64)


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
    permutation first (the pattern is then applied to logical ranks).
    """
    rng = np.random.default_rng(seed)
    n = network.n_hosts
    try:
        pattern = canonical(pattern)
    except PatternError as exc:
        raise WorkloadError(str(exc)) from None
    peers = pattern_peers(network, pattern, rng, offset=offset)
    mapping = rng.permutation(n).astype(np.int64) if randomize_mapping else np.arange(n)
    sources = np.arange(n) if active_hosts is None else np.asarray(active_hosts, dtype=np.int64)
    src_list: list[IntArray] = []
    dst_list: list[IntArray] = []
    start_list: list[IntArray] = []
    if arrival_rate is None:
        for h in sources:
            p = peers[h] if pattern != "uniform" else rng.integers(0, n - 1, size=1)
            if pattern == "uniform":
                p = p + (p >= h)
            src_list.append(np.full(len(p), h, dtype=np.int64))
            dst_list.append(np.asarray(p, dtype=np.int64))
            start_list.append(np.zeros(len(p), dtype=np.int64))
    else:
        if duration_ps is None or duration_ps <= 0:
            raise WorkloadError("Poisson arrivals need a positive duration")
        if arrival_rate <= 0:
            raise WorkloadError(f"arrival rate {arrival_rate} must be positive")
        seconds = duration_ps / 1e12
        counts = rng.poisson(arrival_rate * seconds, size=len(sources))
        for h, c in zip(sources, counts, strict=True):
            if c == 0:
                continue
            if pattern == "uniform":
                p = rng.integers(0, n - 1, size=c)
                p = p + (p >= h)
            elif len(peers[h]) == 0:
                continue
            else:
                p = peers[h][rng.integers(0, len(peers[h]), size=c)]
            src_list.append(np.full(c, h, dtype=np.int64))
            dst_list.append(p.astype(np.int64))
            start_list.append(np.sort(rng.integers(0, duration_ps, size=c)))
    if not src_list:
        raise WorkloadError(f"pattern {pattern!r} produced no flows on {n} hosts")
    src = mapping[np.concatenate(src_list)]
    dst = mapping[np.concatenate(dst_list)]
    start = np.concatenate(start_list)
    order = np.argsort(start, kind="stable")
    src, dst, start = src[order], dst[order], start[order]
    return Workload(
        src=src.astype(np.int32),
        dst=dst.astype(np.int32),
        size=flow_sizes(sizes, len(src), rng),
        start_ps=start.astype(np.int64),
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
    rng = np.random.default_rng(seed)
    try:
        pattern = canonical(pattern)
    except PatternError as exc:
        raise WorkloadError(str(exc)) from None
    peers = pattern_peers(network, pattern, rng, offset=offset)
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
