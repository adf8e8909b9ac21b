"""Kernel interface names for inventory port names (frr, linux and the lab use the same rule).

Outside the render package so that checking a fabric's port names does not import it.
"""

from __future__ import annotations

import hashlib

IFNAMSIZ = 15  # Linux interface names hold at most 15 characters


def kernel_ifname(port: str) -> str:
    """`Ethernet1/1` -> `Ethernet1_1`; names over 15 characters keep a prefix and a hash."""
    name = port.replace("/", "_")
    if len(name) <= IFNAMSIZ:
        return name
    # Truncation alone could map two ports to one name; the hash of the full port keeps them apart.
    return f"{name[:10]}_{hashlib.sha1(port.encode('utf-8')).hexdigest()[:4]}"


def all_kernel_names_unchanged(ports: list[str]) -> bool:
    """Whether `kernel_ifname` keeps every one of `ports` as it is: one pass in C over the
    40k ports of a large fabric instead of a call each."""
    return "/" not in "".join(ports) and max(map(len, ports), default=0) <= IFNAMSIZ
