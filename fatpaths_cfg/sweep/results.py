"""A sweep's results folder: the Parquet dataset, the plots and summary, sweep.json naming the
sweep, and the output marker listing every file fatpaths wrote there (a sweep appends to the
folder, so it must never be someone else's)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.output import check_output_target, output_manifest, record_written

MARKER = "sweep.json"
MARKER_KIND = "fatpaths sweep results"
# The kind in the folder's output marker (.fatpaths-output), which lists the files it holds;
# sweep.json says which sweep the rows belong to.
SWEEP_KIND = "sweep"


@dataclass(frozen=True)
class ResultsFolder:
    directory: Path

    @property
    def dataset(self) -> Path:
        return self.directory / "results.parquet"

    @property
    def marker(self) -> Path:
        return self.directory / MARKER


def default_results(sweep_name: str) -> Path:
    return Path("out") / "sweeps" / sweep_name


# Files a sweep writes at the top of its folder besides sweep.json (plots are named by it).
_LEGACY_NAMES = re.compile(r"summary\.md|[a-z0-9_-]+\.png|results\.parquet/part-[0-9-]+\.parquet")


def check_results_folder(
    directory: Path, sweep_name: str, protected: Sequence[Path] = (), force: bool = False
) -> ResultsFolder:
    """A folder a sweep may append to: absent, empty, or an earlier run of the same sweep
    whose marker lists every file in it (the rule of every fatpaths output; --force takes a
    foreign folder, whose files a sweep never removes)."""
    folder = ResultsFolder(directory)
    # The nearest part of the path that exists must be a folder to create the rest in
    # (-o notes.txt/sub crashed in mkdir once the sweep had run).
    existing = next((p for p in directory.parents if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UserErrors.single(
            directory, "", f"{existing} is a file, not a folder", "choose another -o"
        )
    check_output_target(directory, SWEEP_KIND, protected, force, _unmarked(folder), appends=True)
    marker = _read_marker(folder)
    if marker is not None and marker.get("sweep") != sweep_name:
        raise UserErrors.single(
            directory,
            "",
            f"holds the results of sweep {marker.get('sweep')!r}, not {sweep_name!r}",
            "give each sweep its own folder with -o",
        )
    return folder


def _unmarked(folder: ResultsFolder) -> frozenset[str]:
    """A results folder of a version before output markers: its sweep.json names it, and the
    files such a version wrote count as the sweep's own."""
    if output_manifest(folder.directory) is not None or _read_marker(folder) is None:
        return frozenset()
    names = {MARKER}
    for path in folder.directory.rglob("*"):
        relative = path.relative_to(folder.directory).as_posix()
        if path.is_file() and _LEGACY_NAMES.fullmatch(relative):
            names.add(relative)
    return frozenset(names)


def claim_results_folder(folder: ResultsFolder, sweep_name: str, sweep_file: str) -> None:
    folder.directory.mkdir(parents=True, exist_ok=True)
    # Listed first, written second (see record_written).
    record_written(folder.directory, SWEEP_KIND, {MARKER, *_unmarked(folder)})
    if not folder.marker.is_file():
        marker = {"kind": MARKER_KIND, "sweep": sweep_name, "sweep_file": sweep_file}
        folder.marker.write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def record_files(folder: ResultsFolder, paths: Iterable[Path]) -> None:
    """List files written into the folder in its output marker."""
    names = [path.relative_to(folder.directory).as_posix() for path in paths]
    record_written(folder.directory, SWEEP_KIND, names)


def _read_marker(folder: ResultsFolder) -> dict[str, Any] | None:
    try:
        data = json.loads(folder.marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("kind") == MARKER_KIND else None


def write_if_changed(path: Path, content: bytes) -> bool:
    """Rewrite a plot or summary only when its bytes differ, so a resumed sweep that computed
    nothing leaves the folder as it was."""
    if path.is_file() and path.read_bytes() == content:
        return False
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_bytes(content)
    staging.replace(path)
    return True
