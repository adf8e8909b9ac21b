"""What a run produced: per-flow outcomes, whole-run counters, and the summaries users read.

FCT is measured at the receiver: from the flow's start to the moment its last byte arrived.
`sender_done` (the source saw every byte acknowledged, htsim's "finished at") is kept too.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from pathlib import Path

from .loops import iteration_times_ps
from .stats import median, percentile
from .workloads import Workload

# Flow-size buckets for per-size FCT statistics: [lower, upper) in bytes.
SIZE_BUCKETS = (
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    ("1MB-10MB", 1_000_000, 10_000_000),
    (">=10MB", 10_000_000, None),
)

FloatArray = npt.NDArray[np.float64]

# "Latency" in summaries: the FCT of flows that fit in one packet (size <= the MTU's payload),
# which carry no congestion-window or load-balancing effect, only queueing and hops.
LATENCY_DEFINITION = "FCT of one-packet flows (size <= mtu payload bytes)"
DEFAULT_MTU = 9000


def _throughput_stats(gbps: FloatArray) -> dict[str, float | int | None]:
    """Throughput per flow (size / FCT) of finished flows: mean, median and the 1% tail (the
    1st percentile: 99% of flows were faster), the FatPaths paper's Figure 2 axes."""
    done = gbps[np.isfinite(gbps)]
    if len(done) == 0:
        return {"count": 0, "mean": None, "median": None, "p1": None}
    return {
        "count": len(done),
        "mean": float(np.mean(done)),
        "median": median(done),
        "p1": percentile(done, 1),
    }


def _stats_us(values_ps: FloatArray) -> dict[str, float | int | None]:
    done = values_ps[np.isfinite(values_ps)]
    if len(done) == 0:
        return {"count": 0, "mean_us": None, "median_us": None, "p99_us": None, "max_us": None}
    us = done / 1e6
    return {
        "count": len(us),
        "mean_us": float(np.mean(us)),
        "median_us": median(us),
        "p99_us": percentile(us, 99),
        "max_us": float(np.max(us)),
    }


def _stats_with_unfinished_us(
    fct_ps: FloatArray, elapsed_ps: FloatArray
) -> dict[str, float | int | bool | None]:
    """FCT statistics over every flow, an unfinished one counted at the time it has run so
    far: lower bounds (`lower_bound`) whenever a flow is unfinished, never a silent drop-out."""
    unfinished = ~np.isfinite(fct_ps)
    values = np.where(unfinished, elapsed_ps, fct_ps)
    stats = _stats_us(values)
    return {**stats, "unfinished": int(np.sum(unfinished)), "lower_bound": bool(np.any(unfinished))}


def layer_list(mask: int) -> str:
    """Layer bit mask -> '1;3' (1-based layer ids, as in fabric.json)."""
    return ";".join(str(i + 1) for i in range(64) if mask >> i & 1)


# A run whose spurious retransmissions exceed this share of its data packets gets a warning.
SPURIOUS_WARNING_SHARE = 0.01


@dataclass(frozen=True)
class Invariant:
    """An accounting identity the engine checked at the end of the run (see
    native/src/sim/invariants.rs); `detail` says how it failed."""

    name: str
    holds: bool
    detail: str = ""


