"""The sweep's results: one Parquet dataset (a folder of part files), one row per task.

Rows arrive one at a time from the cluster and are written in small batches, each batch a new
part file that appears whole (written aside, then renamed), so an interrupted sweep leaves
every finished batch readable and loses at most the rows of the batch in flight.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fatpaths_cfg.sweep.tasks import COLUMNS

_ARROW_TYPES = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
SCHEMA = pa.schema([pa.field(name, _ARROW_TYPES[kind]) for name, kind in COLUMNS.items()])
PART_GLOB = "part-*.parquet"


class DatasetWriter:
    """Appends rows to the dataset in `directory`, a batch per part file."""

    def __init__(
        self,
        directory: Path,
        batch_rows: int = 64,
        batch_seconds: float = 2.0,
        on_part: Callable[[Path], None] | None = None,
    ) -> None:
        self.directory = directory
        # Told of each part file just before it is renamed into place (the results folder
        # lists it as its own).
        self.on_part = on_part
        self.batch_rows = batch_rows
        self.batch_seconds = batch_seconds
        self._rows: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        # Part names sort in write order across runs (a later row of a key wins on reading)
        # and never repeat, even for two runs within one second of one process.
        self._run = f"{time.time_ns():020d}-{os.getpid()}"
        self._parts = 0

    def add(self, row: dict[str, Any]) -> None:
        self._rows.append(row)
        due = time.monotonic() - self._last_flush >= self.batch_seconds
        if len(self._rows) >= self.batch_rows or due:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(self._rows, schema=SCHEMA)
        name = f"part-{self._run}-{self._parts:05d}.parquet"
        staging = self.directory / f".{name}.tmp"
        pq.write_table(table, staging)
        if self.on_part is not None:
            # Listed before it appears: an interrupt in between leaves a name listed for a
            # file that is not there (harmless), never a file of ours that looks foreign.
            self.on_part(self.directory / name)
        os.replace(staging, self.directory / name)
        self._parts += 1
        self._rows = []


def read_rows(directory: Path) -> list[dict[str, Any]]:
    """Every task's row, one per key, sorted by key. A key written twice (a failed task run
    again) keeps its latest row."""
    latest: dict[str, dict[str, Any]] = {}
    for part in sorted(directory.glob(PART_GLOB)):
        for row in pq.read_table(part, schema=SCHEMA).to_pylist():
            latest[row["key"]] = row
    return [latest[key] for key in sorted(latest)]


def read_table(directory: Path) -> pa.Table:
    """The rows of `read_rows` as one Arrow table (for plots and for users' own analysis)."""
    return pa.Table.from_pylist(read_rows(directory), schema=SCHEMA)


def finished_keys(directory: Path, include_failed: bool = True) -> set[str]:
    """Keys of the tasks the dataset holds (those that succeeded, unless `include_failed`)."""
    status: dict[str, str] = {}
    for part in sorted(directory.glob(PART_GLOB)) if directory.is_dir() else []:
        table = pq.read_table(part, columns=["key", "status"])
        status.update(zip(table["key"].to_pylist(), table["status"].to_pylist(), strict=True))
    return {key for key, state in status.items() if include_failed or state == "ok"}
