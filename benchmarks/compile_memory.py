"""Compile memory: the estimate `compile` checks before building a fabric (see
`fatpaths_cfg.compile_budget`) beside the peak RSS and CPU time of real compiles, so the
constants can be checked again on another machine or after the compiler changes.

Each size is a generated Slim Fly (or `--kind jellyfish -p nr=N -p k=K`), compiled by the CLI in
a fresh process with `-j 1` into a temporary directory; its peak RSS and CPU time come from the
kernel's accounting of the child (`resource.getrusage(RUSAGE_CHILDREN)`). Printed one line per
size: switches, links, hosts, layers, estimated and measured MiB and their ratio, estimated and
measured CPU-s.

    python benchmarks/compile_memory.py [--q 5 13 23 29] [--layers 4]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from fatpaths_cfg.compile_budget import CompileSize


def compile_once(inventory: Path, out: Path) -> tuple[float, float]:
    """(peak RSS in MiB, CPU seconds) of one compile in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "fatpaths_cfg.cli", "compile", str(inventory)]
    subprocess.run([*command, "-o", str(out), "-j", "1"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # ru_maxrss of the children is the largest of any child so far: run sizes in rising order.
    return after.ru_maxrss / 1024, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, nargs="+", default=[5, 13, 23, 29])
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    print("q switches links hosts layers est_MiB peak_MiB ratio est_cpu_s cpu_s")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for q in sorted(args.q):
            inventory = root / f"sf{q}.yaml"
            inventory.write_text(
                f"fabric: sf{q}\ngenerate: {{kind: slimfly, q: {q}}}\n"
                f"routing: {{layers: {args.layers}}}\n"
            )
            out = root / f"out{q}"
            peak, cpu = compile_once(inventory, out)
            fabric = json.loads((out / "fabric.json").read_text())
            size = CompileSize(
                len(fabric["switches"]), len(fabric["links"]), len(fabric["hosts"]), args.layers
            )
            estimate = size.memory_bytes() / 2**20
            print(
                f"{q} {size.switches} {size.links} {size.hosts} {size.layers} {estimate:.0f} "
                f"{peak:.0f} {estimate / peak:.2f} {size.cpu_seconds():.1f} {cpu:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
