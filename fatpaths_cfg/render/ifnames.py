"""Kernel interface names for inventory port names, as the renderers use them."""

from __future__ import annotations

from fatpaths_cfg.ifnames import IFNAMSIZ, kernel_ifname

__all__ = ["IFNAMSIZ", "kernel_ifname"]
