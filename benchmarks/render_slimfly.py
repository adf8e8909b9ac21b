"""Render speed: Slim Fly q=19 (722 switches, 10,830 hosts) with 9 layers, one platform.

Compiles, renders every switch config and host plan plus the Batfish snapshot, and writes the
output directory; prints seconds per stage and the bytes written. Target: <= 30 s on 2 cores.

    python benchmarks/render_slimfly.py [--q 19] [--layers 9] [--platform frr] [--out DIR]
                                        [--no-batfish]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from fatpaths_cfg import api
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS


def inventory_text(q: int, layers: int, platform: str) -> str:
    # A generator spec: the wiring is built in memory, not parsed from a 10k-link YAML file.
    return (
        f"fabric: slimfly-q{q}\n"
        f"defaults: {{platform: {platform}, link_speed: 100G}}\n"
        f"generate: {{kind: slimfly, q: {q}}}\n"
        f"routing: {{layers: {layers}, rho: 0.6, seed: 1}}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, default=19)
    parser.add_argument("--layers", type=int, default=9)
    parser.add_argument("--platform", default=DEFAULT_PLATFORM, choices=list(PLATFORMS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--no-batfish", action="store_true", help="leave out the snapshot (compile's default)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fatpaths-bench-"))
    try:
        inventory = work / f"slimfly-q{args.q}.yaml"
        inventory.write_text(inventory_text(args.q, args.layers, args.platform), encoding="utf-8")
        out = args.out or work / "out"
        start = time.perf_counter()
        compiled = api.compile_fabric(inventory)
        compiled_at = time.perf_counter()
        tree = api.build_output(compiled, platforms=[args.platform], batfish=not args.no_batfish)
        rendered_at = time.perf_counter()
        written, unchanged = tree.commit(out)
        done = time.perf_counter()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    fabric = compiled.fabric
    routes = sum(compiled.route_counts)
    print(
        f"Slim Fly q={args.q}: {fabric.nr} switches, {len(fabric.hosts)} hosts, "
        f"{len(compiled.layers)} layers, {routes:,} layer routes, platform {args.platform}"
    )
    print(f"compile  {compiled_at - start:6.2f} s")
    print(f"render   {rendered_at - compiled_at:6.2f} s")
    print(f"write    {done - rendered_at:6.2f} s  ({written} files written, {unchanged} unchanged)")
    print(f"total    {done - start:6.2f} s  {tree.total_bytes:,} bytes")


if __name__ == "__main__":
    main()
