"""Where a `simulate` run writes: a directory of its own, so runs never overwrite or mix.

By default a run goes to OUT/sim/<schemes>-<transport>-<workload>-seed<seed>. The directory
keeps the run's parameters in run.json: the same command again replaces its own results, a run
that differs in any other option (--mtu, --queue, ...) takes the next free `-2`, `-3`, ...

A run directory is written like every fatpaths output (see `output`): staged beside its place
and swapped in whole, with a marker listing its files. A directory is replaced only when that
marker says a simulate run wrote it and it holds nothing else: a user's folder that happens to
hold a run.json is theirs (an explicit `-o DIR` refuses it, unless --force; a default place
moves on to the next free name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.output import StagedOutput, check_output_target

if TYPE_CHECKING:
    from .results import SimResult

RUN_FILE = "run.json"
# The command named in the marker of a run directory.
RUN_KIND = "simulate"

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


def _same_run(folder: Path, parameters: Parameters) -> bool:
    """`folder` is an earlier simulate run of exactly these parameters, and nothing else."""
    try:
        check_output_target(folder, RUN_KIND)
    except UserErrors:
        return False
    return _recorded(folder) == parameters


def default_run_directory(sim_root: Path, name: str, parameters: Parameters) -> Path:
    """OUT/sim/NAME, or NAME-2, NAME-3, ... when NAME holds anything but an earlier run with
    these parameters (another run's results, or files fatpaths did not write)."""
    candidate, suffix = sim_root / name, 1
    while candidate.exists() and not _same_run(candidate, parameters):
        suffix += 1
        candidate = sim_root / f"{name}-{suffix}"
    return candidate


def check_run_directory(folder: Path, protected: Sequence[Path], force: bool) -> None:
    """-o DIR: new, empty, or an earlier simulate run holding only what it wrote (else its
    files would mix with the results, or be replaced by them), unless --force."""
    check_output_target(folder, RUN_KIND, protected, force)


def write_run_directory(
    folder: Path,
    parameters: Parameters,
    results: Mapping[str, SimResult],
    host_names: list[str],
    plot: bool,
    protected: Sequence[Path] = (),
    force: bool = False,
) -> bool:
    """Write run.json, each scheme's flows.csv and summary.json (in a folder per scheme when
    several ran) and, with `plot`, the figures; swap the whole in as `folder`. Returns whether
    fct_vs_size.png was drawn (it is not when every flow has the same size)."""
    with StagedOutput(folder, RUN_KIND, protected, force) as staged:
        staged.add_text(RUN_FILE, json.dumps(parameters, indent=2) + "\n")
        for scheme, result in results.items():
            prefix = f"{scheme}/" if len(results) > 1 else ""
            flows = partial(result.write_flows_csv, host_names=host_names)
            staged.add_written(f"{prefix}flows.csv", flows)
            staged.add_written(f"{prefix}summary.json", result.write_summary_json)
        by_size = True
        if plot:
            # Imported here: matplotlib's import costs several times a small run's simulation.
            from .plots import plot_fct_cdf, plot_fct_vs_size

            staged.add_written("fct_cdf.png", partial(plot_fct_cdf, results))
            by_size = staged.add_written("fct_vs_size.png", partial(plot_fct_vs_size, results))
        staged.commit()
    return by_size
