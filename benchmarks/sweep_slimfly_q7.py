"""A 48-point sweep of Slim Fly q=7 analyses, end to end (issue 15 target: <= 3 minutes on
2 cores).

Slim Fly q=7 (98 switches, 588 hosts): layers {2, 3, 4, 6, 8, 9} x rho {0.4, 0.5, 0.6, 0.7}
x seeds {1, 2}, each point compiled in memory and analysed (path diversity over 200 sampled
pairs, MAT LP under permutation traffic), on a LocalCluster sized to the machine, rows
streamed into a Parquet dataset, then the summary and plots written: `fatpaths sweep` as a
user runs it. The baseline in the same run is the same 48 tasks run one after the other in
this process: what the sweep takes without the engine, on one core.

    python benchmarks/sweep_slimfly_q7.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fatpaths_cfg.sweep.dataset import read_rows
from fatpaths_cfg.sweep.engine import machine_cores
from fatpaths_cfg.sweep.spec import load_sweep
from fatpaths_cfg.sweep.tasks import run_task

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 180.0
SWEEP = """\
sweep: slimfly-q7-grid
topologies:
  - generate: {kind: slimfly, q: 7}
routing: {algorithm: random}
grid:
  layers: [2, 3, 4, 6, 8, 9]
  rho: [0.4, 0.5, 0.6, 0.7]
seeds: [1, 2]
tasks:
  - analyze: {traffic: permutation, pairs: 200}
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "q7.yaml"
        sweep.write_text(SWEEP, encoding="utf-8")
        plan = load_sweep(sweep)
        assert len(plan.tasks) == 48, len(plan.tasks)
        start = time.perf_counter()
        for task in plan.tasks:
            assert run_task(task.payload)["status"] == "ok"
        serial = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "fatpaths_cfg.cli", "sweep", str(sweep), "-o", f"{tmp}/out"],
            cwd=REPO,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - start
        plots = len(list(Path(tmp, "out").glob("*.png")))
        in_tasks = sum(row["seconds"] for row in read_rows(Path(tmp, "out", "results.parquet")))
    print(f"Slim Fly q=7, 48 analyses (MAT LP + diversity), {machine_cores()} cores")
    print(f"  baseline, serial in one process:          {serial:6.1f} s")
    print(f"  fatpaths sweep, LocalCluster, end to end: {wall:6.1f} s ({plots} plots)")
    print(f"  time inside the 48 tasks on the workers:  {in_tasks:6.1f} s (summed)")
    verdict = "ok" if wall <= TARGET_S else "OVER TARGET"
    print(f"48-point grid: {wall:.1f} s (target <= {TARGET_S:.0f} s): {verdict}")


if __name__ == "__main__":
    main()
