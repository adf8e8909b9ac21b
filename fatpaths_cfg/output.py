"""Atomic, deterministic output: build everything in a temporary directory, then swap it in.

A failed run therefore leaves an earlier output untouched, and files whose bytes did not change
keep their old modification time (so downstream tools such as rsync or make see no change).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

# zip entries carry a timestamp; a fixed one makes .npz files byte-identical across runs.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def dumps_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def _records(value: Any, depth: int, pad: str) -> str:
    inner = pad + "  "
    if isinstance(value, dict) and value and depth < 2:
        items = [f"{inner}{json.dumps(k)}: {_records(v, depth + 1, inner)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if (isinstance(value, list) and value and depth < 3
            and isinstance(value[0], dict | list)):
        return "[\n" + ",\n".join(inner + _compact(v) for v in value) + f"\n{pad}]"
    return _compact(value)


def dumps_json_records(data: Any) -> str:
    """JSON with one line per record (switch, link, host, layer, ...).

    `indent=` makes the json module fall back to its pure-Python encoder, which needs tens of
    seconds for a 76,000-host fabric; encoding each record compactly keeps the C encoder and
    still gives a file that diffs and greps one record per line.
    """
    return _records(data, 0, "") + "\n"


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            payload = io.BytesIO()
            np.lib.format.write_array(
                payload, np.ascontiguousarray(arrays[name]), allow_pickle=False
            )
            zf.writestr(
                info, payload.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1
            )
    return buffer.getvalue()


class OutputTree:
    """Files to be written under one output directory, kept in memory until `commit`."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def add_text(self, relative: str, text: str) -> None:
        self.add_bytes(relative, text.encode("utf-8"))

    def add_bytes(self, relative: str, data: bytes) -> None:
        if relative.startswith("/") or ".." in Path(relative).parts:
            raise ValueError(f"output path escapes the output directory: {relative}")
        self.files[relative] = data

    def add_json(self, relative: str, data: Any) -> None:
        self.add_text(relative, dumps_json(data))

    def add_json_records(self, relative: str, data: Any) -> None:
        self.add_text(relative, dumps_json_records(data))

    @property
    def total_bytes(self) -> int:
        return sum(len(d) for d in self.files.values())

    def commit(self, target: Path) -> tuple[int, int]:
        """Write into `target` atomically; returns (files written, files unchanged)."""
        target = target.resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the output is meant to be shared
        unchanged = 0
        try:
            for relative in sorted(self.files):
                data = self.files[relative]
                path = staging / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                old = target / relative
                if old.is_file() and old.stat().st_size == len(data) and old.read_bytes() == data:
                    shutil.copy2(old, path)
                    unchanged += 1
                else:
                    path.write_bytes(data)
            _swap_in(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return len(self.files) - unchanged, unchanged


def _swap_in(staging: Path, target: Path) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    os.rename(target, retired / "previous")
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(retired / "previous", target)
        raise
    finally:
        shutil.rmtree(retired, ignore_errors=True)
