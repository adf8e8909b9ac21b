"""Lab scale: Slim Fly q=5 (50 switches, 200 hosts, 4 layers) up <= 90 s, `lab test` <= 120 s
on the namespace engine; up and tested <= 300 s on containerlab.

Run as root: `python3 benchmarks/lab_slimfly_q5.py [OUT] [--engine netns|clab|both]`. Compiles
the inventory, brings the lab up, tests every (switch, switch, layer) triple, brings it down,
prints the figures and exits non-zero if a budget is missed, a probe failed or anything was left
behind. `--engine both` runs the two engines one after the other and prints them side by side
(clab needs a Docker engine, containerlab and the images of `fatpaths lab image`).
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
# containerlab: deploy, attach, routes and `lab test` together.
CLAB_BUDGET_S = 300.0


def run_engine(out: Path, engine: str) -> tuple[bool, str]:
    plan = build_plan(out)
    prefix = f"fp-{plan.lab}-"
    began = time.monotonic()
    try:
        summary = up(out, lambda text: print(f"  {engine} up: {text}", flush=True), engine)
        tested = time.monotonic()
        report = run_lab_test(plan, [])
        test_s = time.monotonic() - tested
    finally:
        downed = time.monotonic()
        down(out)
        down_s = time.monotonic() - downed
    total = summary.seconds + test_s
    left = [ns for ns in existing_netns() if ns.startswith(prefix)]
    working, pairs = report.pairs_with_a_working_layer()
    print(
        f"[{engine}] slimfly q=5: {summary.switches} switches, {summary.hosts} hosts, "
        f"{len(plan.layer_ids)} layers, {summary.veths} links, {summary.daemons} daemons "
        f"(wall {time.monotonic() - began:.1f} s)"
    )
    budget = "" if engine == "clab" else f" (budget {UP_BUDGET_S:.0f} s)"
    print(f"[{engine}] lab up:   {summary.seconds:6.1f} s{budget} {summary.timings}")
    print(
        f"[{engine}] lab test: {test_s:6.1f} s: {len(report.pings)} pings, "
        f"{len(report.failures)} failed, {len(report.traces)} traceroutes, "
        f"{len(report.trace_failures)} mismatched, pairs with a working layer {working}/{pairs}"
    )
    print(f"[{engine}] lab down: {down_s:6.1f} s, namespaces left: {len(left)}")
    line = f"{engine:5}  up {summary.seconds:6.1f} s  test {test_s:5.1f} s  down {down_s:5.1f} s"
    if engine == "clab":
        ok = total <= CLAB_BUDGET_S
        line += f"  up+test {total:6.1f} s (budget {CLAB_BUDGET_S:.0f} s)"
    else:
        ok = summary.seconds <= UP_BUDGET_S and test_s <= TEST_BUDGET_S
        line += f"  up+test {total:6.1f} s"
    return ok and report.ok and not left, line


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--engine")]
    engine = "netns"
    for i, arg in enumerate(sys.argv[1:], 1):
        if arg.startswith("--engine="):
            engine = arg.split("=", 1)[1]
        elif arg == "--engine" and i + 1 < len(sys.argv):
            engine = sys.argv[i + 1]
            args.remove(engine)
    out = Path(args[0]) if args else Path(tempfile.mkdtemp()) / "sfq5"
    api.compile_to_directory(REPO / "inventories" / "slimfly-q5.yaml", out)
    engines = ["netns", "clab"] if engine == "both" else [engine]
    results = [run_engine(out, e) for e in engines]
    print("slimfly q=5, side by side:")
    for _, line in results:
        print(f"  {line}")
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
