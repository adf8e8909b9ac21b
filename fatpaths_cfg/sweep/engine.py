"""Running sweep tasks on Dask distributed: a LocalCluster sized to the machine, or an
existing cluster named by its scheduler address.

Dask does the scheduling, and the recovery when a worker dies (its tasks run again on the
others); this module only submits the tasks and hands each row on as it arrives.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sweep.spec import SweepTask
from fatpaths_cfg.sweep.tasks import failed_row, run_task

if TYPE_CHECKING:
    from distributed import Client

RowHook = Callable[[dict[str, Any]], None]
KEY_PREFIX = "fatpaths-sweep-"


def machine_cores() -> int:
    """Cores this process may run on (a container's or taskset's share, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@contextmanager
def connect(scheduler: str | None, workers: int | None = None) -> Iterator[tuple[Client, str]]:
    """A client of the named cluster, or of a LocalCluster started (and stopped) here.

    Local workers are processes with one thread each: the LP solver and numpy hold the GIL
    for parts of a task, so threads would not use the cores.
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: not an address
            raise UserErrors.single(
                "--scheduler",
                "",
                f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                "start one with `dask scheduler` and workers with `dask worker ADDRESS`",
            ) from None
        try:
            count = len(client.scheduler_info(n_workers=-1)["workers"])
            yield client, f"cluster {scheduler} ({count} workers)"
        finally:
            client.close()
        return
    count = workers or machine_cores()
    with _workers_ignore_ctrl_c():
        cluster = LocalCluster(
            n_workers=count,
            threads_per_worker=1,
            processes=True,
            # A free port: a fixed one would collide with another cluster on the machine.
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )
    client = Client(cluster)
    try:
        yield client, f"local cluster ({count} worker processes)"
    finally:
        client.close()
        cluster.close()


@contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Ctrl-C reaches every process of the terminal's group: local workers, started while
    SIGINT is ignored, inherit that and leave the shutdown to this process, instead of each
    printing its own KeyboardInterrupt traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_tasks(client: Client, tasks: list[SweepTask], on_row: RowHook) -> None:
    """Submit every task and call `on_row` with each row as it completes, in completion
    order. A task Dask gives up on (its workers kept dying) becomes an error row."""
    from distributed import as_completed

    if not tasks:
        return
    by_key = {KEY_PREFIX + task.key: task for task in tasks}
    futures = client.map(run_task, [task.payload for task in tasks], key=list(by_key))
    waits: dict[str, int] = {}
    try:
        finished = as_completed(futures)
        for future in finished:
            task = by_key[future.key]
            row = _row_of(future, task)
            if row is None and waits.get(future.key, 0) < MAX_RESULT_WAITS:
                # Its result was on a worker that died before we fetched it: Dask computes
                # it again, because this client still wants it.
                waits[future.key] = waits.get(future.key, 0) + 1
                finished.add(future)
                continue
            future.release()
            on_row(row or failed_row(task.payload, f"result lost {MAX_RESULT_WAITS} times"))
    finally:
        # An interrupted sweep leaves nothing running on a shared cluster.
        client.cancel([future for future in futures if not future.done()])


# How often one task's result may be lost with its worker before the task counts as failed.
MAX_RESULT_WAITS = 5


def _row_of(future: Any, task: SweepTask) -> dict[str, Any] | None:
    """The task's row, an error row if Dask gave up on it, or None while it is recomputed."""
    if future.status == "error":
        error = future.exception()
        return failed_row(task.payload, f"{type(error).__name__}: {error}")
    if future.status == "cancelled":
        return failed_row(task.payload, "cancelled on the cluster")
    if future.status != "finished":
        return None
    try:
        row: dict[str, Any] = future.result(timeout=RESULT_TIMEOUT_S)
    except Exception:
        if future.status == "error":
            return _row_of(future, task)
        return None
    return row


# Fetching a finished result is a transfer, not a computation: long waits mean its worker is
# gone, and the result will come again once recomputed.
RESULT_TIMEOUT_S = 60
