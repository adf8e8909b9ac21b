"""A real Dask cluster for the sweep tests: `dask scheduler` and `dask worker` processes on
127.0.0.1, started and stopped by the test that needs them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DaskCluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def kill_worker(self, index: int) -> None:
        """SIGKILL, as a crashed or preempted machine: no goodbye to the scheduler."""
        self.workers[index].send_signal(signal.SIGKILL)
        self.workers[index].wait(timeout=30)


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    # Workers import this checkout's fatpaths_cfg, as a cluster's machines import theirs.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


@contextmanager
def dask_cluster(logs: Path, workers: int = 2) -> Iterator[DaskCluster]:
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _spawn(
        ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        logs / "scheduler.log",
    )
    cluster = DaskCluster(address, scheduler)
    try:
        for i in range(workers):
            cluster.workers.append(
                _spawn(
                    [
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        f"w{i}",
                    ],
                    logs / f"worker-{i}.log",
                )
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(workers, timeout=START_TIMEOUT_S)
                break
            except OSError:
                if time.monotonic() > deadline or scheduler.poll() is not None:
                    raise
                time.sleep(0.5)
        yield cluster
    finally:
        for process in [*cluster.workers, scheduler]:
            _stop(process)
