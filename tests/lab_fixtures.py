"""Shared helpers of the lab tests: compile an inventory exactly as a user would, fail (never
skip) on a missing prerequisite, and tear a lab down leaving no namespace behind."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fatpaths_cfg import api
from fatpaths_cfg.lab.frr import frr_available
from fatpaths_cfg.lab.lifecycle import down
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import build_plan


def has_rendered_configs(out: Path) -> bool:
    return (out / "configs" / "frr").is_dir() and (out / "hosts").is_dir()


def compiled_lab_output(inventory: Path, out: Path) -> Path:
    api.compile_to_directory(inventory, out)
    assert has_rendered_configs(out), "compile wrote no frr configs or host plans"
    return out


def require_lab(mptcp: bool = False) -> None:
    """A missing prerequisite fails the test instead of skipping it: `.ci/run` installs FRR
    and runs as root, so a skip would only hide a broken CI machine."""
    assert os.geteuid() == 0, "the lab needs root (deselect with -m 'not lab')"
    assert frr_available(), "FRR is not installed (apt-get install frr)"
    if mptcp:
        assert Path("/proc/sys/net/mptcp/enabled").exists(), "this kernel has no MPTCP"


@contextmanager
def torn_down_after(out: Path) -> Iterator[None]:
    """`lab down` OUT when the block ends, whatever happened in it, then fail if any of the
    lab's namespaces is left (removing them first, so one failure does not spoil the rest)."""
    prefix = f"fp-{build_plan(out).lab}-"
    try:
        yield
    finally:
        down(out)
        left = [ns for ns in existing_netns() if ns.startswith(prefix)]
        for ns in left:
            subprocess.run(["ip", "netns", "del", ns], check=False)
        assert not left, f"namespaces left behind: {left}"
