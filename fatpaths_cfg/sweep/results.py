"""A sweep's results folder: the Parquet dataset, the plots and summary, and the marker that
says fatpaths owns the folder (a sweep appends to it, so it must never be someone else's)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fatpaths_cfg.errors import UserErrors

MARKER = "sweep.json"
MARKER_KIND = "fatpaths sweep results"


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


def check_results_folder(directory: Path, sweep_name: str) -> ResultsFolder:
    """A folder a sweep may append to: absent, empty, or an earlier run of the same sweep."""
    folder = ResultsFolder(directory)
    if directory.exists() and not directory.is_dir():
        raise UserErrors.single(directory, "", "exists and is not a folder", "choose another -o")
    # The nearest part of the path that exists must be a folder to create the rest in
    # (-o notes.txt/sub crashed in mkdir once the sweep had run).
    existing = next((p for p in directory.parents if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UserErrors.single(
            directory, "", f"{existing} is a file, not a folder", "choose another -o"
        )
    if not directory.exists() or not any(directory.iterdir()):
        return folder
    marker = _read_marker(folder)
    if marker is None:
        raise UserErrors.single(
            directory,
            "",
            "is not empty and holds no sweep results of fatpaths",
            "choose an empty or new folder with -o",
        )
    if marker.get("sweep") != sweep_name:
        raise UserErrors.single(
            directory,
            "",
            f"holds the results of sweep {marker.get('sweep')!r}, not {sweep_name!r}",
            "give each sweep its own folder with -o",
        )
    return folder


def claim_results_folder(folder: ResultsFolder, sweep_name: str, sweep_file: str) -> None:
    folder.directory.mkdir(parents=True, exist_ok=True)
    if not folder.marker.is_file():
        marker = {"kind": MARKER_KIND, "sweep": sweep_name, "sweep_file": sweep_file}
        folder.marker.write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


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
