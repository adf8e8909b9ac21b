"""Where a `simulate` run writes: a directory of its own, so runs never overwrite or mix.

By default a run goes to OUT/sim/<schemes>-<transport>-<workload>-seed<seed>. The directory
keeps the run's parameters in run.json: the same command again replaces its own results, a run
that differs in any other option (--mtu, --queue, ...) takes the next free `-2`, `-3`, ... An
explicit `-o DIR` is used as given, but only when it is new, empty or an earlier run's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from fatpaths_cfg.errors import UserErrors

from .run import LOAD_BALANCING

RUN_FILE = "run.json"
# Everything a run writes, at its top and in its per-scheme folders (with --compare).
RESULT_FILES = ("flows.csv", "summary.json", "fct_cdf.png", "fct_vs_size.png", RUN_FILE)

Parameters = dict[str, object]


def run_name(
    schemes: list[str],
    transport: str,
    workload: str,
    size: str | None,
    arrival_rate: float | None,
    seed: int,
) -> str:
    """`fatpaths-ndp-permutation-1MB-seed1`; `ecmp+fatpaths-...` for a comparison."""
    parts = ["+".join(schemes), transport, workload]
    if size is not None:
        parts.append(size)
    if arrival_rate is not None:
        parts.append(f"lambda{arrival_rate:g}")
    parts.append(f"seed{seed}")
    return re.sub(r"[^A-Za-z0-9._+=-]", "_", "-".join(parts))


def _recorded(folder: Path) -> Parameters | None:
    try:
        data = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _is_run(folder: Path) -> bool:
    return (folder / RUN_FILE).is_file()


def default_run_directory(sim_root: Path, name: str, parameters: Parameters) -> Path:
    """OUT/sim/NAME, or NAME-2, NAME-3, ... when NAME holds a run with other parameters."""
    candidate, suffix = sim_root / name, 1
    while candidate.exists() and _recorded(candidate) != parameters:
        suffix += 1
        candidate = sim_root / f"{name}-{suffix}"
    return candidate


def check_explicit_directory(folder: Path) -> None:
    """-o DIR: refuse a directory holding anything but an earlier run (its files would mix)."""
    if folder.exists() and not folder.is_dir():
        raise UserErrors.single(folder, "", "-o names a file", "give a directory")
    if folder.is_dir() and any(folder.iterdir()) and not _is_run(folder):
        raise UserErrors.single(
            folder,
            "",
            "-o names a directory that is not empty and holds no earlier simulate run",
            "give a new or empty directory, so results do not mix with other files",
        )


def prepare_run_directory(folder: Path, parameters: Parameters) -> None:
    """Empty `folder` of an earlier run's results and record this run's parameters."""
    _remove_results(folder)
    for scheme in LOAD_BALANCING:
        sub = folder / scheme
        if sub.is_dir():
            _remove_results(sub)
            if not any(sub.iterdir()):
                sub.rmdir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUN_FILE).write_text(json.dumps(parameters, indent=2) + "\n", encoding="utf-8")


def _remove_results(folder: Path) -> None:
    for name in RESULT_FILES:
        (folder / name).unlink(missing_ok=True)