@dataclass
class SimResult:
    network_name: str
    n_hosts: int
    workload: Workload
    config: dict[str, object]
    flows: dict[str, npt.NDArray[np.int64] | npt.NDArray[np.uint64]]
    counters: dict[str, int]
    wall_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    # Layers of the network the run had (FatPaths picks among them; the others use layer 1).
    n_layers: int = 1
    # A lossless run that stopped in a deadlock: when, and the cycle of paused links.
    deadlock: dict[str, object] | None = None
    # Flows starting before this time are warm-up: simulated, but left out of the statistics.
    warmup_ps: int = 0
    invariants: list[Invariant] = field(default_factory=list)

    @property
    def measured(self) -> npt.NDArray[np.bool_]:
        """Flows the statistics cover: those that start after the warm-up."""
        return np.asarray(self.workload.start_ps) >= self.warmup_ps

    def elapsed_ps(self) -> FloatArray:
        """Per flow: how long it has run when the simulation stopped (its FCT when finished)."""
        end = float(self.counters.get("now_ps", 0))
        return np.maximum(end - self.workload.start_ps.astype(np.float64), 0.0)

    @property
    def finished(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.flows["finish_ps"]) >= 0

    def fct_ps(self) -> FloatArray:
        """Flow completion times in ps; NaN for flows that did not finish."""
        finish = np.asarray(self.flows["finish_ps"], dtype=np.float64)
        fct = finish - self.workload.start_ps.astype(np.float64)
        fct[finish < 0] = np.nan
        return fct

    def sender_fct_ps(self) -> FloatArray:
        done = np.asarray(self.flows["sender_done_ps"], dtype=np.float64)
        fct = done - self.workload.start_ps.astype(np.float64)
        fct[done < 0] = np.nan
        return fct

    def round_times_ps(self) -> FloatArray | None:
        """RPC workloads: per round, from the request leaving to the response arriving (NaN for
        rounds that did not finish); None for other workloads."""
        rounds = self.workload.rounds()
        if rounds is None:
            return None
        finish = np.asarray(self.flows["finish_ps"], dtype=np.float64)[rounds[:, 1]]
        times = finish - self.workload.start_ps.astype(np.float64)[rounds[:, 0]]
        times[finish < 0] = np.nan
        return times

    def throughput_gbps(self) -> FloatArray:
        """Per finished flow: size / FCT."""
        fct = self.fct_ps()
        return self.workload.size.astype(np.float64) * 8 / (fct / 1e12) / 1e9

    def summary(self) -> dict[str, object]:
        measured = self.measured
        fct = self.fct_ps()[measured]
        elapsed = self.elapsed_ps()[measured]
        sizes = self.workload.size[measured]
        all_tput = self.throughput_gbps()[measured]
        buckets: dict[str, object] = {}
        tput_buckets: dict[str, object] = {}
        for name, lo, hi in SIZE_BUCKETS:
            sel = (sizes >= lo) & (sizes < hi if hi is not None else True)
            if np.any(sel):
                buckets[name] = _stats_us(fct[sel])
                tput_buckets[name] = _throughput_stats(all_tput[sel])
        tput = all_tput[np.isfinite(all_tput)]
        given_mtu = self.config.get("mtu")
        mtu = given_mtu if isinstance(given_mtu, int) else DEFAULT_MTU
        finished = int(np.sum(self.finished[measured]))
        c = self.counters
        events = int(c.get("events", 0))
        return {
            "network": self.network_name,
            "hosts": self.n_hosts,
            "layers": self.n_layers,
            "workload": self.workload.description,
            "config": self.config,
            "flows": int(self.workload.n_flows),
            "warmup_us": self.warmup_ps / 1e6,
            "flows_warmup": int(self.workload.n_flows - np.sum(measured)),
            "flows_measured": int(np.sum(measured)),
            "flows_finished": finished,
            "flows_unfinished": int(np.sum(measured)) - finished,
            # Finished flows only; "fct_with_unfinished" counts the others too.
            "fct": _stats_us(fct),
            "fct_with_unfinished": _stats_with_unfinished_us(fct, elapsed),
            "fct_by_size": buckets,
            "throughput_by_size_gbps": tput_buckets,
            "latency": {
                "definition": LATENCY_DEFINITION,
                "mtu": mtu,
                **_stats_us(fct[sizes <= mtu]),
            },
            "sender_fct": _stats_us(self.sender_fct_ps()[measured]),
            "throughput_gbps": {
                "mean": float(np.mean(tput)) if len(tput) else None,
                "median": median(tput) if len(tput) else None,
                "p1": percentile(tput, 1) if len(tput) else None,
            },
            **self._rounds_summary(),
            **self._loop_summary(),
            "simulated_us": int(c.get("now_ps", 0)) / 1e6,
            "events": events,
            "events_per_second": events / self.cpu_seconds if self.cpu_seconds > 0 else None,
            "wall_seconds": self.wall_seconds,
            "cpu_seconds": self.cpu_seconds,
            "peak_rss_mb": self.peak_rss_bytes / 2**20,
            "retransmissions": int(np.sum(self.flows["retransmits"])),
            "spurious_retransmissions": int(c.get("spurious_retransmissions", 0)),
            "invariants": {i.name: {"holds": i.holds, "detail": i.detail} for i in self.invariants},
            "counters": c,
            "deadlock": self.deadlock,
        }

    def warnings(self, host_names: list[str] | None = None) -> list[str]:
        """What makes the run's figures doubtful: broken invariants, and spurious
        retransmissions above 1% of the data packets sent, naming the worst flow and its host."""
        out = [f"invariant {i.name} broken: {i.detail}" for i in self.invariants if not i.holds]
        spurious = int(self.counters.get("spurious_retransmissions", 0))
        sent = int(self.counters.get("data_packets_sent", 0))
        if sent and spurious > SPURIOUS_WARNING_SHARE * sent:
            per_flow = np.asarray(self.flows["spurious"])
            worst = int(np.argmax(per_flow))
            src = int(self.workload.src[worst])
            host = host_names[src] if host_names else str(src)
            out.append(
                f"{spurious:,} spurious retransmissions, {spurious / sent:.1%} of "
                f"{sent:,} data packets; most from host {host}, flow {worst} "
                f"({int(per_flow[worst]):,} of its {int(self.flows['packets_sent'][worst]):,}); "
                "timeouts fired before their ACKs could return: --min-rto-us and "
                "--initial-rto-us set how long a sender waits"
            )
        return out

    def _rounds_summary(self) -> dict[str, object]:
        times = self.round_times_ps()
        if times is None:
            return {}
        done = times[np.isfinite(times)]
        return {"rounds": len(times), "rounds_finished": len(done), "round_time": _stats_us(done)}

    def _loop_summary(self) -> dict[str, object]:
        """Application loops: per iteration, compute plus its slowest flow, and the loop's
        completion time (the sum; None when an iteration did not finish)."""
        phase = self.workload.phase
        if phase is None:
            return {}
        times = iteration_times_ps(phase, np.asarray(self.flows["finish_ps"]))
        done = times[np.isfinite(times)]
        finished = len(done) == len(times)
        return {
            "iterations": len(times),
            "iterations_finished": len(done),
            "iteration_time": _stats_us(done),
            "completion_us": float(np.sum(times)) / 1e6 if finished else None,
        }

    def write_flows_csv(self, path: str | Path, host_names: list[str] | None = None) -> None:
        # Imported where a file is written: a run that writes none skips its import.
        from pathlib import Path

        fct = self.fct_ps()
        names = host_names or [str(i) for i in range(self.n_hosts)]
        with Path(path).open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(
                [
                    "flow", "src", "dst", "size_bytes", "start_us", "finish_us", "fct_us",
                    "sender_done_us", "layers", "trims", "drops", "retransmits", "spurious",
                    "packets_sent",
                ]
            )  # fmt: skip
            f = self.flows
            for i in range(self.workload.n_flows):
                finish = int(f["finish_ps"][i])
                done = int(f["sender_done_ps"][i])
                w.writerow(
                    [
                        i,
                        names[int(self.workload.src[i])],
                        names[int(self.workload.dst[i])],
                        int(self.workload.size[i]),
                        f"{self.workload.start_ps[i] / 1e6:.6f}",
                        f"{finish / 1e6:.6f}" if finish >= 0 else "",
                        f"{fct[i] / 1e6:.6f}" if np.isfinite(fct[i]) else "",
                        f"{done / 1e6:.6f}" if done >= 0 else "",
                        layer_list(int(f["layers_used"][i])),
                        int(f["trims"][i]),
                        int(f["drops"][i]),
                        int(f["retransmits"][i]),
                        int(f["spurious"][i]),
                        int(f["packets_sent"][i]),
                    ]
                )

    def write_summary_json(self, path: str | Path) -> None:
        from pathlib import Path

        Path(path).write_text(
            json.dumps(self.summary(), indent=2, default=_json_default) + "\n", encoding="utf-8"
        )


def _json_default(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
