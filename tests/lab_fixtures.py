"""Shared helpers of the lab tests: compile an inventory exactly as a user would."""

from __future__ import annotations

from pathlib import Path

from fatpaths_cfg import api


def has_rendered_configs(out: Path) -> bool:
    return (out / "configs" / "frr").is_dir() and (out / "hosts").is_dir()


def compiled_lab_output(inventory: Path, out: Path) -> Path:
    api.compile_to_directory(inventory, out)
    assert has_rendered_configs(out), "compile wrote no frr configs or host plans"
    return out
