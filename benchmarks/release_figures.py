"""The release figures (issue 16) in one run, each beside the previous release's, as a ratio.

Every figure is a `fatpaths` command run in a fresh process, timed from outside (wall seconds,
CPU seconds and peak resident memory of the child). The previous release runs from a git ref,
extracted into a temporary directory; its native extension is the one of this checkout when
`native/` did not change since, and otherwise a wheel of the ref is built into a temporary
virtual environment. Runs of the two are interleaved and repeated; medians are printed.

    python benchmarks/release_figures.py [--ref REF [--ref-native SO]] [--repeat 3] [--big]
                                         [--only WORD;...]

--big adds the Slim Fly q=37 compile (minutes; each run keeps its 3.3 GB output until the end).
Targets are those of a quiet 2-core machine; on a busy one the ratio is the figure to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NATIVE_SO = "fatpaths_cfg/_native.abi3.so"
MB = 1 << 20


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float  # user and kernel
    peak_mb: float
    kernel: float  # of `cpu`: on this disk, mostly creating files


@dataclass(frozen=True)
class Figure:
    """One command line to time; `setup` prepares its inputs once per checkout."""

    name: str
    args: Callable[[Path], list[str]]
    metric: str  # "wall", "cpu" or "wall+peak"
    target_s: float
    target_mb: float | None = None
    big: bool = False


@dataclass
class Checkout:
    label: str
    root: Path
    python: str
    work: Path
    samples: dict[str, list[Sample]] = field(default_factory=dict)


def run_timed(checkout: Checkout, args: list[str]) -> Sample:
    """Run `python -m fatpaths_cfg.cli ARGS` from `checkout`, measured as a child process."""
    # An installed package has its bytecode cached; a shell with PYTHONDONTWRITEBYTECODE would
    # recompile every module in every run and time the compiler instead.
    env = {**os.environ, "PYTHONPATH": str(checkout.root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    process = subprocess.Popen(
        [checkout.python, "-m", "fatpaths_cfg.cli", *args],
        cwd=checkout.work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    sampler = TreeMemory(process.pid)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    tree_peak = sampler.stop()
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise RuntimeError(f"{checkout.label}: fatpaths {' '.join(args)} failed:\n{errors}")
    # ru_maxrss (KiB) is the largest single process; with forked workers the sum over the
    # processes is the memory the command takes, so the larger of the two is reported.
    peak = max(usage.ru_maxrss * 1024, tree_peak)
    return Sample(wall, usage.ru_utime + usage.ru_stime, peak / MB, usage.ru_stime)


class TreeMemory:
    """The peak, sampled, of the proportional set sizes (PSS) summed over a process and its
    descendants: pages shared copy-on-write by forked workers count once in the sum."""

    INTERVAL_S = 0.1

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return self.peak

    def _sample(self) -> None:
        while not self.done.wait(self.INTERVAL_S):
            self.peak = max(self.peak, sum(_pss(pid) for pid in _descendants(self.pid)))


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        queue.extend(int(child) for child in children)
    return found


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def extract_ref(ref: str, into: Path, native: Path | None = None) -> Path:
    """The tree of `ref` in a directory, with a native extension that matches it: `native`
    when given (an extension built from that ref), else this checkout's when `native/` did not
    change since, else one built from a wheel of the ref."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref],
        check=True,
        capture_output=True,
    ).stdout
    root = into / "previous"
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    if native is not None:
        shutil.copy2(native, root / NATIVE_SO)
        return root
    unchanged = subprocess.run(
        ["git", "-C", str(REPO), "diff", "--quiet", ref, "HEAD", "--", "native/"], check=False
    )
    if unchanged.returncode == 0 and (REPO / NATIVE_SO).is_file():
        shutil.copy2(REPO / NATIVE_SO, root / NATIVE_SO)
        return root
    return build_wheel_venv(root, into)


