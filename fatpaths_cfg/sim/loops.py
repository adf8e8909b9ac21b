"""Application loops: a workload's flows repeated as iterations separated by barriers.

The FatPaths paper's Figure 17 runs "a stencil workload that is representative of an HPC
application, in which processes conduct local computation, communicate, and synchronize with a
barrier", and reports its full completion time. `application_loop` builds that from one wave of
a pattern's flows (each host's halo messages to its peers): every iteration each host computes
for `compute_ps`, then sends the wave's flows; the next iteration's computation starts once
every flow of this one has reached its receiver. The engine holds iteration k's flows until the
last flow of iteration k - 1 finished and starts them `compute_ps` later (phases, in the native
core). The barrier is ideal: it sends no messages and takes no time of its own.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .workloads import Workload, WorkloadError

FloatArray = npt.NDArray[np.float64]


def application_loop(wave: Workload, iterations: int, compute_ps: int) -> Workload:
    """`iterations` copies of `wave` (flows at time zero, none chained), iteration k's flows
    after iteration k - 1's, each starting `compute_ps` after the barrier that ends the one
    before (the first: `compute_ps` after time zero)."""
    if iterations < 1:
        raise WorkloadError(f"iterations {iterations} must be at least 1")
    if compute_ps < 0:
        raise WorkloadError(f"compute time {compute_ps} ps must not be negative")
    if wave.after is not None or wave.phase is not None or np.any(wave.start_ps != 0):
        raise WorkloadError("an application loop repeats one wave of flows starting together")
    n = wave.n_flows
    return Workload(
        src=np.tile(wave.src, iterations),
        dst=np.tile(wave.dst, iterations),
        size=np.tile(wave.size, iterations),
        start_ps=np.full(n * iterations, compute_ps, dtype=np.int64),
        phase=np.repeat(np.arange(iterations, dtype=np.int32), n),
        description={**wave.description, "iterations": iterations, "compute_ps": compute_ps},
    )


def iteration_times_ps(
    phase: npt.NDArray[np.int32], finish_ps: npt.NDArray[np.int64]
) -> FloatArray:
    """Per iteration, from the barrier that began it (time zero for the first) to the barrier
    that ends it: its compute time plus its slowest flow. NaN from the first iteration with an
    unfinished flow on (its end, and so every later start, is unknown)."""
    count = int(phase.max()) + 1 if len(phase) else 0
    finish = np.asarray(finish_ps, dtype=np.float64)
    finish = np.where(finish < 0, np.nan, finish)
    ends = np.full(count, np.nan)
    for k in range(count):
        mine = finish[phase == k]
        ends[k] = np.nan if np.any(np.isnan(mine)) else float(mine.max())
    # An unfinished iteration leaves every later barrier unknown.
    ends[np.maximum.accumulate(np.isnan(ends))] = np.nan
    return np.diff(np.concatenate([[0.0], ends]))
