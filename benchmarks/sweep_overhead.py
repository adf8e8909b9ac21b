"""Per-task overhead of the sweep engine (issue 15 target: <= 50 ms per task).

200 tiny tasks (simulations of a few 1 KiB flows on a 4-switch clique) run twice in the same
run: serially in this process (the baseline: the same work with no engine) and through the
sweep engine on a LocalCluster of one single-threaded worker process, rows streamed into a
Parquet dataset as in `fatpaths sweep`. The difference per task is what the engine adds:
scheduling, pickling payloads and rows, and the dataset writes. Cluster start-up is printed
apart (paid once per sweep). A two-worker run of the same tasks is printed for reference.

    python benchmarks/sweep_overhead.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fatpaths_cfg.sweep.dataset import DatasetWriter, read_rows
from fatpaths_cfg.sweep.engine import connect, run_tasks
from fatpaths_cfg.sweep.spec import SweepPlan, load_sweep
from fatpaths_cfg.sweep.tasks import _compiled, run_task

TASKS = 200
TARGET_MS = 50.0
SWEEP = """\
sweep: overhead
topologies:
  - generate: {kind: clique, k: 3}
grid:
  layers: [1, 2]
  rho: [1.0]
seeds: [%s]
tasks:
  - simulate: {workload: permutation, size: 1KiB}
"""


def tiny_plan(directory: Path) -> SweepPlan:
    path = directory / "overhead.yaml"
    path.write_text(SWEEP % ", ".join(str(s) for s in range(1, TASKS // 2 + 1)), "utf-8")
    plan = load_sweep(path)
    assert len(plan.tasks) == TASKS, len(plan.tasks)
    return plan


def serial_seconds(plan: SweepPlan) -> float:
    run_task(plan.tasks[0].payload)  # imports, as a worker's first task pays them
    _compiled.cache_clear()
    start = time.perf_counter()
    rows = [run_task(task.payload) for task in plan.tasks]
    elapsed = time.perf_counter() - start
    assert all(row["status"] == "ok" for row in rows)
    return elapsed


def engine_seconds(plan: SweepPlan, workers: int, directory: Path) -> tuple[float, float]:
    start = time.perf_counter()
    with connect(None, workers) as (client, _):
        client.run(lambda: __import__("fatpaths_cfg.sweep.tasks"))
        client.submit(run_task, plan.tasks[0].payload, key="warm-up").result()
        startup = time.perf_counter() - start
        writer = DatasetWriter(directory)
        start = time.perf_counter()
        run_tasks(client, plan.tasks, writer.add)
        writer.flush()
        elapsed = time.perf_counter() - start
    rows = read_rows(directory)
    assert len(rows) == TASKS and all(row["status"] == "ok" for row in rows)
    return startup, elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plan = tiny_plan(Path(tmp))
        serial = serial_seconds(plan)
        startup, one = engine_seconds(plan, 1, Path(tmp) / "one")
        _, two = engine_seconds(plan, 2, Path(tmp) / "two")
    overhead_ms = (one - serial) / TASKS * 1000
    print(f"{TASKS} tiny tasks (4-switch clique, 1 KiB permutation simulations)")
    for label, seconds in (
        ("baseline, serial in-process:", serial),
        ("engine, 1 local worker process:", one),
        ("engine, 2 local worker processes:", two),
    ):
        print(f"  {label:36} {seconds:6.2f} s  {seconds / TASKS * 1000:6.1f} ms/task")
    print(f"  {'cluster start-up (once per sweep):':36} {startup:6.2f} s")
    verdict = "ok" if overhead_ms <= TARGET_MS else "OVER TARGET"
    print(
        f"engine overhead per task: {overhead_ms:.1f} ms (target <= {TARGET_MS:.0f} ms): {verdict}"
    )


if __name__ == "__main__":
    main()