def build_wheel_venv(root: Path, into: Path) -> Path:
    """Build a wheel of the extracted ref and install it into a virtual environment; the
    returned directory holds the installed package (for PYTHONPATH)."""
    venv = into / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheels = into / "wheels"
    subprocess.run(
        [str(python), "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(root)], check=True
    )
    wheel = next(wheels.glob("*.whl"))
    target = into / "installed"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
    )
    return target


def write_inputs(work: Path) -> None:
    (work / "sf19-9.yaml").write_text(
        "fabric: slimfly-q19\n"
        "generate: {kind: slimfly, q: 19}\n"
        "routing: {layers: 9, rho: 0.6, algorithm: random, seed: 1}\n",
        encoding="utf-8",
    )
    (work / "sf37-9.yaml").write_text(
        "fabric: slimfly-q37\n"
        "generate: {kind: slimfly, q: 37}\n"
        "routing: {layers: 9, rho: 0.6, algorithm: random, seed: 1}\n",
        encoding="utf-8",
    )
    # 32 hosts send 1 MB each to host 0 at once (a 32-to-1 incast on the q=5 Slim Fly).
    lines = ["Nodes 200", "Connections 32"]
    lines += [f"{src}->0 id {src} start 0 size 1000000" for src in range(1, 33)]
    (work / "incast32.cm").write_text("\n".join(lines) + "\n", encoding="ascii")


def prepare(checkout: Checkout, names: set[str]) -> None:
    """The inputs the chosen figures read: the wiring inventory of q=19, compiled outputs."""
    write_inputs(checkout.work)
    if "topo show q=19" in names:
        wiring = ["topo", "generate", "slimfly", "-p", "q=19", "-o", "sf19-wiring.yaml"]
        run_timed(checkout, wiring)
    if "verify q=19, 9 layers" in names:
        run_timed(checkout, ["compile", "sf19-9.yaml", "-o", "out19"])
    if "32-to-1 incast simulation" in names:
        q5 = str(REPO / "inventories" / "slimfly-q5.yaml")
        run_timed(checkout, ["compile", q5, "-o", "out5"])


FIGURES = [
    Figure(
        "compile q=19, 9 layers",
        lambda w: ["compile", "sf19-9.yaml", "-o", fresh_directory(w, "c19")],
        "wall",
        5,
    ),
    Figure(
        "compile q=37, 9 layers",
        lambda w: ["compile", "sf37-9.yaml", "-o", fresh_directory(w, "c37")],
        "wall+peak",
        40,
        4096,
        big=True,
    ),
    Figure("topo show q=19", lambda w: ["topo", "show", "sf19-wiring.yaml"], "wall", 1),
    Figure(
        "topo generate slimfly q=19",
        lambda w: ["topo", "generate", "slimfly", "-p", "q=19", "-o", "gen19.yaml", "--force"],
        "wall",
        1,
    ),
    Figure("verify q=19, 9 layers", lambda w: ["verify", "out19"], "wall+peak", 5, 1024),
    Figure("fatpaths --help", lambda w: ["--help"], "wall", 0.3),
    Figure(
        "32-to-1 incast simulation",
        lambda w: ["simulate", "out5", "-w", "incast32.cm", "-o", "sim-incast"],
        "cpu",
        0.3,
    ),
]


def fresh_directory(work: Path, stem: str) -> str:
    """A compile output directory no earlier run used. Outputs are kept until the end: on an
    ext4 without a journal, a file created within minutes of thousands of deletions nearby
    costs up to half a millisecond, as the inode allocator steps over each recently freed
    inode, so the previous run's deletion would be timed inside this one."""
    runs = sum(1 for _ in work.glob(f"{stem}-*"))
    return f"{stem}-{runs + 1}"


def clean(checkout: Checkout) -> None:
    shutil.rmtree(checkout.work / "sim-incast", ignore_errors=True)
    shutil.rmtree(checkout.work / "out19" / "verify", ignore_errors=True)
    # What the deletions leave to the file system (online discard of the freed blocks) is
    # done before the next command, not inside its timing.
    os.sync()


