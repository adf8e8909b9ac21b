"""How long `fatpaths verify` takes on a large fabric: Slim Fly q=19 (722 switches), 9 layers,
that is 9 * 722 * 721 = 4.7 M (layer, source, destination) walks over 4.7 M rendered routes.

Target: <= 60 s for the whole verify (read every config back, check, walk, deadlock, PFC).

    python benchmarks/verify_slimfly.py [--q 19] [--layers 9] [--platform frr] [--out DIR]

The compile is timed separately and skipped when --out already holds a compiled fabric.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from fatpaths_cfg import api
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS
from fatpaths_cfg.verify.run import verify_output


def compile_fabric(q: int, layers: int, platform: str, out: Path) -> float:
    inventory = out.parent / f"slimfly-q{q}.yaml"
    inventory.write_text(
        f"fabric: slimfly-q{q}\n"
        f"generate: {{kind: slimfly, q: {q}}}\n"
        f"routing: {{layers: {layers}, rho: 0.6, algorithm: random, seed: 1}}\n",
        encoding="utf-8",
    )
    started = time.perf_counter()
    compiled = api.compile_fabric(inventory)
    api.build_output(compiled, platforms=[platform]).commit(out)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, default=19)
    parser.add_argument("--layers", type=int, default=9)
    parser.add_argument("--platform", default=DEFAULT_PLATFORM, choices=list(PLATFORMS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch) / "out"
        if not (out / "fabric.json").is_file():
            out.mkdir(parents=True, exist_ok=True)
            seconds = compile_fabric(args.q, args.layers, args.platform, out)
            print(f"compile (not part of the figure): {seconds:.1f} s")
        started = time.perf_counter()
        report = verify_output(out, [args.platform])
        total = time.perf_counter() - started
    check = report.checks[0]
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in check.seconds.items())
    print(
        f"verify slimfly q={args.q}, {args.layers} layers, {args.platform}: {check.walks:,} walks, "
        f"{check.routes:,} routes, {len(check.findings)} findings"
    )
    print(f"  forwarding: {parts}")
    print(f"  deadlock + pfc: {report.seconds.get('deadlock', 0.0):.1f} s")
    print(f"total verify: {total:.1f} s (target <= 60 s): {'OK' if total <= 60 else 'TOO SLOW'}")


if __name__ == "__main__":
    main()
