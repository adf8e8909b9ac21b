"""Lab scale: Slim Fly q=5 (50 switches, 200 hosts, 4 layers) up <= 90 s, `lab test` <= 120 s.

Run as root: `python3 benchmarks/lab_slimfly_q5.py [OUT]`. Compiles the inventory, brings the
lab up, tests every (switch, switch, layer) triple, brings it down, prints the figures and exits
non-zero if a budget is missed, a probe failed or anything was left behind.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from fatpaths_cfg import api
from fatpaths_cfg.lab.lifecycle import down, up
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.probe import run_lab_test

REPO = Path(__file__).resolve().parent.parent
UP_BUDGET_S = 90.0
TEST_BUDGET_S = 120.0


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "sfq5"
    api.compile_to_directory(REPO / "inventories" / "slimfly-q5.yaml", out)
    plan = build_plan(out)
    prefix = f"fp-{plan.lab}-"
    try:
        summary = up(out, lambda text: print(f"  up: {text}", flush=True))
        began = time.monotonic()
        report = run_lab_test(plan, [])
        test_s = time.monotonic() - began
    finally:
        down(out)
    left = [ns for ns in existing_netns() if ns.startswith(prefix)]
    working, pairs = report.pairs_with_a_working_layer()
    print(
        f"slimfly q=5: {summary.switches} switches, {summary.hosts} hosts, "
        f"{len(plan.layer_ids)} layers, {summary.veths} veth pairs, {summary.daemons} daemons"
    )
    print(f"lab up:   {summary.seconds:6.1f} s (budget {UP_BUDGET_S:.0f} s) {summary.timings}")
    print(
        f"lab test: {test_s:6.1f} s (budget {TEST_BUDGET_S:.0f} s): {len(report.pings)} pings, "
        f"{len(report.failures)} failed, {len(report.traces)} traceroutes, "
        f"{len(report.trace_failures)} mismatched, pairs with a working layer {working}/{pairs}"
    )
    print(f"namespaces left: {len(left)}")
    ok = summary.seconds <= UP_BUDGET_S and test_s <= TEST_BUDGET_S and report.ok and not left
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
