"""Names of everything a lab creates: unique to the lab so `down` can never hit a stranger."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fatpaths_cfg.ifnames import kernel_ifname

__all__ = ["HOST_UPLINK", "IFNAMSIZ", "kernel_ifname", "lab_id"]

IFNAMSIZ = 15
HOST_UPLINK = "eth0"
RUNTIME_ROOT = Path("/run/fatpaths-lab")


def lab_id(fabric_name: str, out: Path) -> str:
    """Short hash of fabric and output directory: two labs of one fabric never share names."""
    key = f"{fabric_name}\0{out.resolve()}".encode()
    return hashlib.sha1(key).hexdigest()[:6]


def switch_netns(lab: str, index: int) -> str:
    return f"fp-{lab}-s{index}"


def host_netns(lab: str, index: int) -> str:
    return f"fp-{lab}-h{index}"


def mgmt_netns(lab: str) -> str:
    return f"fp-{lab}-mgmt"
