"""Write docs/getting-started.md by running its commands in an empty directory: the outputs on
the page are what the commands printed, not typed. The lab steps need root (network
namespaces) and FRR; without them the page says so where their output would be.

    python docs/tutorial.py            # rerun every step, rewrite the page
    python docs/tutorial.py --check    # rerun the steps that need no root; exit 1 when what
                                       # they print differs from the page (times aside)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
PLACE = "~/fabric"

STEPS: list[tuple[str, str, bool]] = [
    # (what the step is for, the command, needs root)
    (
        "Describe the fabric. A generator writes the wiring of a 18-switch Slim Fly (q=3) out "
        "switch by switch and cable by cable, as you would for your own fabric:",
        "fatpaths topo generate slimfly -p q=3 -o slimfly-q3.yaml",
        False,
    ),
    (
        "Compile it: layers, forwarding tables, addresses, a config per switch and a plan per "
        "host (4 layers at rho 0.6 unless the inventory's `routing:` says otherwise):",
        "fatpaths compile slimfly-q3.yaml -o out/sf3",
        False,
    ),
    ("What the compile built, per layer:", "head -8 out/sf3/report.md", False),
    (
        "Prove the rendered configs right: every switch's routes are parsed back from its "
        "files and every (layer, switch pair) walked; no loop, no blackhole, every path "
        "shortest inside its layer:",
        "fatpaths verify out/sf3",
        False,
    ),
    (
        "Run it on real Linux forwarding: a network namespace per switch with FRR and per "
        "host, cabled as compiled (root and FRR needed):",
        "fatpaths lab up out/sf3",
        True,
    ),
    (
        "Ping every (switch pair, layer) and trace the paths against the compiled ones:",
        "fatpaths lab test out/sf3",
        True,
    ),
    ("Take the lab down; it leaves nothing behind:", "fatpaths lab down out/sf3", True),
    (
        "Simulate a permutation of 1 MB flows on the compiled routing, FatPaths' layers "
        "against ECMP:",
        "fatpaths simulate out/sf3 -w permutation --size 1MB --compare fatpaths,ecmp -o runs/perm",
        False,
    ),
    (
        "Change the fabric: remove one cable from the inventory, and see what the change "
        "does before it goes anywhere (`--keep-layers` keeps everything else where it was):",
        "sed -i '/^- a: sf-0-0-0:Ethernet1$/,+1d' slimfly-q3.yaml && "
        "fatpaths plan out/sf3 slimfly-q3.yaml --keep-layers",
        False,
    ),
]


def run(command: str, cwd: Path) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    result = subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    text = (result.stdout + result.stderr).replace(str(cwd), PLACE)
    if result.returncode not in (0, 1):
        raise SystemExit(f"{command}: exit {result.returncode}\n{text}")
    return text.rstrip()


# What changes from run to run: durations and the simulator's CPU seconds (last column).
VARYING = re.compile(r"\d+(\.\d+)? ?s\b|\d+\.\d+ │$", re.M)


def steady(text: str) -> str:
    return VARYING.sub("…", text)


def check() -> None:
    """The page's outputs of the steps that need no root, against a rerun."""
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="fatpaths-tutorial-") as scratch:
        cwd = Path(scratch)
        stale = []
        for _, command, needs_root in STEPS:
            if needs_root:
                continue
            block = f"$ {command}\n{run(command, cwd)}\n```"
            if steady(block) not in steady(page):
                stale.append(command)
    if stale:
        print(
            f"stale output of: {'; '.join(stale)} (run: python docs/tutorial.py)", file=sys.stderr
        )
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    if parser.parse_args().check:
        check()
        return
    from fatpaths_cfg.lab.frr import frr_available

    root = os.geteuid() == 0 and frr_available()
    lines = [
        "# Getting started",
        "",
        "From an empty directory to a verified fabric in the lab and a first simulation. Every",
        "output below was printed by the command above it (`python docs/tutorial.py` runs them",
        "again and rewrites this page). Install first, from a clone of the repository:",
        "",
        "```sh",
        "bash .ci/install && . .venv/bin/activate",
        "mkdir ~/fabric && cd ~/fabric",
        "```",
        "",
    ]
    with tempfile.TemporaryDirectory(prefix="fatpaths-tutorial-") as scratch:
        cwd = Path(scratch)
        for purpose, command, needs_root in STEPS:
            lines += [purpose, "", "```console", f"$ {command}"]
            if needs_root and not root:
                lines += ["(not run here: this step needs root and FRR)"]
            else:
                lines += [run(command, cwd)]
            lines += ["```", ""]
    lines += [
        "Where next: [the guide](guide/compile.md) for every command, [changing a fabric]"
        "(changing.md) for `plan` and `--keep-layers`, [deploy](guide/deploy.md) for pushing "
        "the configs to switches in loop-free rounds.",
        "",
    ]
    (DOCS / "getting-started.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {DOCS / 'getting-started.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