def value(samples: list[Sample], metric: str) -> tuple[float, float]:
    seconds = statistics.median(s.cpu if metric == "cpu" else s.wall for s in samples)
    return seconds, statistics.median(s.peak_mb for s in samples)


def cpu(samples: list[Sample]) -> float:
    return statistics.median(s.cpu for s in samples)


def show(figures: list[Figure], before: Checkout, after: Checkout) -> None:
    print(f"\n| figure | {before.label} | now | ratio | target | met |\n|---|---|---|---|---|---|")
    for figure in figures:
        if figure.name not in after.samples:
            print(f"| {figure.name} | not run | not run | | <= {figure.target_s:g} s | |")
            continue
        unit = "CPU-s" if figure.metric == "cpu" else "s"
        new_s, new_mb = value(after.samples[figure.name], figure.metric)
        old = before.samples.get(figure.name)
        old_s, old_mb = value(old, figure.metric) if old else (float("nan"), float("nan"))
        met = new_s <= figure.target_s
        target = f"<= {figure.target_s:g} {unit}"
        old_text, new_text = f"{old_s:.2f} {unit}", f"{new_s:.2f} {unit}"
        if figure.metric != "cpu":
            # On a shared machine wall time is mostly waiting; CPU time says what the code costs.
            old_text += f" ({cpu(old):.2f} CPU-s)" if old else ""
            new_text += f" ({cpu(after.samples[figure.name]):.2f} CPU-s)"
        if figure.target_mb is not None:
            met = met and new_mb <= figure.target_mb
            target += f", <= {figure.target_mb / 1024:g} GB"
            old_text += f", {old_mb:,.0f} MB"
            new_text += f", {new_mb:,.0f} MB"
        ratio = f"x{old_s / new_s:.1f}" if old else ""
        print(
            f"| {figure.name} | {old_text} | {new_text} | {ratio} | {target} | "
            f"{'yes' if met else 'NO'} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref", default=None, help="git ref of the previous release (none: no ratios)"
    )
    parser.add_argument(
        "--ref-native",
        type=Path,
        default=None,
        help="native extension (.so) built from REF, used instead of building a wheel of it",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="include the q=37 compile")
    parser.add_argument(
        "--only",
        default=None,
        help="';'-separated words; a figure runs when its name contains one (e.g. 'verify;help')",
    )
    args = parser.parse_args()
    figures = [f for f in FIGURES if args.big or not f.big]
    if args.only:
        # Figure names contain commas ("compile q=19, 9 layers"): match words, not names.
        wanted = [word.strip() for word in args.only.split(";") if word.strip()]
        figures = [f for f in figures if any(word in f.name for word in wanted)]
        if not figures:
            parser.error(f"--only {args.only!r} matches none of: {[f.name for f in FIGURES]}")
    with tempfile.TemporaryDirectory(prefix="fatpaths-figures-") as scratch:
        base = Path(scratch)
        checkouts = [Checkout("now", REPO, sys.executable, base / "now")]
        if args.ref:
            root = extract_ref(args.ref, base, args.ref_native)
            checkouts.insert(0, Checkout(args.ref, root, sys.executable, base / "before"))
        for checkout in checkouts:
            checkout.work.mkdir()
            prepare(checkout, {f.name for f in figures})
        for round_number in range(args.repeat):
            for figure in figures:
                for checkout in checkouts:
                    clean(checkout)
                    sample = run_timed(checkout, figure.args(checkout.work))
                    checkout.samples.setdefault(figure.name, []).append(sample)
                    print(
                        f"[{round_number + 1}/{args.repeat}] {checkout.label:>10}  "
                        f"{figure.name}: {sample.wall:.2f} s wall, {sample.cpu:.2f} CPU-s "
                        f"({sample.kernel:.2f} in the kernel), "
                        f"{sample.peak_mb:,.0f} MB",
                        flush=True,
                    )
        before = checkouts[0] if args.ref else Checkout("previous", REPO, "", base)
        show(FIGURES if args.big else figures, before, checkouts[-1])


if __name__ == "__main__":
    main()
