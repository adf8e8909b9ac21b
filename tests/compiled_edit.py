"""Edits of a compiled output that tests make on purpose (a switch's management address, a
platform): the edited fabric.json is written with its checksum recorded as compile records it,
so the loader reads the edit instead of refusing the output as damaged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fatpaths_cfg.compiled import CHECKSUMMED, CHECKSUMS
from fatpaths_cfg.compiled.read import checksums_text, sha256_hex


def rewrite_fabric_json(out: Path, data: Any) -> None:
    (out / "fabric.json").write_text(json.dumps(data), encoding="utf-8")
    record_checksums(out)


def record_checksums(out: Path) -> None:
    digests = {name: sha256_hex((out / name).read_bytes()) for name in CHECKSUMMED}
    (out / CHECKSUMS).write_text(checksums_text(digests), encoding="utf-8")
